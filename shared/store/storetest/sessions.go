package storetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/session"
)

// SessionStore is what sessions and calls need of a store, plus reading an event back
// to check it was written with the change that caused it.
type SessionStore interface {
	session.Stores
	GetEvent(ctx context.Context, id string) (callevent.Event, error)
}

// RunSessions runs the session and call record cases, each against a fresh store.
func RunSessions(t *testing.T, newStore func(t *testing.T) SessionStore) {
	for name, c := range sessionCases {
		t.Run(name, func(t *testing.T) { c(t, newStore(t)) })
	}
}

var sessionCases = map[string]func(*testing.T, SessionStore){
	"session and call round trip":                 sessionRoundTrip,
	"stale revision conflicts and writes nothing": sessionStaleRevision,
	"concurrent ends: exactly one wins":           sessionConcurrentEnd,
	"insert of an existing id conflicts":          sessionDuplicateInsert,
	"call by platform id, unique per platform":    callByPlatformID,
	"calls list newest first, filtered, paged":    callList,
	"sessions list newest first, paged":           sessionList,
	"the call keeps its variables":                callVariables,
	"session and call metadata, updated apart":    sessionMetadataRoundTrip,
	"metadata updates race other writes, no loss": sessionMetadataRace,
	"discard removes a first save, nothing later": sessionDiscard,
	"an event queued on its own is written once":  queuedEventOnce,
	// listfilters.go
	"calls list: every filter combination, paged both ways":      callListFilters,
	"calls list: a status change moves the call between filters": callListStatusChange,
	"sessions list: by status, paged both ways":                  sessionListByStatus,
}

// queuedEventOnce: QueueEvent writes an event with no record change (call.transcript),
// and a retry of the same event (same id) is ErrConflict, not a second copy.
func queuedEventOnce(t *testing.T, s SessionStore) {
	acct := ident.New("acct")
	at := time.Now().UTC().Truncate(time.Millisecond)
	evt := callevent.Event{ID: ident.Derived("evt", at, "call_1#1"), AccountID: acct, Type: callevent.TypeCallTranscript,
		CreatedAt: at, Data: []byte(`{"call_id":"call_1","sequence":1}`)}
	if err := s.QueueEvent(ctx(t), evt); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetEvent(ctx(t), evt.ID)
	if err != nil || got.Type != evt.Type || got.AccountID != acct || string(got.Data) != string(evt.Data) || !got.CreatedAt.Equal(at) {
		t.Fatalf("GetEvent = %+v, %v; want %+v", got, err, evt)
	}
	evt.Data = []byte(`{"call_id":"call_1","sequence":1,"again":true}`)
	if err := s.QueueEvent(ctx(t), evt); !errors.Is(err, apierr.ErrConflict) {
		t.Fatalf("QueueEvent of the same id again = %v, want ErrConflict", err)
	}
	if got, _ := s.GetEvent(ctx(t), evt.ID); string(got.Data) != `{"call_id":"call_1","sequence":1}` {
		t.Errorf("the retry overwrote the event: %s", got.Data)
	}
}

func newSessionPair(accountID string) (session.Session, call.Call) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	ses := session.Session{ID: ident.New("ses"), AccountID: accountID, LineID: "line_1", Mode: session.ModeHuman,
		Media: "video", PlatformHandle: "+15557654321", Status: session.StatusRinging, CreatedAt: now}
	c := call.Call{ID: ident.New("call"), AccountID: accountID, Direction: call.Outbound, LineID: "line_1",
		From: "+15550100001", To: "+15557654321", Media: "video", Status: call.StatusRinging,
		HandledBy: call.HandledByCustomer, SessionID: ses.ID, Platform: sim.Name, StartedAt: now}
	ses.CallID = c.ID
	return ses, c
}

