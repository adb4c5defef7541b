package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/campaign"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
)

// CampaignEvents is what a store keeps for campaigns, with the event log their
// campaign.completed goes to.
type CampaignEvents interface {
	campaign.Store
	ListEvents(ctx context.Context, accountID, typ string, q listing.Query) ([]callevent.Event, error)
}

// RunCampaigns runs the campaign cases, each against a fresh store from newStore.
func RunCampaigns(t *testing.T, newStore func(t *testing.T) CampaignEvents) {
	for name, c := range campaignCases {
		t.Run(name, func(t *testing.T) { c(t, newStore(t)) })
	}
}

var campaignCases = map[string]func(*testing.T, CampaignEvents){
	"create get list round trip":                                     campaignRoundTrip,
	"a campaign write is conditional and carries its event":          campaignConditional,
	"only active campaigns are the runner's":                         campaignActive,
	"a claim is conditional on the recipient and a running campaign": campaignClaim,
	"recipients page in list order, by status, and count":            campaignRecipients,
	"an upload past the list's end is unseen until taken in":         campaignUpload,
}

func newCampaign(accountID string, n int) (campaign.Campaign, []campaign.Recipient) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	c := campaign.Campaign{ID: ident.New(campaign.IDPrefix), AccountID: accountID, Name: "Reminders", AssistantID: ident.New("asst"),
		LineID: ident.New("line"), Platform: "sim", Status: campaign.StatusDraft, Recipients: n, CreatedAt: now,
		Settings: campaign.Settings{MaxConcurrentCalls: 2, CallsPerSecond: 1, Retry: campaign.Retry{MaxAttempts: 2, On: []string{"busy"}}}}
	rs := make([]campaign.Recipient, n)
	for i := range rs {
		rs[i] = campaign.Recipient{ID: ident.New(campaign.RecipientIDPrefix), CampaignID: c.ID, AccountID: accountID,
			PlatformHandle: "sim:r" + string(rune('a'+i%26)), Status: campaign.RecipientPending,
			Variables: map[string]string{"first_name": "Ada"}}
	}
	return c, rs
}

func campaignRoundTrip(t *testing.T, s CampaignEvents) {
	acct := ident.New("acct")
	a, ars := newCampaign(acct, 3)
	b, brs := newCampaign(acct, 1)
	for _, x := range []struct {
		c  campaign.Campaign
		rs []campaign.Recipient
	}{{a, ars}, {b, brs}} {
		if err := s.CreateCampaign(ctx(t), x.c, x.rs); err != nil {
			t.Fatalf("create: %v", err)
		}
	}
	if err := s.CreateCampaign(ctx(t), a, nil); !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("create with an existing id = %v, want ErrConflict", err)
	}
	got, err := s.GetCampaign(ctx(t), a.ID)
	if err != nil || got.Revision != 1 || got.Name != a.Name || got.Recipients != 3 || got.Settings.Retry.MaxAttempts != 2 {
		t.Fatalf("get = %+v, %v; want the created campaign at revision 1", got, err)
	}
	if _, err := s.GetCampaign(ctx(t), ident.New(campaign.IDPrefix)); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("get unknown = %v, want ErrNotFound", err)
	}
	list, err := s.ListCampaigns(ctx(t), acct, campaign.ListQuery{Query: listing.Query{Limit: 10}})
	if err != nil || len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID {
		t.Fatalf("list = %v, %v; want b then a", list, err)
	}
	got.Status = campaign.StatusRunning
	if err := s.UpdateCampaign(ctx(t), got, nil); err != nil {
		t.Fatal(err)
	}
	list, err = s.ListCampaigns(ctx(t), acct, campaign.ListQuery{Query: listing.Query{Limit: 10}, Status: campaign.StatusRunning})
	if err != nil || len(list) != 1 || list[0].ID != a.ID {
		t.Errorf("list status=running = %v, %v; want a only", list, err)
	}
	r, err := s.GetRecipient(ctx(t), a.ID, ars[1].ID)
	if err != nil || r.Revision != 1 || r.Variables["first_name"] != "Ada" || r.Status != campaign.RecipientPending {
		t.Errorf("get recipient = %+v, %v", r, err)
	}
}

