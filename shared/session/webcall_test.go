package session_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform/web"
	"github.com/bridgeline/bridgeline/shared/session"
)

// TestWebCallJoinTimeout: a web call whose caller has not joined JoinTimeout after its
// creation is failed by the sweeper with join_timeout (ended_by system, call.ended
// once), and not a moment before; a web call that was answered, and a dialled session
// ringing as long, are not. On the real SQLite store, on a clock the test moves.
func TestWebCallJoinTimeout(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t, "web.db")
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	now := t0
	svc, err := session.New(st, roomsGone{}, session.WithJoinTimeout(45*time.Second),
		session.WithClock(func() time.Time { return now }), session.WithLog(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	if got := svc.Settings().JoinTimeout; got != 45*time.Second {
		t.Fatalf("JoinTimeout = %v, want the option's 45s", got)
	}
	if d, _ := session.New(st, session.NoRooms{}); d.Settings().JoinTimeout != session.DefaultJoinTimeout || session.DefaultJoinTimeout != time.Minute {
		t.Errorf("default join timeout %v (%v), want a minute", d.Settings().JoinTimeout, session.DefaultJoinTimeout)
	}
	acct := ident.New("acct")
	// save records a session created at t0: a web call (caller set) or a dialled one,
	// ringing or answered.
	save := func(t *testing.T, webCall, answered bool) (session.Session, call.Call) {
		t.Helper()
		ses := session.Session{ID: ident.New("ses"), AccountID: acct, Mode: session.ModeAssistant, Media: "video",
			Status: session.StatusRinging, CreatedAt: t0}
		c := call.Call{ID: ident.New("call"), AccountID: acct, Direction: call.Outbound, Media: "video",
			Status: call.StatusRinging, HandledBy: call.HandledByAssistant, SessionID: ses.ID, StartedAt: t0, Platform: "sim"}
		if webCall {
			ses.Caller = session.NewCustomerIdentity()
			c.Direction, c.Platform, c.From = call.Inbound, web.Name, ses.Caller
		}
		if answered {
			at := t0.Add(5 * time.Second)
			seen := at.Add(time.Second)
			ses.Status, ses.AnsweredAt, ses.AssistantSeenAt = session.StatusActive, &at, &seen
			c.Status, c.AnsweredAt = call.StatusActive, &at
		}
		ses.CallID = c.ID
		if err := st.SaveSession(ctx, ses, c, nil); err != nil {
			t.Fatal(err)
		}
		return ses, c
	}
	waiting, waitingCall := save(t, true, false)
	answered, _ := save(t, true, true)
	dialled, _ := save(t, false, false)
	if !waiting.WebCall() || dialled.WebCall() {
		t.Fatal("Session.WebCall does not follow Caller")
	}

	sweepAt := func(d time.Duration) {
		t.Helper()
		now = t0.Add(d)
		if _, err := svc.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
	}
	status := func(id string) session.Session {
		t.Helper()
		s, err := st.GetSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sweepAt(45*time.Second - time.Millisecond)
	if s := status(waiting.ID); s.Status != session.StatusRinging {
		t.Fatalf("a web call was swept before its join timeout: %+v", s)
	} else if s.SweepAt == nil || !s.SweepAt.Equal(t0.Add(45*time.Second)) {
		// The sweep reads only what is due: a waiting web call is due at its join
		// deadline, before the ring timeout.
		t.Errorf("a waiting web call's SweepAt = %v, want its join deadline %v", s.SweepAt, t0.Add(45*time.Second))
	}
	sweepAt(45 * time.Second)
	s := status(waiting.ID)
	c, err := st.GetCall(ctx, waitingCall.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != session.StatusFailed || s.EndReason != call.ReasonJoinTimeout || c.Status != call.StatusFailed ||
		c.EndReason != call.ReasonJoinTimeout || c.EndedBy != call.EndedBySystem {
		t.Errorf("after the join timeout: session %s/%s, call %s/%s by %s; want failed, join_timeout, by the system",
			s.Status, s.EndReason, c.Status, c.EndReason, c.EndedBy)
	}
	if n := countEvents(t, st, acct, waitingCall.ID); n != 1 {
		t.Errorf("call.ended events = %d, want 1", n)
	}
	sweepAt(50 * time.Second)
	if n := countEvents(t, st, acct, waitingCall.ID); n != 1 {
		t.Errorf("after a second sweep: call.ended events = %d, want still 1", n)
	}
	if s := status(answered.ID); s.Status != session.StatusActive {
		t.Errorf("an answered web call was swept: %+v", s)
	}
	if s := status(dialled.ID); s.Status != session.StatusRinging {
		t.Errorf("a dialled session was swept by the web call's join timeout: %+v", s)
	}
}

// roomsGone is a LiveKit with no rooms: every deletion finds the room gone (the sweeper
// deletes the room of each session it ends; no media runs in these tests).
type roomsGone struct{ session.NoRooms }

func (roomsGone) DeleteRoom(context.Context, string) error { return nil }

// TestWebCallCallerAbsent: a worker that reports its web call's caller never came ends
// the call as the sweeper's join timeout does.
func TestWebCallCallerAbsent(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t, "absent.db")
	svc, err := session.New(st, session.NoRooms{}, session.WithLog(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	ses := session.Session{ID: ident.New("ses"), AccountID: ident.New("acct"), Mode: session.ModeAssistant, Media: "audio",
		Status: session.StatusRinging, CreatedAt: now, Caller: session.NewCustomerIdentity()}
	c := call.Call{ID: ident.New("call"), AccountID: ses.AccountID, Direction: call.Inbound, Media: "audio", Platform: web.Name,
		Status: call.StatusRinging, HandledBy: call.HandledByAssistant, SessionID: ses.ID, StartedAt: now, From: ses.Caller}
	ses.CallID = c.ID
	if err := st.SaveSession(ctx, ses, c, nil); err != nil {
		t.Fatal(err)
	}
	if err := svc.HandleReport(ctx, persona.Report{Kind: persona.ReportEnded, CallID: c.ID, SessionID: ses.ID, At: now,
		EndReason: persona.EndCallerAbsent}); err != nil {
		t.Fatal(err)
	}
	got, err := st.GetCall(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != call.StatusFailed || got.EndReason != call.ReasonJoinTimeout || got.EndedBy != call.EndedBySystem {
		t.Errorf("call = %s, %s by %s; want failed, join_timeout, by the system", got.Status, got.EndReason, got.EndedBy)
	}
}