func sessionRoundTrip(t *testing.T, s SessionStore) {
	ses, c := newSessionPair(ident.New("acct"))
	if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
		t.Fatal(err)
	}
	ses.Revision, c.Revision = 1, 1
	gotS, err := s.GetSession(ctx(t), ses.ID)
	if err != nil || gotS.Revision != 1 || gotS.CallID != c.ID || gotS.Status != session.StatusRinging || !gotS.CreatedAt.Equal(ses.CreatedAt) {
		t.Fatalf("GetSession = %+v, %v; want %+v at revision 1", gotS, err, ses)
	}
	gotC, err := s.GetCall(ctx(t), c.ID)
	if err != nil || gotC.Revision != 1 || gotC.SessionID != ses.ID || gotC.HandledBy != call.HandledByCustomer {
		t.Fatalf("GetCall = %+v, %v; want %+v at revision 1", gotC, err, c)
	}

	// End both, with call.ended, in one write.
	at := time.Now().UTC().Truncate(time.Millisecond)
	gotC.Answer(at.Add(-time.Second))
	evt, ok := gotC.End(call.StatusEnded, call.ReasonDeleted, call.EndedByCustomer, at, func() string { return ident.New("evt") })
	if !ok {
		t.Fatal("End() changed nothing")
	}
	gotS.Status, gotS.EndReason, gotS.EndedAt = session.StatusEnded, call.ReasonDeleted, &at
	gotC.Metrics = nil
	if err := s.SaveSession(ctx(t), gotS, gotC, []callevent.Event{evt}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetCall(ctx(t), c.ID)
	if err != nil || got.Revision != 2 || got.Status != call.StatusEnded || got.DurationMS == nil || *got.DurationMS != 1000 {
		t.Errorf("after end GetCall = %+v, %v; want ended at revision 2 lasting 1000 ms", got, err)
	}
	e, err := s.GetEvent(ctx(t), evt.ID)
	if err != nil || e.Type != callevent.TypeCallEnded || e.AccountID != c.AccountID {
		t.Errorf("GetEvent(call.ended) = %+v, %v; want it written with the change", e, err)
	}
	if _, err := s.GetSession(ctx(t), ident.New("ses")); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("GetSession(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := s.GetCall(ctx(t), ident.New("call")); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("GetCall(unknown) = %v, want ErrNotFound", err)
	}
}

func sessionStaleRevision(t *testing.T, s SessionStore) {
	ses, c := newSessionPair(ident.New("acct"))
	if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
		t.Fatal(err)
	}
	ses.Revision, c.Revision = 1, 1
	// Someone else changed the call since it was read (revision 1 -> 2).
	c2 := c
	c2.Answer(time.Now().UTC())
	if err := s.SaveCall(ctx(t), c2, nil); err != nil {
		t.Fatal(err)
	}
	evt := callevent.Event{ID: ident.New("evt"), AccountID: ses.AccountID, Type: callevent.TypeCallEnded,
		CreatedAt: time.Now().UTC(), Data: []byte(`{}`)}
	ses.Status = session.StatusEnded
	if err := s.SaveSession(ctx(t), ses, c, []callevent.Event{evt}); !errors.Is(err, apierr.ErrConflict) {
		t.Fatalf("SaveSession(stale call) = %v, want ErrConflict", err)
	}
	if got, _ := s.GetSession(ctx(t), ses.ID); got.Status != session.StatusRinging || got.Revision != 1 {
		t.Errorf("session after a failed save = %+v, want unchanged", got)
	}
	if _, err := s.GetEvent(ctx(t), evt.ID); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("event of a failed save: GetEvent = %v, want ErrNotFound", err)
	}
	if err := s.SaveCall(ctx(t), c2, nil); !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("SaveCall(stale) = %v, want ErrConflict", err)
	}
}

