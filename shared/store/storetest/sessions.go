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
	// listfilters.go
	"calls list: every filter combination, paged both ways":      callListFilters,
	"calls list: a status change moves the call between filters": callListStatusChange,
	"sessions list: by status, paged both ways":                  sessionListByStatus,
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

// LiveSessionStore is a SessionStore with the sweeper's index of live sessions.
type LiveSessionStore interface {
	SessionStore
	session.LiveStore
}

// RunLiveSessions runs the session.LiveStore cases against a fresh store.
func RunLiveSessions(t *testing.T, newStore func(t *testing.T) LiveSessionStore) {
	t.Run("live sessions across accounts, oldest first, paged; an end leaves at once", func(t *testing.T) {
		s := newStore(t)
		var live []string
		var pairs []struct {
			ses session.Session
			c   call.Call
		}
		for i := range 5 {
			ses, c := newSessionPair(ident.New("acct")) // each its own account
			if i%2 == 1 {
				ses.Status, c.Status = session.StatusActive, call.StatusActive
			}
			if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
				t.Fatal(err)
			}
			ses.Revision, c.Revision = 1, 1
			live = append(live, ses.ID)
			pairs = append(pairs, struct {
				ses session.Session
				c   call.Call
			}{ses, c})
		}
		// One that is over from the start never shows.
		done, doneCall := newSessionPair(ident.New("acct"))
		done.Status, doneCall.Status = session.StatusFailed, call.StatusFailed
		if err := s.SaveSession(ctx(t), done, doneCall, nil); err != nil {
			t.Fatal(err)
		}

		got, err := s.LiveSessions(ctx(t), "", 100)
		if err != nil || !slices.Equal(sessionIDs(got), live) {
			t.Fatalf("LiveSessions = %v, %v; want %v", sessionIDs(got), err, live)
		}
		first, err := s.LiveSessions(ctx(t), "", 2)
		if err != nil || !slices.Equal(sessionIDs(first), live[:2]) {
			t.Fatalf("LiveSessions(limit 2) = %v, %v; want %v", sessionIDs(first), err, live[:2])
		}
		rest, err := s.LiveSessions(ctx(t), live[1], 100)
		if err != nil || !slices.Equal(sessionIDs(rest), live[2:]) {
			t.Fatalf("LiveSessions(after %s) = %v, %v; want %v", live[1], sessionIDs(rest), err, live[2:])
		}

		// Ending (or failing) a session takes it off the list in the same write.
		at := time.Now().UTC().Truncate(time.Millisecond)
		for i, status := range map[int]string{1: session.StatusEnded, 2: session.StatusFailed} {
			p := pairs[i]
			p.ses.Status, p.ses.EndedAt = status, &at
			evt, _ := p.c.End(call.StatusEnded, call.ReasonMaxDuration, call.EndedBySystem, at, func() string { return ident.New("evt") })
			if err := s.SaveSession(ctx(t), p.ses, p.c, []callevent.Event{evt}); err != nil {
				t.Fatal(err)
			}
		}
		got, err = s.LiveSessions(ctx(t), "", 100)
		want := []string{live[0], live[3], live[4]}
		if err != nil || !slices.Equal(sessionIDs(got), want) {
			t.Fatalf("after two ends, LiveSessions = %v, %v; want %v", sessionIDs(got), err, want)
		}
		if got[0].Status != session.StatusRinging || got[1].Status != session.StatusActive {
			t.Errorf("live statuses = %s, %s; want ringing, active", got[0].Status, got[1].Status)
		}
	})

	t.Run("an ended session whose call.ended is held stays listed until released", func(t *testing.T) {
		s := newStore(t)
		ses, c := newSessionPair(ident.New("acct"))
		if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
			t.Fatal(err)
		}
		ses.Revision, c.Revision = 1, 1
		at := time.Now().UTC().Truncate(time.Millisecond)
		due := at.Add(3 * time.Second)
		ses.Status, ses.EndedAt, ses.ReportDueAt = session.StatusEnded, &at, &due
		c.End(call.StatusEnded, call.ReasonDeleted, call.EndedByCustomer, at, func() string { return ident.New("evt") })
		if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
			t.Fatal(err)
		}
		ses.Revision, c.Revision = 2, 2
		got, err := s.LiveSessions(ctx(t), "", 100)
		if err != nil || len(got) != 1 || got[0].ID != ses.ID || !got[0].Held() || !got[0].ReportDueAt.Equal(due) {
			t.Fatalf("LiveSessions = %+v, %v; want the held session %s due %v", got, err, ses.ID, due)
		}
		ses.ReportDueAt = nil
		c.AssistantReport = call.ReportMissing
		if err := s.SaveSession(ctx(t), ses, c, []callevent.Event{c.EndedEvent(ident.New("evt"), at)}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.LiveSessions(ctx(t), "", 100); err != nil || len(got) != 0 {
			t.Fatalf("after the release, LiveSessions = %v, %v; want none", sessionIDs(got), err)
		}
		if got, err := s.GetCall(ctx(t), c.ID); err != nil || got.AssistantReport != call.ReportMissing {
			t.Errorf("GetCall = %+v, %v; want assistant_report missing", got, err)
		}
	})
}

func sessionIDs(ss []session.Session) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}
