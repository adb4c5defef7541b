package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/session"
)

// TestRecordingReady: the worker's recording report with a stored file makes the
// record's recording available and writes recording.ready (what the file holds, no URL)
// after call.ended, exactly once however often the report is redelivered, also when
// redeliveries race; a report without a file writes none; a late file after the
// control plane failed the recording (no report in time) writes it then, once.
func TestRecordingReady(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t, "ready.db")
	now := time.Now().UTC().Truncate(time.Millisecond)
	svc, err := session.New(st, deletingRooms{}, session.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	acct := ident.New("acct")

	// ended saves an answered, recorded assistant call whose worker's ended report came.
	ended := func(t *testing.T) call.Call {
		t.Helper()
		answered, seen := now.Add(-10*time.Second), now.Add(-9*time.Second)
		ses := session.Session{ID: ident.New("ses"), AccountID: acct, Mode: session.ModeAssistant, Media: "audio",
			Status: session.StatusActive, CreatedAt: answered, AnsweredAt: &answered, AssistantSeenAt: &seen}
		c := call.Call{ID: ident.New("call"), AccountID: acct, Direction: call.Inbound, Media: "audio",
			Status: call.StatusActive, HandledBy: call.HandledByAssistant, SessionID: ses.ID, StartedAt: answered,
			AnsweredAt: &answered, Metadata: map[string]string{"order_id": "6735"}}
		c.Record(true)
		ses.CallID = c.ID
		if err := st.SaveSession(ctx, ses, c, nil); err != nil {
			t.Fatal(err)
		}
		if err := svc.HandleReport(ctx, persona.Report{Kind: persona.ReportEnded, CallID: c.ID, SessionID: c.SessionID,
			At: now, EndReason: persona.EndCallerHangup}); err != nil {
			t.Fatal(err)
		}
		return c
	}
	stored := func(c call.Call) persona.Report {
		return persona.Report{Kind: persona.ReportRecording, CallID: c.ID, SessionID: c.SessionID, At: now,
			Recording: &persona.RecordingResult{Key: acct + "/" + c.ID + ".ogg", Format: "ogg_opus", DurationMS: 9876, SizeBytes: 81234}}
	}
	readyCount := func(t *testing.T, c call.Call) int {
		t.Helper()
		evts, err := st.ListEvents(ctx, acct, callevent.TypeRecordingReady, listing.Query{Limit: listing.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range evts {
			if eventtest.ForCall(c.ID)(e.Data) {
				n++
			}
		}
		return n
	}
	status := func(t *testing.T, c call.Call) string {
		t.Helper()
		got, err := st.GetCall(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.RecordingStatus()
	}

	t.Run("another call's key is refused", func(t *testing.T) {
		c, victim := ended(t), ended(t)
		for _, key := range []string{acct + "/" + victim.ID + ".ogg", ident.New("acct") + "/" + c.ID + ".ogg", "../" + c.ID + ".ogg"} {
			rep := stored(c)
			rep.Recording.Key = key
			var ae *apierr.Error
			if err := svc.HandleReport(ctx, rep); !errors.As(err, &ae) || ae.Code != apierr.CodeParameterInvalid || ae.Param != "recording.key" {
				t.Errorf("report naming key %q = %v, want parameter_invalid on recording.key", key, err)
			}
		}
		if s := status(t, c); s != call.RecordingPending {
			t.Errorf("recording after the refused reports %q, want still pending", s)
		}
		if n := readyCount(t, c); n != 0 {
			t.Errorf("recording.ready after the refused reports: %d, want none", n)
		}
	})

	t.Run("stored, redelivered", func(t *testing.T) {
		c := ended(t)
		for range 3 {
			if err := svc.HandleReport(ctx, stored(c)); err != nil {
				t.Fatal(err)
			}
		}
		if s := status(t, c); s != call.RecordingAvailable {
			t.Fatalf("recording %q, want available", s)
		}
		endedEvt := eventtest.ExactlyOnce(t, st, acct, callevent.TypeCallEnded, c.ID)
		evt := eventtest.ExactlyOnce(t, st, acct, callevent.TypeRecordingReady, c.ID)
		if evt.CreatedAt.Before(endedEvt.CreatedAt) {
			t.Errorf("recording.ready at %v before call.ended at %v", evt.CreatedAt, endedEvt.CreatedAt)
		}
		var data callevent.RecordingReady
		if err := json.Unmarshal(evt.Data, &data); err != nil {
			t.Fatal(err)
		}
		if data.CallID != c.ID || data.SessionID != c.SessionID || data.Direction != call.Inbound || data.DurationMS != 9876 ||
			data.SizeBytes != 81234 || data.Format != "ogg_opus" || data.Metadata["order_id"] != "6735" {
			t.Errorf("recording.ready data = %s", evt.Data)
		}
		var raw map[string]any
		if err := json.Unmarshal(evt.Data, &raw); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"url", "key", "expires_at"} {
			if _, ok := raw[k]; ok {
				t.Errorf("recording.ready carries %s: %s", k, evt.Data)
			}
		}
	})

	t.Run("redeliveries race", func(t *testing.T) {
		c := ended(t)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- svc.HandleReport(ctx, stored(c))
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if n := readyCount(t, c); n != 1 {
			t.Fatalf("%d recording.ready events, want 1", n)
		}
	})

	t.Run("no file", func(t *testing.T) {
		c := ended(t)
		rep := stored(c)
		rep.Recording = &persona.RecordingResult{Error: "the store refused it"}
		if err := svc.HandleReport(ctx, rep); err != nil {
			t.Fatal(err)
		}
		if s := status(t, c); s != call.RecordingFailed {
			t.Fatalf("recording %q, want failed", s)
		}
		if n := readyCount(t, c); n != 0 {
			t.Fatalf("%d recording.ready events for a failed recording", n)
		}
		// The file after all (a redelivered report that did store it): available, once.
		for range 2 {
			if err := svc.HandleReport(ctx, stored(c)); err != nil {
				t.Fatal(err)
			}
		}
		if s := status(t, c); s != call.RecordingAvailable {
			t.Fatalf("recording %q, want available", s)
		}
		if n := readyCount(t, c); n != 1 {
			t.Fatalf("%d recording.ready events, want 1", n)
		}
	})
}