// sessionConcurrentEnd: many writers read the same revision and each tries to end the
// session with its own call.ended; exactly one commits, and exactly one event exists.
func sessionConcurrentEnd(t *testing.T, s SessionStore) {
	ses, c := newSessionPair(ident.New("acct"))
	if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
		t.Fatal(err)
	}
	ses.Revision, c.Revision = 1, 1
	const n = 8
	var wg sync.WaitGroup
	ids := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc, cc := ses, c
			evt, _ := cc.End(call.StatusEnded, call.ReasonDeleted, call.EndedByCustomer, time.Now().UTC(), func() string { return ident.New("evt") })
			sc.Status = session.StatusEnded
			ids[i] = evt.ID
			errs[i] = s.SaveSession(ctx(t), sc, cc, []callevent.Event{evt})
		}()
	}
	wg.Wait()
	won := 0
	for i := range n {
		_, getErr := s.GetEvent(ctx(t), ids[i])
		switch {
		case errs[i] == nil:
			won++
			if getErr != nil {
				t.Errorf("winner's event: %v", getErr)
			}
		case errors.Is(errs[i], apierr.ErrConflict):
			if getErr == nil {
				t.Errorf("a losing writer's event %s was written", ids[i])
			}
		default:
			t.Errorf("SaveSession = %v, want nil or ErrConflict", errs[i])
		}
	}
	if won != 1 {
		t.Errorf("%d writers ended the session, want exactly 1", won)
	}
}

func sessionDiscard(t *testing.T, s SessionStore) {
	acct := ident.New("acct")
	ses, c := newSessionPair(acct)
	if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.DiscardSession(ctx(t), ses.ID, c.ID); err != nil {
		t.Fatalf("DiscardSession of a first save = %v", err)
	}
	if _, err := s.GetSession(ctx(t), ses.ID); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("GetSession after the discard = %v, want ErrNotFound", err)
	}
	if _, err := s.GetCall(ctx(t), c.ID); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("GetCall after the discard = %v, want ErrNotFound", err)
	}
	if got, err := s.ListSessions(ctx(t), acct, session.ListQuery{Query: listing.Query{Limit: 10}}); err != nil || len(got) != 0 {
		t.Errorf("ListSessions after the discard = %d sessions, %v; want none", len(got), err)
	}
	// The same ids may be saved again: a retry of the create that failed.
	if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
		t.Fatalf("SaveSession after the discard = %v", err)
	}

	// A session changed since its first save is kept whole: the call as well.
	ses.Revision, c.Revision = 1, 1
	ses.Status = session.StatusActive
	if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.DiscardSession(ctx(t), ses.ID, c.ID); !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("DiscardSession of a changed session = %v, want ErrConflict", err)
	}
	if _, err := s.GetSession(ctx(t), ses.ID); err != nil {
		t.Errorf("GetSession after a refused discard = %v", err)
	}
	if _, err := s.GetCall(ctx(t), c.ID); err != nil {
		t.Errorf("GetCall after a refused discard = %v", err)
	}
}

func sessionDuplicateInsert(t *testing.T, s SessionStore) {
	ses, c := newSessionPair(ident.New("acct"))
	if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveSession(ctx(t), ses, c, nil); !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("second insert = %v, want ErrConflict", err)
	}
	_, c2 := newSessionPair(ses.AccountID)
	c2.ID = c.ID
	if err := s.SaveCall(ctx(t), c2, nil); !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("SaveCall(existing id) = %v, want ErrConflict", err)
	}
}

