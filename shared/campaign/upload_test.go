package campaign_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/campaign"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

func TestParseRecipientFile(t *testing.T) {
	csv := "\uFEFFplatform_handle, time_zone ,variables.first_name,metadata.crm_id\n" +
		"+14155550101,America/Los_Angeles,Ada,c-1\n" +
		"\n" +
		"\"+14155550102\",,,\n"
	in, where, err := campaign.ParseRecipientFile(campaign.MediaCSV, []byte(csv))
	if err != nil {
		t.Fatal(err)
	}
	if len(in) != 2 || in[0].PlatformHandle != "+14155550101" || in[0].TimeZone != "America/Los_Angeles" ||
		in[0].Variables["first_name"] != "Ada" || in[0].Metadata["crm_id"] != "c-1" ||
		in[1].PlatformHandle != "+14155550102" || in[1].Variables != nil || in[1].Metadata != nil {
		t.Errorf("CSV = %+v, want two recipients, the second with nothing but its number", in)
	}
	if where(1) != "line 4" {
		t.Errorf("the second recipient is %q, want line 4 (a blank line before it)", where(1))
	}
	jsonl := `{"platform_handle": "+14155550101", "variables": {"first_name": "Ada"}}` + "\n\n" +
		`{"platform_handle": "+14155550102", "time_zone": "Europe/Berlin", "metadata": {"k": "v"}}` + "\n"
	in, where, err = campaign.ParseRecipientFile(campaign.MediaJSONLines, []byte(jsonl))
	if err != nil {
		t.Fatal(err)
	}
	if len(in) != 2 || in[0].Variables["first_name"] != "Ada" || in[1].TimeZone != "Europe/Berlin" || in[1].Metadata["k"] != "v" || where(1) != "line 3" {
		t.Errorf("JSON Lines = %+v (second at %s), want two recipients, the second at line 3", in, where(1))
	}

	for _, c := range []struct {
		name, media, body, param, says string
	}{
		{"an empty file", campaign.MediaCSV, "", "line 1", "empty"},
		{"no platform_handle column", campaign.MediaCSV, "time_zone\nUTC\n", "line 1", "platform_handle"},
		{"an unknown column", campaign.MediaCSV, "platform_handle,phone\n+14155550101,x\n", "line 1", `column 2 is "phone"`},
		{"a column twice", campaign.MediaCSV, "platform_handle,platform_handle\n", "line 1", "twice"},
		{"a row short of a cell", campaign.MediaCSV, "platform_handle,time_zone\n+14155550101,UTC\n+14155550102\n", "line 3", "number of fields"},
		{"a line that is not an object", campaign.MediaJSONLines, `{"platform_handle": "+1"}` + "\n[1]\n", "line 2", "one JSON object"},
		{"an unknown field", campaign.MediaJSONLines, `{"platform_handle": "+1", "phone": "x"}`, "line 1", "phone"},
	} {
		_, _, err := campaign.ParseRecipientFile(c.media, []byte(c.body))
		e, ok := apierr.As(err)
		if !ok || e.Param != c.param || !strings.Contains(e.Message, c.says) {
			t.Errorf("%s: %v; want %s named, saying %q", c.name, err, c.param, c.says)
		}
	}
	if _, _, err := campaign.ParseRecipientFile("application/json", []byte(`[]`)); !apierr.Is(err, apierr.CodeUnsupportedMediaType) {
		t.Errorf("a JSON array = %v, want unsupported_media_type", err)
	}
}

// simPlatform is the sim's rules (handles, test keys) with nothing to place.
type simPlatform struct{ sim.Kind }

func (simPlatform) Dial(context.Context, platform.DialRequest) (string, error)  { return "", nil }
func (simPlatform) Answer(context.Context, string, string, platform.Room) error { return nil }
func (simPlatform) Reject(context.Context, string, string) error                { return nil }
func (simPlatform) Hangup(context.Context, string) error                        { return nil }