func campaignConditional(t *testing.T, s CampaignEvents) {
	acct := ident.New("acct")
	c, rs := newCampaign(acct, 1)
	if err := s.CreateCampaign(ctx(t), c, rs); err != nil {
		t.Fatal(err)
	}
	c, _ = s.GetCampaign(ctx(t), c.ID)
	stale := c
	c.Status = campaign.StatusCompleted
	evt := callevent.Event{ID: ident.New("evt"), AccountID: acct, Type: callevent.TypeCampaignCompleted, CreatedAt: time.Now().UTC(),
		Data: json.RawMessage(`{"campaign_id":"` + c.ID + `"}`)}
	if err := s.UpdateCampaign(ctx(t), c, []callevent.Event{evt}); err != nil {
		t.Fatal(err)
	}
	stale.Status = campaign.StatusCanceled
	evt2 := evt
	evt2.ID = ident.New("evt")
	if err := s.UpdateCampaign(ctx(t), stale, []callevent.Event{evt2}); !errors.Is(err, apierr.ErrConflict) {
		t.Fatalf("stale update = %v, want ErrConflict", err)
	}
	got, _ := s.GetCampaign(ctx(t), c.ID)
	if got.Status != campaign.StatusCompleted || got.Revision != 2 {
		t.Errorf("after a stale write: %s at %d, want completed at 2", got.Status, got.Revision)
	}
	evs, err := s.ListEvents(ctx(t), acct, callevent.TypeCampaignCompleted, listing.Query{Limit: 10})
	if err != nil || len(evs) != 1 || evs[0].ID != evt.ID {
		t.Errorf("events = %v, %v; want the one write's event only", evs, err)
	}
}

func campaignActive(t *testing.T, s CampaignEvents) {
	acct := ident.New("acct")
	var ids []string
	for i := range 3 {
		c, rs := newCampaign(acct, 1)
		c.Active = i != 1
		if err := s.CreateCampaign(ctx(t), c, rs); err != nil {
			t.Fatal(err)
		}
		if c.Active {
			ids = append(ids, c.ID)
		}
	}
	all, err := s.ActiveCampaigns(ctx(t), "", 100)
	if err != nil {
		t.Fatal(err)
	}
	var mine []campaign.Campaign
	for _, c := range all {
		if c.AccountID == acct {
			mine = append(mine, c)
		}
	}
	if len(mine) != 2 || mine[0].ID != ids[0] || mine[1].ID != ids[1] {
		t.Fatalf("active = %v, want %v by id", mine, ids)
	}
	mine[0].Active = false
	if err := s.UpdateCampaign(ctx(t), mine[0], nil); err != nil {
		t.Fatal(err)
	}
	all, _ = s.ActiveCampaigns(ctx(t), mine[0].ID, 100)
	for _, c := range all {
		if c.ID == mine[0].ID {
			t.Errorf("a campaign made inactive is still listed")
		}
	}
}