func callByPlatformID(t *testing.T, s SessionStore) {
	acct := ident.New("acct")
	_, c := newSessionPair(acct)
	c.SessionID, c.PlatformCallID = "", "simcall_1"
	if err := s.SaveCall(ctx(t), c, nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.CallByPlatformID(ctx(t), sim.Name, "simcall_1")
	if err != nil || got.ID != c.ID {
		t.Fatalf("CallByPlatformID = %v, %v; want %s", got.ID, err, c.ID)
	}
	if _, err := s.CallByPlatformID(ctx(t), "other", "simcall_1"); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("CallByPlatformID(other platform) = %v, want ErrNotFound", err)
	}
	if _, err := s.CallByPlatformID(ctx(t), sim.Name, ""); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("CallByPlatformID(empty) = %v, want ErrNotFound", err)
	}
	_, dup := newSessionPair(acct)
	dup.SessionID, dup.PlatformCallID = "", "simcall_1"
	if err := s.SaveCall(ctx(t), dup, nil); !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("second call with the same platform id = %v, want ErrConflict", err)
	}
	// Calls not yet known to their platform do not collide.
	for range 2 {
		_, c := newSessionPair(acct)
		c.SessionID = ""
		if err := s.SaveCall(ctx(t), c, nil); err != nil {
			t.Errorf("SaveCall(no platform id) = %v", err)
		}
	}
	// The platform id can be learnt later, by an update.
	_, late := newSessionPair(acct)
	if err := s.SaveCall(ctx(t), late, nil); err != nil {
		t.Fatal(err)
	}
	late.Revision, late.PlatformCallID = 1, "simcall_2"
	if err := s.SaveCall(ctx(t), late, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := s.CallByPlatformID(ctx(t), sim.Name, "simcall_2"); err != nil || got.ID != late.ID {
		t.Errorf("CallByPlatformID(learnt later) = %v, %v", got.ID, err)
	}
}