// draftWith stores a sequenced draft campaign on the sim with n recipients.
func draftWith(t *testing.T, st *sqlite.Store, accountID string, n int) campaign.Campaign {
	t.Helper()
	c := campaign.Campaign{ID: ident.New(campaign.IDPrefix), AccountID: accountID, AssistantID: ident.New("asst"),
		LineID: ident.New("line"), Platform: "sim", Status: campaign.StatusDraft, Recipients: n, Sequenced: true,
		CreatedAt: time.Now().UTC().Truncate(time.Millisecond),
		Settings:  campaign.Settings{MaxConcurrentCalls: 1, CallsPerSecond: 1, Retry: campaign.Retry{MaxAttempts: 1}}}
	rs := make([]campaign.Recipient, n)
	for i := range rs {
		rs[i] = campaign.Recipient{ID: campaign.RecipientID(c.ID, i), CampaignID: c.ID, AccountID: accountID,
			PlatformHandle: "sim:inline", Status: campaign.RecipientPending}
	}
	if err := st.CreateCampaign(context.Background(), c, rs); err != nil {
		t.Fatal(err)
	}
	c.Revision = 1
	return c
}

// TestUploadJoinsTheListWhole: an upload's recipients join a draft's list after the
// inline ones, all of them or none; what a failed upload wrote past the list is seen by
// no read and dropped by cancel; while an upload holds the list, another upload, start
// and cancel are refused.
func TestUploadJoinsTheListWhole(t *testing.T) {
	ctx := context.Background()
	st, acct := storeWithAccount(t)
	reg, err := platform.NewRegistry(simPlatform{})
	if err != nil {
		t.Fatal(err)
	}
	svc := &campaign.Service{Store: st, Lines: st, Assistants: st, Accounts: st, Calls: st, Platforms: reg}
	c := draftWith(t, st, acct.ID, 1)
	upload := func(file string) (campaign.Campaign, error) {
		in, where, err := campaign.ParseRecipientFile(campaign.MediaCSV, []byte(file))
		if err != nil {
			return campaign.Campaign{}, err
		}
		return svc.AddRecipients(ctx, acct.ID, c.ID, in, where)
	}
	listed := func() []campaign.Recipient {
		t.Helper()
		rs, err := svc.Recipients(ctx, acct.ID, c.ID, campaign.RecipientQuery{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}

	got, err := upload("platform_handle,variables.first_name\nsim:ada,Ada\nsim:grace,Grace\nsim:alan,Alan\n")
	if err != nil || got.Recipients != 4 || got.UploadUntil != nil {
		t.Fatalf("upload of three = %+v, %v; want 4 recipients and the lease given back", got, err)
	}
	rs := listed()
	if len(rs) != 4 || rs[0].PlatformHandle != "sim:inline" || rs[2].Variables["first_name"] != "Grace" || rs[3].ID != campaign.RecipientID(c.ID, 3) {
		t.Fatalf("list = %+v, want the inline one, then the three uploaded, in order", rs)
	}

	// A file with one bad line adds nothing.
	if _, err := upload("platform_handle,time_zone\nsim:ok,UTC\nsim:bad,Mars/Olympus\n"); !apierr.Is(err, apierr.CodeParameterInvalid) ||
		err.(*apierr.Error).Param != "line 3.time_zone" {
		t.Errorf("a bad time zone on line 3 = %v, want parameter_invalid naming line 3.time_zone", err)
	}
	if _, err := upload("platform_handle\n+1 415 555\n"); !apierr.Is(err, apierr.CodeParameterInvalid) {
		t.Errorf("a handle the sim cannot dial = %v, want parameter_invalid", err)
	}
	if n := len(listed()); n != 4 {
		t.Fatalf("%d recipients after refused uploads, want 4", n)
	}

	// An upload that stopped half way: three written past the end, the count unchanged.
	var orphans []campaign.Recipient
	for i := 4; i < 7; i++ {
		orphans = append(orphans, campaign.Recipient{ID: campaign.RecipientID(c.ID, i), CampaignID: c.ID, AccountID: acct.ID,
			PlatformHandle: "sim:orphan", Status: campaign.RecipientPending})
	}
	if err := st.PutRecipients(ctx, orphans); err != nil {
		t.Fatal(err)
	}
	counts, err := svc.Counts(ctx, got)
	if len(listed()) != 4 || err != nil || counts[campaign.RecipientPending] != 4 {
		t.Errorf("after a failed upload: %d listed, counts %v (%v); want 4: nothing past the list's end", len(listed()), counts, err)
	}

	// While its lease holds, nothing else moves the draft.
	cur, _ := st.GetCampaign(ctx, c.ID)
	until := time.Now().Add(time.Minute)
	cur.UploadUntil = &until
	if err := st.UpdateCampaign(ctx, cur, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := upload("platform_handle\nsim:x\n"); !apierr.Is(err, apierr.CodeCampaignState) {
		t.Errorf("an upload beside another = %v, want campaign_state_invalid", err)
	}
	if _, err := svc.Start(ctx, acct.ID, c.ID); !apierr.Is(err, apierr.CodeCampaignState) {
		t.Errorf("start during an upload = %v, want campaign_state_invalid", err)
	}
	if _, err := svc.Cancel(ctx, acct.ID, c.ID); !apierr.Is(err, apierr.CodeCampaignState) {
		t.Errorf("cancel during an upload = %v, want campaign_state_invalid", err)
	}
	// Once the lease ran out (its upload stopped), the next upload writes over what it left.
	cur, _ = st.GetCampaign(ctx, c.ID)
	past := time.Now().Add(-time.Second)
	cur.UploadUntil = &past
	if err := st.UpdateCampaign(ctx, cur, nil); err != nil {
		t.Fatal(err)
	}
	if got, err = upload("platform_handle\nsim:ida\n"); err != nil || got.Recipients != 5 {
		t.Fatalf("upload after a lease ran out = %+v, %v; want 5 recipients", got, err)
	}
	if rs := listed(); len(rs) != 5 || rs[4].PlatformHandle != "sim:ida" {
		t.Errorf("list = %+v, want the fifth to be the new upload's", rs)
	}

	// Cancel drops what is past the end, and cancels the list.
	if _, err := svc.Cancel(ctx, acct.ID, c.ID); err != nil {
		t.Fatal(err)
	}
	all, err := st.ListRecipients(ctx, c.ID, campaign.RecipientQuery{Limit: 100})
	if err != nil || len(all) != 5 {
		t.Fatalf("stored after cancel = %d, %v; want the 5 listed, the two past the end dropped", len(all), err)
	}
	for _, r := range all {
		if r.Status != campaign.RecipientCanceled {
			t.Errorf("recipient %s is %s after cancel, want canceled", r.ID, r.Status)
		}
	}
	// The runner takes a canceled draft up too (a long list is marked by its ticks), and
	// lets it go once nothing is left.
	if got, _ := st.GetCampaign(ctx, c.ID); !got.Active {
		t.Error("a canceled draft is not the runner's: a list longer than the request could mark would stay pending")
	}
	if err := (&campaign.Runner{Service: svc, Dialer: &dials{}}).Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetCampaign(ctx, c.ID); got.Active || got.Status != campaign.StatusCanceled {
		t.Errorf("canceled draft after a tick = %s, active %t; want canceled and no longer the runner's", got.Status, got.Active)
	}
	if _, err := upload("platform_handle\nsim:late\n"); !apierr.Is(err, apierr.CodeCampaignState) {
		t.Errorf("an upload to a canceled campaign = %v, want campaign_state_invalid", err)
	}

	// A draft with no recipient does not start; a list does not pass its bound.
	empty := draftWith(t, st, acct.ID, 0)
	if _, err := svc.Start(ctx, acct.ID, empty.ID); !apierr.Is(err, apierr.CodeCampaignState) || !strings.Contains(err.Error(), "no recipients") {
		t.Errorf("start of an empty draft = %v, want campaign_state_invalid: no recipients", err)
	}
	empty.Recipients = campaign.MaxListRecipients - 1
	if err := st.UpdateCampaign(ctx, empty, nil); err != nil {
		t.Fatal(err)
	}
	in, where, _ := campaign.ParseRecipientFile(campaign.MediaCSV, []byte("platform_handle\nsim:a\nsim:b\n"))
	if _, err := svc.AddRecipients(ctx, acct.ID, empty.ID, in, where); !apierr.Is(err, apierr.CodeParameterInvalid) {
		t.Errorf("an upload past %d recipients = %v, want parameter_invalid", campaign.MaxListRecipients, err)
	}
}