func campaignClaim(t *testing.T, s CampaignEvents) {
	acct := ident.New("acct")
	c, rs := newCampaign(acct, 2)
	if err := s.CreateCampaign(ctx(t), c, rs); err != nil {
		t.Fatal(err)
	}
	r, _ := s.GetRecipient(ctx(t), c.ID, rs[0].ID)
	claim := func(r campaign.Recipient) campaign.Recipient {
		r.Status = campaign.RecipientCalling
		r.Attempts = append(r.Attempts, campaign.Attempt{CallID: ident.New("call"), ClaimedAt: time.Now().UTC()})
		return r
	}
	if err := s.ClaimRecipient(ctx(t), claim(r)); !errors.Is(err, apierr.ErrConflict) {
		t.Fatalf("claim in a draft campaign = %v, want ErrConflict", err)
	}
	c, _ = s.GetCampaign(ctx(t), c.ID)
	c.Status = campaign.StatusRunning
	if err := s.UpdateCampaign(ctx(t), c, nil); err != nil {
		t.Fatal(err)
	}
	first, second := claim(r), claim(r)
	if err := s.ClaimRecipient(ctx(t), first); err != nil {
		t.Fatalf("claim: %v", err)
	}
	if err := s.ClaimRecipient(ctx(t), second); !errors.Is(err, apierr.ErrConflict) {
		t.Fatalf("a second claim of the same revision = %v, want ErrConflict", err)
	}
	got, _ := s.GetRecipient(ctx(t), c.ID, r.ID)
	if got.Status != campaign.RecipientCalling || len(got.Attempts) != 1 || got.Attempts[0].CallID != first.Attempts[0].CallID || got.Revision != 2 {
		t.Errorf("recipient = %+v, want the first claim's attempt at revision 2", got)
	}
	c, _ = s.GetCampaign(ctx(t), c.ID)
	c.Status = campaign.StatusPaused
	if err := s.UpdateCampaign(ctx(t), c, nil); err != nil {
		t.Fatal(err)
	}
	other, _ := s.GetRecipient(ctx(t), c.ID, rs[1].ID)
	if err := s.ClaimRecipient(ctx(t), claim(other)); !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("claim in a paused campaign = %v, want ErrConflict", err)
	}
	// A plain update (a settle) is conditional on the revision only.
	got.Status = campaign.RecipientBusy
	if err := s.UpdateRecipient(ctx(t), got); err != nil {
		t.Errorf("settle in a paused campaign: %v", err)
	}
	if err := s.UpdateRecipient(ctx(t), got); !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("stale settle = %v, want ErrConflict", err)
	}
}

func campaignRecipients(t *testing.T, s CampaignEvents) {
	acct := ident.New("acct")
	c, rs := newCampaign(acct, 30)
	if err := s.CreateCampaign(ctx(t), c, rs); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i += 3 {
		r, _ := s.GetRecipient(ctx(t), c.ID, rs[i].ID)
		r.Status = campaign.RecipientAnswered
		if err := s.UpdateRecipient(ctx(t), r); err != nil {
			t.Fatal(err)
		}
	}
	var all []campaign.Recipient
	q := campaign.RecipientQuery{Limit: 7}
	for range 10 {
		page, err := s.ListRecipients(ctx(t), c.ID, q)
		if err != nil {
			t.Fatal(err)
		}
		items, more := listing.Page(page, q.Limit)
		all = append(all, items...)
		if !more {
			break
		}
		q.After = items[len(items)-1].ID
	}
	if len(all) != 30 {
		t.Fatalf("paged %d recipients, want 30", len(all))
	}
	for i, r := range all {
		if r.ID != rs[i].ID {
			t.Fatalf("recipient %d is %s, want %s: list order", i, r.ID, rs[i].ID)
		}
	}
	before, err := s.ListRecipients(ctx(t), c.ID, campaign.RecipientQuery{Before: rs[10].ID, Limit: 3})
	if err != nil || len(before) != 4 || before[0].ID != rs[6].ID || before[3].ID != rs[9].ID {
		t.Errorf("ending before the 11th = %d recipients, %v; want the 7th to the 10th in list order (one too many first)", len(before), err)
	}
	answered, err := s.ListRecipients(ctx(t), c.ID, campaign.RecipientQuery{Status: campaign.RecipientAnswered, Limit: 100})
	if err != nil || len(answered) != 10 || answered[0].ID != rs[0].ID || answered[9].ID != rs[27].ID {
		t.Errorf("status=answered = %d recipients, %v; want 10 in order", len(answered), err)
	}
	counts, err := s.RecipientCounts(ctx(t), c.ID, "")
	if err != nil || counts[campaign.RecipientAnswered] != 10 || counts[campaign.RecipientPending] != 20 || counts[campaign.RecipientCalling] != 0 {
		t.Errorf("counts = %v, %v; want 10 answered and 20 pending", counts, err)
	}
}