func callList(t *testing.T, s SessionStore) {
	acct, other := ident.New("acct"), ident.New("acct")
	var all []string
	for i := range 5 {
		_, c := newSessionPair(acct)
		if i%2 == 0 {
			c.LineID = "line_even"
		}
		if err := s.SaveCall(ctx(t), c, nil); err != nil {
			t.Fatal(err)
		}
		all = append([]string{c.ID}, all...) // newest first
	}
	_, foreign := newSessionPair(other)
	if err := s.SaveCall(ctx(t), foreign, nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListCalls(ctx(t), acct, call.ListQuery{Query: listing.Query{Limit: 2}})
	if err != nil || len(got) != 3 || got[0].ID != all[0] || got[1].ID != all[1] {
		t.Fatalf("ListCalls(limit 2) = %v, %v; want the 2 newest plus one more", ids(got), err)
	}
	got, err = s.ListCalls(ctx(t), acct, call.ListQuery{Query: listing.Query{Limit: 10, StartingAfter: all[1]}})
	if err != nil || len(got) != 3 || got[0].ID != all[2] {
		t.Errorf("ListCalls(after %s) = %v, %v; want %v", all[1], ids(got), err, all[2:])
	}
	got, err = s.ListCalls(ctx(t), acct, call.ListQuery{Query: listing.Query{Limit: 10}, LineID: "line_even"})
	if err != nil || len(got) != 3 {
		t.Errorf("ListCalls(line) = %v, %v; want 3", ids(got), err)
	}
	one, _ := s.GetCall(ctx(t), all[0])
	got, err = s.ListCalls(ctx(t), acct, call.ListQuery{Query: listing.Query{Limit: 10}, SessionID: one.SessionID})
	if err != nil || len(got) != 1 || got[0].ID != all[0] {
		t.Errorf("ListCalls(session) = %v, %v; want [%s]", ids(got), err, all[0])
	}
	for _, c := range got {
		if c.AccountID != acct {
			t.Errorf("ListCalls returned another account's call %s", c.ID)
		}
	}
}

func sessionList(t *testing.T, s SessionStore) {
	acct := ident.New("acct")
	var all []string
	for range 3 {
		ses, c := newSessionPair(acct)
		if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
			t.Fatal(err)
		}
		all = append([]string{ses.ID}, all...)
	}
	other, oc := newSessionPair(ident.New("acct"))
	if err := s.SaveSession(ctx(t), other, oc, nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListSessions(ctx(t), acct, session.ListQuery{Query: listing.Query{Limit: 2}})
	if err != nil || len(got) != 3 || got[0].ID != all[0] || got[2].ID != all[2] {
		t.Fatalf("ListSessions = %d, %v; want 3 newest first", len(got), err)
	}
	got, err = s.ListSessions(ctx(t), acct, session.ListQuery{Query: listing.Query{Limit: 2, StartingAfter: all[0]}})
	if err != nil || len(got) != 2 || got[0].ID != all[1] {
		t.Errorf("ListSessions(after) = %d, %v; want 2 from %s", len(got), err, all[1])
	}
}

func ids(cs []call.Call) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

// SweepIndexStore is a SessionStore with the sweep index.
type SweepIndexStore interface {
	SessionStore
	session.SweepIndex
}

// RunSweepIndex runs the session.SweepIndex cases against a fresh store.
func RunSweepIndex(t *testing.T, newStore func(t *testing.T) SweepIndexStore) {
	base := time.Now().UTC().Truncate(time.Millisecond)
	at := func(d time.Duration) *time.Time { t := base.Add(d); return &t }
	// save writes a new session (each in its own account) due at due, or without a due
	// time when due is nil.
	save := func(t *testing.T, s SweepIndexStore, status string, due *time.Time) (session.Session, call.Call) {
		t.Helper()
		ses, c := newSessionPair(ident.New("acct"))
		if status != session.StatusRinging {
			ses.Status, c.Status = status, call.StatusActive
		}
		if ses.Over() {
			ses.EndedAt, c.Status = &base, call.StatusFailed
		}
		ses.SweepAt = due
		if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
			t.Fatal(err)
		}
		ses.Revision, c.Revision = 1, 1
		return ses, c
	}
	due := func(t *testing.T, s SweepIndexStore, now time.Time, after session.DueKey, limit int) []string {
		t.Helper()
		got, err := s.DueSessions(ctx(t), now, after, limit)
		if err != nil {
			t.Fatalf("DueSessions: %v", err)
		}
		return sessionIDs(got)
	}

	t.Run("due sessions across accounts by due time then id, up to now inclusive, paged; a write moves them", func(t *testing.T) {
		s := newStore(t)
		// Saved in an order unlike their due order; two share a due time.
		later, _ := save(t, s, session.StatusActive, at(40*time.Second))
		third, _ := save(t, s, session.StatusRinging, at(20*time.Second))
		first, firstCall := save(t, s, session.StatusActive, at(-time.Minute))
		tieA, _ := save(t, s, session.StatusActive, at(10*time.Second))
		tieB, _ := save(t, s, session.StatusRinging, at(10*time.Second))
		if tieB.ID < tieA.ID {
			tieA, tieB = tieB, tieA
		}
		unset, _ := save(t, s, session.StatusActive, nil)    // no due time yet: due at once
		save(t, s, session.StatusFailed, at(-2*time.Minute)) // over: never in the index
		end, endCall := save(t, s, session.StatusActive, at(15*time.Second))

		want := []string{unset.ID, first.ID, tieA.ID, tieB.ID, end.ID, third.ID}
		if got := due(t, s, base.Add(20*time.Second), session.DueKey{}, 100); !slices.Equal(got, want) {
			t.Fatalf("DueSessions(now+20s) = %v, want %v (a session due exactly at now included; the one due at +40s not)", got, want)
		}
		if got := due(t, s, base.Add(-time.Hour), session.DueKey{}, 100); !slices.Equal(got, []string{unset.ID}) {
			t.Errorf("DueSessions(an hour ago) = %v, want only the session without a due time %v", got, unset.ID)
		}
		// Paged by the last key: every session once, in order.
		var paged []string
		after := session.DueKey{}
		for range 10 {
			page, err := s.DueSessions(ctx(t), base.Add(20*time.Second), after, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > 2 {
				t.Fatalf("DueSessions(limit 2) returned %d", len(page))
			}
			paged = append(paged, sessionIDs(page)...)
			if len(page) < 2 {
				break
			}
			after, _ = page[len(page)-1].Due()
		}
		if !slices.Equal(paged, want) {
			t.Fatalf("DueSessions in pages of 2 = %v, want %v", paged, want)
		}
		// After the first of the two that share a due time: the second, not the first.
		k, _ := tieA.Due()
		if got := due(t, s, base.Add(20*time.Second), k, 1); !slices.Equal(got, []string{tieB.ID}) {
			t.Errorf("DueSessions(after %v, limit 1) = %v, want [%s]", k, got, tieB.ID)
		}

		// A write that moves the due time later moves the session; an end takes it out,
		// in the same write.
		first.SweepAt = at(time.Hour)
		if err := s.SaveSession(ctx(t), first, firstCall, nil); err != nil {
			t.Fatal(err)
		}
		end.Status, end.EndedAt, end.SweepAt = session.StatusEnded, &base, nil
		evt, _ := endCall.End(call.StatusEnded, call.ReasonMaxDuration, call.EndedBySystem, base, func() string { return ident.New("evt") })
		if err := s.SaveSession(ctx(t), end, endCall, []callevent.Event{evt}); err != nil {
			t.Fatal(err)
		}
		want = []string{unset.ID, tieA.ID, tieB.ID, third.ID}
		if got := due(t, s, base.Add(20*time.Second), session.DueKey{}, 100); !slices.Equal(got, want) {
			t.Fatalf("after a later due time and an end, DueSessions = %v, want %v", got, want)
		}
		want = []string{unset.ID, tieA.ID, tieB.ID, third.ID, later.ID, first.ID}
		got, err := s.DueSessions(ctx(t), base.Add(2*time.Hour), session.DueKey{}, 100)
		if err != nil || !slices.Equal(sessionIDs(got), want) || !got[5].SweepAt.Equal(*at(time.Hour)) {
			t.Errorf("DueSessions(in two hours) = %v, %v; want %v, the moved one last with its due time", sessionIDs(got), err, want)
		}
	})

	t.Run("an ended session stays while its call's analysis is awaited; the record keeps the analysis", func(t *testing.T) {
		analysisAwaited(t, newStore(t), base)
	})
	t.Run("an ended session stays while its call.ended is held or its room pending, until cleared", func(t *testing.T) {
		s := newStore(t)
		ses, c := save(t, s, session.StatusRinging, at(90*time.Second))
		reportDue := base.Add(3 * time.Second)
		ses.Status, ses.EndedAt, ses.ReportDueAt, ses.SweepAt = session.StatusEnded, &base, &reportDue, &reportDue
		c.End(call.StatusEnded, call.ReasonDeleted, call.EndedByCustomer, base, func() string { return ident.New("evt") })
		if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
			t.Fatal(err)
		}
		ses.Revision, c.Revision = 2, 2
		if got := due(t, s, base.Add(time.Second), session.DueKey{}, 100); len(got) != 0 {
			t.Errorf("DueSessions before the report is due = %v, want none", got)
		}
		got, err := s.DueSessions(ctx(t), reportDue, session.DueKey{}, 100)
		if err != nil || len(got) != 1 || got[0].ID != ses.ID || !got[0].Held() || !got[0].ReportDueAt.Equal(reportDue) {
			t.Fatalf("DueSessions(report due) = %v, %v; want the held session %s", sessionIDs(got), err, ses.ID)
		}
		// Released, but its room still to be deleted: due at its end.
		ses.ReportDueAt, ses.RoomPending, ses.SweepAt = nil, true, &base
		c.AssistantReport = call.ReportMissing
		if err := s.SaveSession(ctx(t), ses, c, []callevent.Event{c.EndedEvent(ident.New("evt"), base)}); err != nil {
			t.Fatal(err)
		}
		ses.Revision, c.Revision = 3, 3
		if got := due(t, s, base, session.DueKey{}, 100); !slices.Equal(got, []string{ses.ID}) {
			t.Fatalf("DueSessions with the room pending = %v, want [%s]", got, ses.ID)
		}
		ses.RoomPending, ses.SweepAt = false, nil
		if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
			t.Fatal(err)
		}
		if got := due(t, s, base.Add(24*time.Hour), session.DueKey{}, 100); len(got) != 0 {
			t.Fatalf("after the room is gone, DueSessions = %v, want none", got)
		}
		if got, err := s.GetCall(ctx(t), c.ID); err != nil || got.AssistantReport != call.ReportMissing {
			t.Errorf("GetCall = %+v, %v; want assistant_report missing", got, err)
		}
	})
}

