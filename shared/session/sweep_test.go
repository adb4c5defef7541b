package session_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// countingStore is the real SQLite store that counts the sessions the sweep index hands
// out: what a sweep reads.
type countingStore struct {
	*sqlite.Store
	mu   sync.Mutex
	read int
}

func (c *countingStore) DueSessions(ctx context.Context, now time.Time, after session.DueKey, limit int) ([]session.Session, error) {
	got, err := c.Store.DueSessions(ctx, now, after, limit)
	c.mu.Lock()
	c.read += len(got)
	c.mu.Unlock()
	return got, err
}

func (c *countingStore) takeRead() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.read
	c.read = 0
	return n
}

// deletingRooms is a LiveKit whose rooms are always gone when deleted: the sweeper's
// ends then leave no room pending.
type deletingRooms struct{ session.NoRooms }

func (deletingRooms) DeleteRoom(context.Context, string) error { return nil }

// TestSweepReadsWhatIsDue: a sweep reads the sessions whose time has come, not every
// live one. Sessions written without a due time (before the index existed) are read
// once, at the first sweep, which writes each its due time from the service's limits
// and ends none; from then on a sweep reads only the sessions a limit takes, and ends
// each. A service with a longer limit than the one a session was written under finds
// it due early, ends nothing and moves its due time. An ended session whose room is
// still to be deleted is read at every sweep until the deletion succeeds.
func TestSweepReadsWhatIsDue(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t, "sweep.db")
	cs := &countingStore{Store: st}
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	now := t0
	const maxDur, ring, dispatch = time.Hour, 90 * time.Second, 15 * time.Second
	newService := func(maxDur time.Duration) *session.Service {
		svc, err := session.New(cs, deletingRooms{}, session.WithClock(func() time.Time { return now }),
			session.WithLog(slog.New(slog.DiscardHandler)),
			session.WithMaxDuration(maxDur), session.WithRingTimeout(ring), session.WithDispatchTimeout(dispatch))
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	svc := newService(maxDur)
	sweep := func(t *testing.T, svc *session.Service, at time.Time, wantRead, wantEnded int) {
		t.Helper()
		now = at
		n, err := svc.Sweep(ctx)
		if err != nil {
			t.Fatalf("Sweep at +%v: %v", at.Sub(t0), err)
		}
		if read := cs.takeRead(); read != wantRead || n != wantEnded {
			t.Errorf("Sweep at +%v read %d sessions and ended %d; want %d read, %d ended", at.Sub(t0), read, n, wantRead, wantEnded)
		}
	}
	save := func(t *testing.T, mode, status string, answered *time.Time) session.Session {
		t.Helper()
		acct := ident.New("acct")
		ses := session.Session{ID: ident.New("ses"), AccountID: acct, Mode: mode, Media: "audio",
			PlatformHandle: "+15557654321", Status: status, CreatedAt: t0, AnsweredAt: answered}
		c := call.Call{ID: ident.New("call"), AccountID: acct, Direction: call.Outbound, Media: "audio",
			Status: call.StatusRinging, HandledBy: call.HandledByCustomer, SessionID: ses.ID, Platform: sim.Name, StartedAt: t0}
		if status == session.StatusActive {
			c.Status, c.AnsweredAt = call.StatusActive, answered
		}
		ses.CallID = c.ID
		if err := st.SaveSession(ctx, ses, c, nil); err != nil {
			t.Fatal(err)
		}
		return ses
	}
	sweepAt := func(t *testing.T, id string) time.Time {
		t.Helper()
		ses, err := st.GetSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if ses.SweepAt == nil {
			return time.Time{}
		}
		return *ses.SweepAt
	}

	answered := t0.Add(2 * time.Second)
	var active []session.Session
	for range 40 {
		active = append(active, save(t, session.ModeHuman, session.StatusActive, &answered))
	}
	ringing := save(t, session.ModeHuman, session.StatusRinging, nil)
	unattended := save(t, session.ModeAssistant, session.StatusActive, &answered)

	// Written without a due time: all read once, none ended, each given its time.
	sweep(t, svc, t0.Add(time.Second), 42, 0)
	for _, c := range []struct {
		name string
		id   string
		want time.Time
	}{
		{"active: the maximum duration", active[0].ID, t0.Add(maxDur)},
		{"ringing: the ring timeout", ringing.ID, t0.Add(ring)},
		{"assistant unreported: the dispatch timeout", unattended.ID, answered.Add(dispatch)},
	} {
		if got := sweepAt(t, c.id); !got.Equal(c.want) {
			t.Errorf("%s: SweepAt = %v, want %v", c.name, got, c.want)
		}
	}
	sweep(t, svc, t0.Add(2*time.Second), 0, 0)
	sweep(t, svc, answered.Add(dispatch), 1, 1)
	sweep(t, svc, t0.Add(ring-time.Millisecond), 0, 0)
	sweep(t, svc, t0.Add(ring), 1, 1)
	for _, c := range []struct {
		id, reason string
	}{{unattended.ID, call.ReasonAssistantUnavailable}, {ringing.ID, call.ReasonNoAnswer}} {
		if got, err := st.GetSession(ctx, c.id); err != nil || got.EndReason != c.reason || got.SweepAt != nil {
			t.Errorf("swept session = %s %s, due %v, %v; want ended with %s, out of the index", got.Status, got.EndReason, got.SweepAt, err, c.reason)
		}
	}

	// Under a longer maximum the active sessions come due early: nothing ends, and each
	// gets the later time.
	longer := newService(2 * maxDur)
	sweep(t, longer, t0.Add(maxDur), 40, 0)
	if got := sweepAt(t, active[0].ID); !got.Equal(t0.Add(2 * maxDur)) {
		t.Errorf("after a sweep under a longer maximum, SweepAt = %v, want %v", got, t0.Add(2*maxDur))
	}
	sweep(t, svc, t0.Add(maxDur+time.Second), 0, 0)
	sweep(t, longer, t0.Add(2*maxDur), 40, 40)
	sweep(t, longer, t0.Add(3*maxDur), 0, 0)

	// A room LiveKit does not confirm deleted keeps its ended session due, at every
	// sweep, until a deletion succeeds.
	noLiveKit, err := session.New(cs, session.NoRooms{}, session.WithClock(func() time.Time { return now }),
		session.WithLog(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	now = t0.Add(4 * maxDur)
	gone := save(t, session.ModeHuman, session.StatusActive, &answered)
	if _, err := noLiveKit.Delete(ctx, gone.AccountID, gone.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetSession(ctx, gone.ID); !got.RoomPending || got.SweepAt == nil || !got.SweepAt.Equal(now) {
		t.Fatalf("deleted session whose room deletion failed: pending %v, due %v; want pending, due at its end %v", got.RoomPending, got.SweepAt, now)
	}
	for range 2 {
		if _, err := noLiveKit.Sweep(ctx); err == nil {
			t.Error("Sweep without LiveKit returned no error for the room it could not delete")
		}
		if read := cs.takeRead(); read != 1 {
			t.Errorf("Sweep read %d sessions, want the one whose room is pending", read)
		}
	}
	sweep(t, svc, now.Add(time.Second), 1, 0)
	sweep(t, svc, now.Add(2*time.Second), 0, 0)
	if got, _ := st.GetSession(ctx, gone.ID); got.RoomPending || got.SweepAt != nil {
		t.Errorf("after the room was deleted: pending %v, due %v; want neither", got.RoomPending, got.SweepAt)
	}
}

// TestAgentJoinProvesTheAssistant (issue 22, finding 2): a persona worker's participant
// joining an assistant call's room (LiveKit's participant_joined, kind AGENT) is proof
// that a worker took the call, as its first report is. A call whose reports never arrive
// (a flood, an outage of the report path) is then not ended assistant_unavailable by the
// dispatch watchdog; one whose assistant neither joined nor reported still is. A
// customer's client, or a participant merely named like an assistant, proves nothing.
func TestAgentJoinProvesTheAssistant(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t, "join.db")
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	now := t0
	const dispatch = 15 * time.Second
	svc, err := session.New(st, deletingRooms{}, session.WithClock(func() time.Time { return now }),
		session.WithLog(slog.New(slog.DiscardHandler)), session.WithDispatchTimeout(dispatch))
	if err != nil {
		t.Fatal(err)
	}
	answered := t0.Add(2 * time.Second)
	save := func() session.Session {
		acct := ident.New("acct")
		ses := session.Session{ID: ident.New("ses"), AccountID: acct, Mode: session.ModeAssistant, Media: "audio",
			PlatformHandle: "+15557654321", Status: session.StatusActive, CreatedAt: t0, AnsweredAt: &answered}
		c := call.Call{ID: ident.New("call"), AccountID: acct, Direction: call.Outbound, Media: "audio",
			Status: call.StatusActive, AnsweredAt: &answered, HandledBy: call.HandledByAssistant, SessionID: ses.ID,
			Platform: sim.Name, StartedAt: t0}
		ses.CallID = c.ID
		if err := st.SaveSession(ctx, ses, c, nil); err != nil {
			t.Fatal(err)
		}
		return ses
	}
	joined, unseen, customer, named := save(), save(), save(), save()
	now = answered.Add(time.Second)
	for _, j := range []struct {
		room string
		p    rtc.Participant
	}{
		{joined.ID, rtc.Participant{Identity: "assistant-AJ_1", Kind: rtc.KindAgent}},
		{customer.ID, rtc.Participant{Identity: session.CustomerIdentityPrefix + "x", Kind: rtc.KindStandard}},
		{named.ID, rtc.Participant{Identity: "assistant-AJ_2", Kind: rtc.KindStandard}},
	} {
		p := j.p
		if err := svc.HandleLiveKit(ctx, rtc.WebhookEvent{Event: rtc.EventParticipantJoined, Room: j.room, Participant: &p}); err != nil {
			t.Fatalf("participant_joined %s: %v", p.Identity, err)
		}
	}
	// A redelivered join changes nothing.
	p := rtc.Participant{Identity: "assistant-AJ_1", Kind: rtc.KindAgent}
	if err := svc.HandleLiveKit(ctx, rtc.WebhookEvent{Event: rtc.EventParticipantJoined, Room: joined.ID, Participant: &p}); err != nil {
		t.Fatal(err)
	}
	now = answered.Add(dispatch)
	if _, err := svc.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, id, status, reason string
	}{
		{"assistant joined, no report", joined.ID, session.StatusActive, ""},
		{"neither joined nor reported", unseen.ID, session.StatusFailed, call.ReasonAssistantUnavailable},
		{"only a customer client joined", customer.ID, session.StatusFailed, call.ReasonAssistantUnavailable},
		{"a standard participant named assistant-", named.ID, session.StatusFailed, call.ReasonAssistantUnavailable},
	} {
		got, err := st.GetSession(ctx, c.id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != c.status || got.EndReason != c.reason {
			t.Errorf("%s: after the dispatch timeout the session is %s (%s), want %s (%s)", c.name, got.Status, got.EndReason, c.status, c.reason)
		}
	}
	if got, _ := st.GetSession(ctx, joined.ID); got.AssistantSeenAt == nil || !got.AssistantSeenAt.Equal(answered.Add(time.Second)) {
		t.Errorf("joined session AssistantSeenAt = %v, want the join's time %v", got.AssistantSeenAt, answered.Add(time.Second))
	}
}
