package call

import (
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/persona"
)

// The record's recording through a call's life: pending from the version, available or
// failed by the worker's recording report (a late file still makes a failed one
// available; nothing changes a deleted one), gone when the call ended unanswered,
// failed when the worker never reported, and deleted once.
func TestRecordingLife(t *testing.T) {
	stored := &persona.RecordingResult{Key: "acct_x/call_y.ogg", Format: "ogg_opus", DurationMS: 1200, SizeBytes: 900}
	failed := &persona.RecordingResult{Error: "the recording could not be stored"}
	for _, c := range []struct {
		name        string
		from        *Recording
		report      *persona.RecordingResult
		want        string
		changed, ok bool
	}{
		{"not recorded", nil, stored, "", false, false},
		{"stored", &Recording{Status: RecordingPending}, stored, RecordingAvailable, true, true},
		{"not stored", &Recording{Status: RecordingPending}, failed, RecordingFailed, true, false},
		{"late file", &Recording{Status: RecordingFailed, Failure: "x"}, stored, RecordingAvailable, true, true},
		{"redelivered", &Recording{Status: RecordingAvailable, Key: stored.Key}, stored, RecordingAvailable, false, false},
		{"error after the file", &Recording{Status: RecordingAvailable, Key: stored.Key}, failed, RecordingAvailable, false, false},
		{"deleted stays", &Recording{Status: RecordingDeleted, Key: stored.Key}, stored, RecordingDeleted, false, false},
		{"no result", &Recording{Status: RecordingPending}, nil, RecordingPending, false, false},
	} {
		call := Call{Recording: c.from}
		changed, ready := call.RecordingReported(c.report)
		if call.RecordingStatus() != c.want || changed != c.changed || ready != c.ok {
			t.Errorf("%s: %q changed %v ready %v; want %q %v %v", c.name, call.RecordingStatus(), changed, ready, c.want, c.changed, c.ok)
		}
	}

	now := time.Now()
	c := Call{Status: StatusRinging}
	c.Record(true)
	c.End(StatusEnded, ReasonNoAnswer, EndedByRemote, now, func() string { return "evt_1" })
	if c.Recording != nil {
		t.Errorf("unanswered call's recording: %+v, want none", c.Recording)
	}
	c = Call{Status: StatusRinging}
	c.Record(true)
	c.Answer(now)
	c.End(StatusEnded, ReasonRemoteHangup, EndedByRemote, now.Add(time.Second), func() string { return "evt_2" })
	if c.RecordingStatus() != RecordingPending {
		t.Errorf("answered call's recording at its end: %q, want pending", c.RecordingStatus())
	}
	c.RecordingUnreported()
	if c.RecordingStatus() != RecordingFailed || c.Recording.Failure == "" {
		t.Errorf("unreported: %+v, want failed with a reason", c.Recording)
	}
	if _, ok := c.DeleteRecording(now); ok {
		t.Error("a failed recording was deleted")
	}
	c.RecordingReported(stored)
	key, ok := c.DeleteRecording(now)
	if !ok || key != stored.Key || c.RecordingStatus() != RecordingDeleted || c.Recording.DeletedAt == nil {
		t.Errorf("delete: %q %v %+v", key, ok, c.Recording)
	}
	if again, ok := c.DeleteRecording(now); !ok || again != stored.Key {
		t.Errorf("second delete: %q %v; want the key again, to delete the file again", again, ok)
	}
	c.Record(false)
	if c.Recording != nil {
		t.Error("Record(false) left a recording")
	}
}

// TestRecordingGone: only an available recording with the same file becomes deleted by
// its store's retention; a pending, failed or already deleted one, or one with another
// file, is left alone.
func TestRecordingGone(t *testing.T) {
	at := time.Date(2026, 11, 27, 7, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		rec  *Recording
		key  string
		want bool
	}{
		{"available", &Recording{Status: RecordingAvailable, Key: "k"}, "k", true},
		{"another file", &Recording{Status: RecordingAvailable, Key: "k2"}, "k", false},
		{"deleted", &Recording{Status: RecordingDeleted, Key: "k"}, "k", false},
		{"pending", &Recording{Status: RecordingPending}, "k", false},
		{"failed", &Recording{Status: RecordingFailed}, "k", false},
		{"not recorded", nil, "k", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Call{Recording: tc.rec}
			before := c.RecordingStatus()
			if got := c.RecordingGone(tc.key, at, RecordingExpired); got != tc.want {
				t.Fatalf("RecordingGone = %v, want %v", got, tc.want)
			}
			if !tc.want {
				if c.RecordingStatus() != before {
					t.Errorf("status %q, want %q unchanged", c.RecordingStatus(), before)
				}
				return
			}
			r := c.Recording
			if r.Status != RecordingDeleted || r.Gone != RecordingExpired || r.DeletedAt == nil || !r.DeletedAt.Equal(at) || r.Key != "k" {
				t.Errorf("recording %+v, want deleted by retention at %v", r, at)
			}
		})
	}
}
