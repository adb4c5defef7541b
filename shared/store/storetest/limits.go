package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/session"
)

// SessionLimitStore is what the concurrent-session limit needs of a store: sessions,
// accounts (whose doc holds their own limit) and the operator's two calls.
type SessionLimitStore interface {
	session.Store
	call.Store
	account.Store
	SetMaxConcurrentSessions(ctx context.Context, accountID string, limit *int) (account.Account, error)
	SessionSlotsInUse(ctx context.Context, accountID string) (int, error)
	// SetOutbound sets the account's destination policy (shared/destination).
	SetOutbound(ctx context.Context, accountID string, o account.Outbound) (account.Account, error)
}

// RunSessionLimits runs the concurrent-session limit cases, each against a fresh store.
func RunSessionLimits(t *testing.T, newStore func(t *testing.T) SessionLimitStore) {
	for name, c := range sessionLimitCases {
		t.Run(name, func(t *testing.T) { c(t, newStore(t)) })
	}
}

var sessionLimitCases = map[string]func(*testing.T, SessionLimitStore){
	"concurrent creates never exceed the limit, and ends give slots back": limitConcurrentCreates,
	"a session ending twice gives its slot back once":                     limitEndTwice,
	"the account's own limit wins over the default":                       limitOwn,
	"accounts are counted apart":                                          limitPerAccount,
	"a discarded create gives its slot back":                              limitDiscard,
	"the account's outbound policy is kept, with its other settings":      limitOutbound,
}

func limitOutbound(t *testing.T, s SessionLimitStore) {
	a, _ := newLimitAccount(t, s)
	if _, err := s.SetMaxConcurrentSessions(ctx(t), a.ID, ptr(3)); err != nil {
		t.Fatal(err)
	}
	o := account.Outbound{AllowedDestinationCountries: []string{"GB", "US"}, DailyOutboundMinutes: ptr(90)}
	if _, err := s.SetOutbound(ctx(t), a.ID, o); err != nil {
		t.Fatal(err)
	}
	read, err := s.GetAccount(ctx(t), a.ID)
	if err != nil || read.DailyOutboundMinutes == nil || *read.DailyOutboundMinutes != 90 || len(read.AllowedDestinationCountries) != 2 ||
		read.MaxConcurrentSessions == nil || *read.MaxConcurrentSessions != 3 || read.Name != a.Name {
		t.Fatalf("GetAccount after SetOutbound = %+v, %v; want the policy, the limit 3 and the name kept", read, err)
	}
	// An empty list (no country) is kept apart from none (the default).
	if _, err := s.SetOutbound(ctx(t), a.ID, account.Outbound{AllowedDestinationCountries: []string{}}); err != nil {
		t.Fatal(err)
	}
	if read, err := s.GetAccount(ctx(t), a.ID); err != nil || read.AllowedDestinationCountries == nil || read.DailyOutboundMinutes != nil {
		t.Errorf("after SetOutbound([]) = %+v, %v; want an empty list, not nil, and the default cap", read.Outbound, err)
	}
	if _, err := s.SetOutbound(ctx(t), "acct_01m813q4jpa7fqz94g6r8cb30d", o); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("SetOutbound(unknown account) = %v, want ErrNotFound", err)
	}
}

func limitDiscard(t *testing.T, s SessionLimitStore) {
	a, _ := newLimitAccount(t, s)
	won, _ := createMany(t, s, a.ID, 1, 1)
	if len(won) != 1 {
		t.Fatalf("created %d, want 1", len(won))
	}
	if err := s.DiscardSession(ctx(t), won[0].ID, won[0].CallID); err != nil {
		t.Fatal(err)
	}
	if got := slotsInUse(t, s, a.ID); got != 0 {
		t.Errorf("slots in use after the discard = %d, want 0", got)
	}
	if won, refused := createMany(t, s, a.ID, 2, 1); len(won) != 1 || refused != 1 {
		t.Errorf("2 creates at limit 1 after a discard: %d created, %d refused; want 1, 1", len(won), refused)
	}
}