// campaignUpload writes recipients past a sequenced campaign's list (an upload, in more
// batches than one request takes), reads the list bounded by its end and without, writes
// the upload again over itself, and drops what is past the end.
func campaignUpload(t *testing.T, s CampaignEvents) {
	c, rs := newCampaign(ident.New("acct"), 5)
	c.Sequenced = true
	for i := range rs {
		rs[i].ID = campaign.RecipientID(c.ID, i)
	}
	if err := s.CreateCampaign(ctx(t), c, rs); err != nil {
		t.Fatal(err)
	}
	const uploaded = 60
	up := make([]campaign.Recipient, uploaded)
	for i := range up {
		up[i] = campaign.Recipient{ID: campaign.RecipientID(c.ID, 5+i), CampaignID: c.ID, AccountID: c.AccountID,
			PlatformHandle: "sim:first", Status: campaign.RecipientPending}
	}
	if err := s.PutRecipients(ctx(t), up); err != nil {
		t.Fatal(err)
	}
	for i := range up {
		up[i].PlatformHandle = "sim:again"
	}
	if err := s.PutRecipients(ctx(t), up); err != nil {
		t.Fatalf("an upload written again over itself: %v", err)
	}
	end := campaign.RecipientID(c.ID, 5)
	listed, err := s.ListRecipients(ctx(t), c.ID, campaign.RecipientQuery{End: end, Limit: 100})
	if err != nil || len(listed) != 5 || listed[4].ID != rs[4].ID {
		t.Fatalf("the list to its end = %d recipients, %v; want the 5 created", len(listed), err)
	}
	after, err := s.ListRecipients(ctx(t), c.ID, campaign.RecipientQuery{After: rs[2].ID, End: end, Limit: 100})
	if err != nil || len(after) != 2 || after[0].ID != rs[3].ID || after[1].ID != rs[4].ID {
		t.Errorf("after the 3rd, to the end = %d recipients, %v; want the 4th and 5th", len(after), err)
	}
	pending, err := s.ListRecipients(ctx(t), c.ID, campaign.RecipientQuery{Status: campaign.RecipientPending, After: rs[0].ID, End: end, Limit: 100})
	if err != nil || len(pending) != 4 {
		t.Errorf("pending after the 1st, to the end = %d recipients, %v; want 4", len(pending), err)
	}
	before, err := s.ListRecipients(ctx(t), c.ID, campaign.RecipientQuery{Before: campaign.RecipientID(c.ID, 9), End: end, Limit: 2})
	if err != nil || len(before) != 3 || before[2].ID != rs[4].ID {
		t.Errorf("before a cursor past the end = %d recipients, %v; want the 3rd to the 5th", len(before), err)
	}
	counts, err := s.RecipientCounts(ctx(t), c.ID, end)
	if err != nil || counts[campaign.RecipientPending] != 5 {
		t.Errorf("counts to the end = %v, %v; want 5 pending", counts, err)
	}
	all, err := s.ListRecipients(ctx(t), c.ID, campaign.RecipientQuery{Limit: 100})
	if err != nil || len(all) != 5+uploaded || all[5].PlatformHandle != "sim:again" {
		t.Fatalf("the whole partition = %d recipients, %v; want %d, the upload's written again", len(all), err, 5+uploaded)
	}
	if err := s.DropRecipients(ctx(t), c.ID, end); err != nil {
		t.Fatal(err)
	}
	all, err = s.ListRecipients(ctx(t), c.ID, campaign.RecipientQuery{Limit: 100})
	if err != nil || len(all) != 5 {
		t.Errorf("after the drop = %d recipients, %v; want the 5 listed", len(all), err)
	}
	counts, err = s.RecipientCounts(ctx(t), c.ID, "")
	if err != nil || counts[campaign.RecipientPending] != 5 {
		t.Errorf("counts after the drop = %v, %v; want 5 pending", counts, err)
	}
}