// analysisAwaited: an ended assistant call whose analysis is pending keeps its session
// in the sweep index until the analysis is final, and the record keeps the analysis
// (the structured data as given, the verdict) with its call.analyzed written in the
// same write.
func analysisAwaited(t *testing.T, s SweepIndexStore, base time.Time) {
	ses, c := newSessionPair(ident.New("acct"))
	ses.Mode, c.HandledBy = session.ModeAssistant, call.HandledByAssistant
	ses.Status, ses.EndedAt = session.StatusEnded, &base
	c.End(call.StatusEnded, call.ReasonAssistantHangup, call.EndedByAssistant, base, func() string { return ident.New("evt") })
	c.AssistantReport = call.ReportReceived
	c.Analysis = &call.Analysis{Status: persona.AnalysisPending}
	analysisDue := base.Add(5 * time.Minute)
	ses.AnalysisDueAt, ses.SweepAt = &analysisDue, &analysisDue
	if err := s.SaveSession(ctx(t), ses, c, []callevent.Event{c.EndedEvent(ident.New("evt"), base)}); err != nil {
		t.Fatal(err)
	}
	ses.Revision, c.Revision = 1, 1
	got, err := s.DueSessions(ctx(t), analysisDue, session.DueKey{}, 100)
	if err != nil || len(got) != 1 || got[0].ID != ses.ID || got[0].AnalysisDueAt == nil || !got[0].AnalysisDueAt.Equal(analysisDue) {
		t.Fatalf("DueSessions(analysis due) = %v, %v; want the awaiting session %s", sessionIDs(got), err, ses.ID)
	}
	if rc, err := s.GetCall(ctx(t), c.ID); err != nil || rc.Analysis == nil || rc.Analysis.Status != persona.AnalysisPending {
		t.Fatalf("GetCall = %+v, %v; want analysis pending", rc.Analysis, err)
	}
	yes := true
	evt, ok := c.Analyse(call.Analysis{Status: persona.AnalysisCompleted, Summary: "Asked where order 6735 is.",
		StructuredData: []byte(`{"order_id":"6735","delivered":true}`), Success: &yes}, ident.New("evt"), base.Add(3*time.Second))
	if !ok {
		t.Fatal("Analyse changed nothing")
	}
	ses.AnalysisDueAt, ses.SweepAt = nil, nil
	if err := s.SaveSession(ctx(t), ses, c, []callevent.Event{evt}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.DueSessions(ctx(t), base.Add(24*time.Hour), session.DueKey{}, 100); err != nil || len(got) != 0 {
		t.Fatalf("after the analysis, DueSessions = %v, %v; want none", sessionIDs(got), err)
	}
	rc, err := s.GetCall(ctx(t), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	a := rc.Analysis
	if a == nil || a.Status != persona.AnalysisCompleted || a.Summary != "Asked where order 6735 is." ||
		string(a.StructuredData) != `{"order_id":"6735","delivered":true}` || a.Success == nil || !*a.Success || a.Error != "" {
		t.Fatalf("GetCall's analysis = %+v, want the one saved", a)
	}
	if ev, err := s.GetEvent(ctx(t), evt.ID); err != nil || ev.Type != callevent.TypeCallAnalyzed {
		t.Errorf("GetEvent(call.analyzed) = %+v, %v", ev, err)
	}
}

func sessionIDs(ss []session.Session) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}