// createMany runs n CreateSession calls at once and returns the sessions that got a
// slot and how many were refused; any other error fails the test.
func createMany(t *testing.T, s SessionLimitStore, accountID string, n, defaultLimit int) ([]session.Session, int) {
	t.Helper()
	var (
		mu      sync.Mutex
		won     []session.Session
		refused int
		wg      sync.WaitGroup
		start   = make(chan struct{})
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ses, c := newSessionPair(accountID)
			ses.Slot = true
			<-start
			err := s.CreateSession(ctx(t), ses, c, nil, defaultLimit)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ses.Revision = 1
				won = append(won, ses)
			case errors.Is(err, session.ErrConcurrentLimit):
				refused++
			default:
				t.Errorf("CreateSession = %v, want nil or ErrConcurrentLimit", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	return won, refused
}

// endSession writes a session over as the service does: read, change, conditional save.
func endSession(t *testing.T, s SessionLimitStore, id string) session.Session {
	t.Helper()
	ses, err := s.GetSession(ctx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.GetCall(ctx(t), ses.CallID)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	ses.Status, ses.EndReason, ses.EndedAt = session.StatusEnded, call.ReasonDeleted, &now
	c.Status, c.EndReason, c.EndedAt = call.StatusEnded, call.ReasonDeleted, &now
	if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
		t.Fatalf("end session %s: %v", id, err)
	}
	ses.Revision++
	return ses
}

func slotsInUse(t *testing.T, s SessionLimitStore, accountID string) int {
	t.Helper()
	n, err := s.SessionSlotsInUse(ctx(t), accountID)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func limitConcurrentCreates(t *testing.T, s SessionLimitStore) {
	a, _ := newLimitAccount(t, s)
	const limit, tries = 20, 40
	won, refused := createMany(t, s, a.ID, tries, limit)
	t.Logf("%d concurrent creates at limit %d: %d created, %d refused", tries, limit, len(won), refused)
	if len(won) != limit || refused != tries-limit {
		t.Fatalf("%d concurrent creates at limit %d: %d created, %d refused; want %d, %d", tries, limit, len(won), refused, limit, tries-limit)
	}
	if got := slotsInUse(t, s, a.ID); got != limit {
		t.Errorf("slots in use = %d, want %d", got, limit)
	}
	stored, err := s.GetSession(ctx(t), won[0].ID)
	if err != nil || !stored.Slot {
		t.Errorf("stored session = %+v, %v; want one that holds a slot", stored, err)
	}
	// An update that does not end a session keeps its slot.
	c, _ := s.GetCall(ctx(t), stored.CallID)
	stored.Status, c.Status = session.StatusActive, call.StatusActive
	if err := s.SaveSession(ctx(t), stored, c, nil); err != nil {
		t.Fatal(err)
	}
	if got := slotsInUse(t, s, a.ID); got != limit {
		t.Errorf("slots in use after an answer = %d, want %d", got, limit)
	}
	for _, ses := range won[:5] {
		endSession(t, s, ses.ID)
		if got, err := s.GetSession(ctx(t), ses.ID); err != nil || got.Slot {
			t.Errorf("ended session %s = slot %v, %v; want no slot", ses.ID, got.Slot, err)
		}
	}
	if got := slotsInUse(t, s, a.ID); got != limit-5 {
		t.Errorf("slots in use after 5 ends = %d, want %d", got, limit-5)
	}
	won, refused = createMany(t, s, a.ID, 10, limit)
	if len(won) != 5 || refused != 5 {
		t.Errorf("10 concurrent creates with 5 slots free: %d created, %d refused; want 5, 5", len(won), refused)
	}
}

func limitEndTwice(t *testing.T, s SessionLimitStore) {
	a, _ := newLimitAccount(t, s)
	const limit = 2
	won, _ := createMany(t, s, a.ID, 2, limit)
	if len(won) != 2 {
		t.Fatalf("created %d, want 2", len(won))
	}
	ended := endSession(t, s, won[0].ID)
	// The same ended session written again from the caller's copy (which still says it
	// holds the slot): nothing more is given back, whether the store refuses the write
	// or takes it.
	ended.Slot = true
	c, _ := s.GetCall(ctx(t), ended.CallID)
	if err := s.SaveSession(ctx(t), ended, c, nil); err != nil && !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("second end = %v, want nil or ErrConflict", err)
	}
	if got := slotsInUse(t, s, a.ID); got != 1 {
		t.Errorf("slots in use after ending one of two twice = %d, want 1", got)
	}
	if won, refused := createMany(t, s, a.ID, 3, limit); len(won) != 1 || refused != 2 {
		t.Errorf("3 creates with 1 slot free: %d created, %d refused; want 1, 2", len(won), refused)
	}
}

func limitOwn(t *testing.T, s SessionLimitStore) {
	a, _ := newLimitAccount(t, s)
	got, err := s.SetMaxConcurrentSessions(ctx(t), a.ID, ptr(3))
	if err != nil || got.MaxConcurrentSessions == nil || *got.MaxConcurrentSessions != 3 {
		t.Fatalf("SetMaxConcurrentSessions(3) = %+v, %v", got, err)
	}
	if read, err := s.GetAccount(ctx(t), a.ID); err != nil || read.MaxConcurrentSessions == nil || *read.MaxConcurrentSessions != 3 || read.Name != a.Name {
		t.Errorf("GetAccount after the limit was set = %+v, %v; want limit 3 and the name kept", read, err)
	}
	if won, refused := createMany(t, s, a.ID, 5, 20); len(won) != 3 || refused != 2 {
		t.Errorf("5 creates at own limit 3 (default 20): %d created, %d refused; want 3, 2", len(won), refused)
	}
	if _, err := s.SetMaxConcurrentSessions(ctx(t), a.ID, ptr(0)); err != nil {
		t.Fatal(err)
	}
	if won, _ := createMany(t, s, a.ID, 1, 20); len(won) != 0 {
		t.Errorf("a create at own limit 0 succeeded")
	}
	if _, err := s.SetMaxConcurrentSessions(ctx(t), a.ID, nil); err != nil {
		t.Fatal(err)
	}
	if won, refused := createMany(t, s, a.ID, 3, 4); len(won) != 1 || refused != 2 {
		t.Errorf("3 creates back at the default 4 with 3 held: %d created, %d refused; want 1, 2", len(won), refused)
	}
	if _, err := s.SetMaxConcurrentSessions(ctx(t), "acct_01m813q4jpa7fqz94g6r8cb30d", ptr(1)); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("SetMaxConcurrentSessions(unknown account) = %v, want ErrNotFound", err)
	}
}

func limitPerAccount(t *testing.T, s SessionLimitStore) {
	a, _ := newLimitAccount(t, s)
	b, _ := newLimitAccount(t, s)
	if won, _ := createMany(t, s, a.ID, 3, 3); len(won) != 3 {
		t.Fatalf("account a: created %d, want 3", len(won))
	}
	if won, refused := createMany(t, s, b.ID, 4, 3); len(won) != 3 || refused != 1 {
		t.Errorf("account b beside a full account a: %d created, %d refused; want 3, 1", len(won), refused)
	}
}

func newLimitAccount(t *testing.T, s SessionLimitStore) (account.Account, string) {
	t.Helper()
	a, key, err := (&account.Service{Store: s, Now: time.Now}).Create(ctx(t), "Limits Co", false)
	if err != nil {
		t.Fatalf("create account: %v", err)
	}
	return a, key
}
