package campaign_test

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/campaign"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// dials records the creates a runner asks for; the session path itself is exercised by
// e2e/sessions (TestCampaignRunsOnSim). Nothing is saved: each dial stays calling.
type dials struct {
	mu  sync.Mutex
	got []session.CreateRequest
}

func (d *dials) Create(_ context.Context, _ account.Caller, req session.CreateRequest) (session.Created, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.got = append(d.got, req)
	return session.Created{}, nil
}

func (d *dials) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.got)
}

// TestRunnerRepairsACrashOnce: a runner stopped between its claim and its dial (a
// calling recipient whose call was never recorded) is repaired by the next runner once:
// the attempt is settled not_placed and the recipient dialled again, once; a recipient
// whose call was recorded and ended while no runner ran is settled from the record and
// not dialled again.
func TestRunnerRepairsACrashOnce(t *testing.T) {
	ctx := context.Background()
	st, acct := storeWithAccount(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	c := campaign.Campaign{ID: ident.New(campaign.IDPrefix), AccountID: acct.ID, AssistantID: ident.New("asst"), VersionID: ident.New("ver"),
		LineID: ident.New("line"), Platform: "sim", Status: campaign.StatusRunning, Active: true, Recipients: 2, CreatedAt: now,
		Settings: campaign.Settings{MaxConcurrentCalls: 2, CallsPerSecond: 10,
			Retry: campaign.Retry{MaxAttempts: 1, On: []string{campaign.OutcomeBusy}}}}
	crashed := time.Now().Add(-2 * time.Minute)
	lost := campaign.Recipient{ID: ident.New(campaign.RecipientIDPrefix), CampaignID: c.ID, AccountID: acct.ID,
		PlatformHandle: "sim:alice", Status: campaign.RecipientCalling,
		Attempts: []campaign.Attempt{{CallID: ident.New("call"), ClaimedAt: crashed}}}
	placed := campaign.Recipient{ID: ident.New(campaign.RecipientIDPrefix), CampaignID: c.ID, AccountID: acct.ID,
		PlatformHandle: "sim:busy", Status: campaign.RecipientCalling,
		Attempts: []campaign.Attempt{{CallID: ident.New("call"), ClaimedAt: crashed}}}
	if err := st.CreateCampaign(ctx, c, []campaign.Recipient{lost, placed}); err != nil {
		t.Fatal(err)
	}
	// The placed attempt's call was recorded, and ended busy, while no runner ran.
	ended := crashed.Add(time.Second)
	cl := call.Call{ID: placed.Attempts[0].CallID, AccountID: acct.ID, Direction: call.Outbound, LineID: c.LineID, To: "sim:busy",
		Media: "audio", Status: call.StatusFailed, EndReason: call.ReasonBusy, EndedAt: &ended, StartedAt: crashed, Platform: "sim",
		HandledBy: call.HandledByAssistant, CampaignID: c.ID, RecipientID: placed.ID}
	if err := st.SaveCall(ctx, cl, nil); err != nil {
		t.Fatal(err)
	}

	d := &dials{}
	svc := &campaign.Service{Store: st, Lines: st, Assistants: st, Accounts: st, Calls: st}
	r := &campaign.Runner{Service: svc, Dialer: d}
	for range 3 {
		if err := r.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if d.count() != 1 {
		t.Fatalf("%d dials after three ticks, want 1 (the lost attempt's recipient, once)", d.count())
	}
	got, _ := st.GetRecipient(ctx, c.ID, lost.ID)
	if got.Status != campaign.RecipientCalling || len(got.Attempts) != 2 || got.Attempts[0].Outcome != campaign.OutcomeNotPlaced ||
		got.Attempts[1].CallID == lost.Attempts[0].CallID || d.got[0].PlatformHandle != "sim:alice" {
		t.Errorf("lost recipient = %+v, want its first attempt not_placed and a second under way with a new call id", got)
	}
	got, _ = st.GetRecipient(ctx, c.ID, placed.ID)
	if got.Status != campaign.RecipientBusy || len(got.Attempts) != 1 || got.Attempts[0].Outcome != campaign.OutcomeBusy {
		t.Errorf("placed recipient = %+v, want busy from its call record, with no retry (max_attempts 1)", got)
	}
	// A second runner sharing the store does not dial the claimed recipient again.
	r2 := &campaign.Runner{Service: svc, Dialer: d}
	if err := r2.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if d.count() != 1 {
		t.Errorf("a second runner dialled: %d dials", d.count())
	}
}

// TestRunnerDialsRecipientsInTheirWindow: with recipients in their own time zones, the
// window's hours are each recipient's local ones. At 20:00 UTC on a Monday, a 09:00-17:00
// window is open in Chicago (14:00) and Los Angeles (12:00), not for a recipient in the
// window's own UTC, nor in Tokyo (05:00 Tuesday).
func TestRunnerDialsRecipientsInTheirWindow(t *testing.T) {
	ctx := context.Background()
	st, acct := storeWithAccount(t)
	now := time.Date(2026, 12, 7, 20, 0, 0, 0, time.UTC) // a Monday
	c := campaign.Campaign{ID: ident.New(campaign.IDPrefix), AccountID: acct.ID, AssistantID: ident.New("asst"), VersionID: ident.New("ver"),
		LineID: ident.New("line"), Platform: "sim", Status: campaign.StatusRunning, Active: true, Recipients: 4, CreatedAt: now,
		RecipientZones: true,
		Settings: campaign.Settings{MaxConcurrentCalls: 4, CallsPerSecond: 10, Retry: campaign.Retry{MaxAttempts: 1},
			Window: &campaign.Window{TimeZone: "UTC", Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "09:00", End: "17:00"}}}
	var rs []campaign.Recipient
	for _, zone := range []string{"", "America/Chicago", "Asia/Tokyo", "America/Los_Angeles"} {
		rs = append(rs, campaign.Recipient{ID: ident.New(campaign.RecipientIDPrefix), CampaignID: c.ID, AccountID: acct.ID,
			PlatformHandle: "sim:" + zone, TimeZone: zone, Status: campaign.RecipientPending})
	}
	if err := st.CreateCampaign(ctx, c, rs); err != nil {
		t.Fatal(err)
	}
	d := &dials{}
	r := &campaign.Runner{Service: &campaign.Service{Store: st, Lines: st, Assistants: st, Accounts: st, Calls: st,
		Now: func() time.Time { return now }}, Dialer: d}
	if err := r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, req := range d.got {
		got = append(got, req.PlatformHandle)
	}
	slices.Sort(got)
	if want := []string{"sim:America/Chicago", "sim:America/Los_Angeles"}; !slices.Equal(got, want) {
		t.Errorf("dialled %q at 20:00 UTC, want %q: the recipients whose 09:00-17:00 it is", got, want)
	}
}

// storeWithAccount is a fresh SQLite store holding one account.
func storeWithAccount(t *testing.T) (*sqlite.Store, account.Account) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "test.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	acct, _, err := (&account.Service{Store: st, Now: time.Now}).Create(context.Background(), "Test Co", false)
	if err != nil {
		t.Fatal(err)
	}
	return st, acct
}

// TestRunnerWaitsForTheWindow: started a minute before its window opens, a campaign dials
// nobody until the window's first minute, then dials up to its concurrency.
func TestRunnerWaitsForTheWindow(t *testing.T) {
	ctx := context.Background()
	st, acct := storeWithAccount(t)
	now := time.Date(2026, 12, 8, 8, 59, 0, 0, time.UTC) // a Tuesday, 08:59 in Berlin's winter is 09:59
	c := campaign.Campaign{ID: ident.New(campaign.IDPrefix), AccountID: acct.ID, AssistantID: ident.New("asst"), VersionID: ident.New("ver"),
		LineID: ident.New("line"), Platform: "sim", Status: campaign.StatusRunning, Active: true, Recipients: 3, CreatedAt: now, Sequenced: true,
		Settings: campaign.Settings{MaxConcurrentCalls: 2, CallsPerSecond: 10, Retry: campaign.Retry{MaxAttempts: 1},
			Window: &campaign.Window{TimeZone: "Europe/Berlin", Days: []string{"tue"}, Start: "10:00", End: "17:00"}}}
	var rs []campaign.Recipient
	for i := range 3 {
		rs = append(rs, campaign.Recipient{ID: campaign.RecipientID(c.ID, i), CampaignID: c.ID, AccountID: acct.ID,
			PlatformHandle: "sim:r" + strconv.Itoa(i), Status: campaign.RecipientPending})
	}
	if err := st.CreateCampaign(ctx, c, rs); err != nil {
		t.Fatal(err)
	}
	d := &dials{}
	clock := now
	r := &campaign.Runner{Service: &campaign.Service{Store: st, Lines: st, Assistants: st, Accounts: st, Calls: st,
		Now: func() time.Time { return clock }}, Dialer: d}
	for _, at := range []time.Duration{0, 30 * time.Second, 59 * time.Second} {
		clock = now.Add(at)
		if err := r.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		if d.count() != 0 {
			t.Fatalf("%d dials at %s Berlin, before the 10:00 window", d.count(), clock.In(berlin(t)).Format("15:04:05"))
		}
	}
	clock = now.Add(time.Minute)
	if err := r.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if d.count() != 2 {
		t.Errorf("%d dials as the window opened, want 2 (the concurrency)", d.count())
	}
}

func berlin(t *testing.T) *time.Location {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}
