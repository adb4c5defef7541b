package session_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// TestHeldCallEnded: call.ended of an assistant call that ended before its worker's final
// report is written once, by whichever comes first: the report (in the same write as the
// transcript, so the record is complete when the event exists) or the sweeper once the
// wait is over (the record then says the report is missing). The whole-stack tests
// (TestAssistantLeaving, TestWorkerReportsEndCalls) show the hold being taken; these
// cases start from a held session, on the real SQLite store, and need no media.
func TestHeldCallEnded(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t, "held.db")
	svc, err := session.New(st, session.NoRooms{})
	if err != nil {
		t.Fatal(err)
	}
	acct := ident.New("acct")
	turns := []persona.Turn{{Speaker: persona.SpeakerAssistant, Text: "Hello there.", StartMS: 800, EndMS: 1900}}
	final := func(c call.Call) persona.Report {
		return persona.Report{Kind: persona.ReportEnded, CallID: c.ID, SessionID: c.SessionID, At: time.Now(),
			EndReason: persona.EndRoomClosed, Transcript: turns}
	}

	// held saves an assistant call that ended (DELETE) 1 s ago while its worker had not
	// sent its final report: its call.ended waits until due.
	held := func(t *testing.T, due time.Time) (session.Session, call.Call) {
		t.Helper()
		now := time.Now().UTC().Truncate(time.Millisecond)
		answered, ended, seen := now.Add(-10*time.Second), now.Add(-time.Second), now.Add(-9*time.Second)
		d := ended.Sub(answered).Milliseconds()
		ses := session.Session{ID: ident.New("ses"), AccountID: acct, Mode: session.ModeAssistant, Media: "audio",
			Status: session.StatusEnded, EndReason: call.ReasonDeleted, CreatedAt: answered, AnsweredAt: &answered,
			EndedAt: &ended, AssistantSeenAt: &seen, ReportDueAt: &due, Metadata: map[string]string{"order_id": "6735"}}
		c := call.Call{ID: ident.New("call"), AccountID: acct, Direction: call.Outbound, Media: "audio",
			Status: call.StatusEnded, HandledBy: call.HandledByAssistant, SessionID: ses.ID, StartedAt: answered,
			AnsweredAt: &answered, EndedAt: &ended, DurationMS: &d, EndReason: call.ReasonDeleted, EndedBy: call.EndedByCustomer,
			Metadata: map[string]string{"ticket": "T-1"}}
		ses.CallID = c.ID
		if err := st.SaveSession(ctx, ses, c, nil); err != nil {
			t.Fatal(err)
		}
		if n := countEvents(t, st, acct, c.ID); n != 0 {
			t.Fatalf("held call has %d call.ended events before anything released it", n)
		}
		return ses, c
	}
	// check: one call.ended with the end's data; the record's report state; the session
	// no longer held nor in the sweep index.
	check := func(t *testing.T, ses session.Session, c call.Call, report string, wantTurns int) {
		t.Helper()
		evt := eventtest.ExactlyOnce(t, st, acct, callevent.TypeCallEnded, c.ID)
		data := decodeEnded(t, evt)
		if data.EndReason != call.ReasonDeleted || !data.EndedAt.Equal(*c.EndedAt) || data.DurationMS != *c.DurationMS ||
			data.SessionID != ses.ID || data.HandledBy != call.HandledByAssistant {
			t.Errorf("call.ended data = %+v, want the end as it was recorded (%s, %v, %d ms)", data, call.ReasonDeleted, *c.EndedAt, *c.DurationMS)
		}
		// Released late, by the report or the sweeper, it still echoes both metadata.
		if data.Metadata["ticket"] != "T-1" || data.SessionMetadata["order_id"] != "6735" {
			t.Errorf("held call.ended metadata = %v, session_metadata = %v; want the call's and the session's", data.Metadata, data.SessionMetadata)
		}
		got, err := st.GetCall(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.AssistantReport != report || len(got.Transcript) != wantTurns || got.Status != call.StatusEnded {
			t.Errorf("record: assistant_report %q, %d turns, status %s; want %q, %d turns, ended", got.AssistantReport, len(got.Transcript), got.Status, report, wantTurns)
		}
		s, _ := st.GetSession(ctx, ses.ID)
		if s.Held() {
			t.Errorf("session still held after call.ended: due %v", s.ReportDueAt)
		}
		due, err := st.DueSessions(ctx, time.Now().Add(24*time.Hour), session.DueKey{}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range due {
			if l.ID == ses.ID {
				t.Errorf("released session %s is still in the sweep index", ses.ID)
			}
		}
	}

	t.Run("the final report releases it with the transcript", func(t *testing.T) {
		ses, c := held(t, time.Now().Add(time.Hour))
		if err := svc.HandleReport(ctx, final(c)); err != nil {
			t.Fatal(err)
		}
		check(t, ses, c, call.ReportReceived, 1)
		// A redelivered report changes nothing.
		if err := svc.HandleReport(ctx, final(c)); err != nil {
			t.Fatal(err)
		}
		check(t, ses, c, call.ReportReceived, 1)
	})

	t.Run("a report that is not the final one does not release it", func(t *testing.T) {
		_, c := held(t, time.Now().Add(time.Hour))
		g := int64(700)
		if err := svc.HandleReport(ctx, persona.Report{Kind: persona.ReportGreeting, CallID: c.ID, SessionID: c.SessionID,
			At: time.Now(), Metrics: persona.Metrics{FirstGreetingMS: &g}}); err != nil {
			t.Fatal(err)
		}
		if n := countEvents(t, st, acct, c.ID); n != 0 {
			t.Errorf("a greeting report released call.ended (%d events)", n)
		}
	})

	t.Run("the sweeper leaves it while the wait lasts", func(t *testing.T) {
		ses, c := held(t, time.Now().Add(time.Hour))
		if _, err := svc.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if n := countEvents(t, st, acct, c.ID); n != 0 {
			t.Errorf("the sweeper released call.ended %d times before the wait was over", n)
		}
		if s, _ := st.GetSession(ctx, ses.ID); !s.Held() {
			t.Error("the sweeper released the hold before the wait was over")
		}
	})

	t.Run("the sweeper releases it without the report once the wait is over", func(t *testing.T) {
		ses, c := held(t, time.Now().Add(-time.Millisecond))
		n, err := svc.Sweep(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("Sweep counted %d ends; a release is not an end", n)
		}
		check(t, ses, c, call.ReportMissing, 0)
		// The report that comes late fills in the record; call.ended is not sent again.
		if err := svc.HandleReport(ctx, final(c)); err != nil {
			t.Fatal(err)
		}
		check(t, ses, c, call.ReportReceived, 1)
	})

	t.Run("the report and the sweeper racing release it once", func(t *testing.T) {
		for range 5 {
			ses, c := held(t, time.Now().Add(-time.Millisecond))
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			wg.Add(2)
			go func() { defer wg.Done(); errs <- svc.HandleReport(ctx, final(c)) }()
			go func() { defer wg.Done(); _, err := svc.Sweep(ctx); errs <- err }()
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			// Whoever won, the transcript is in the record now.
			got, _ := st.GetCall(ctx, c.ID)
			check(t, ses, c, got.AssistantReport, 1)
			if got.AssistantReport != call.ReportReceived && got.AssistantReport != call.ReportMissing {
				t.Errorf("assistant_report %q after the race", got.AssistantReport)
			}
		}
	})
}

func countEvents(t *testing.T, st *sqlite.Store, acct, callID string) int {
	t.Helper()
	evts, err := st.ListEvents(context.Background(), acct, callevent.TypeCallEnded, listing.Query{Limit: listing.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evts {
		if eventtest.ForCall(callID)(e.Data) {
			n++
		}
	}
	return n
}

func decodeEnded(t *testing.T, evt callevent.Event) callevent.CallEnded {
	t.Helper()
	var data callevent.CallEnded
	if err := json.Unmarshal(evt.Data, &data); err != nil {
		t.Fatalf("call.ended data %s: %v", evt.Data, err)
	}
	return data
}

// openSQLite opens a fresh SQLite store named name in the test's temporary folder and
// closes it when the test ends.
func openSQLite(t *testing.T, name string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
