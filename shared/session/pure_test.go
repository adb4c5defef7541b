package session

import (
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/persona"
)

func TestCallStatus(t *testing.T) {
	tests := []struct {
		name, sessionStatus, reason, want string
	}{
		{"customer declined", StatusFailed, call.ReasonDeclined, call.StatusDeclined},
		{"decision timed out", StatusFailed, call.ReasonDecisionTimeout, call.StatusDeclined},
		{"declined wins over ended", StatusEnded, call.ReasonDeclined, call.StatusDeclined},
		{"no answer", StatusFailed, call.ReasonNoAnswer, call.StatusFailed},
		{"busy", StatusFailed, call.ReasonBusy, call.StatusFailed},
		{"assistant unavailable", StatusFailed, call.ReasonAssistantUnavailable, call.StatusFailed},
		{"deleted", StatusEnded, call.ReasonDeleted, call.StatusEnded},
		{"remote hang-up", StatusEnded, call.ReasonRemoteHangup, call.StatusEnded},
		{"max duration", StatusEnded, call.ReasonMaxDuration, call.StatusEnded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := callStatus(tc.sessionStatus, tc.reason); got != tc.want {
				t.Errorf("callStatus(%s, %s) = %s, want %s", tc.sessionStatus, tc.reason, got, tc.want)
			}
		})
	}
}

func TestReportEnd(t *testing.T) {
	tests := []struct {
		worker                string
		status, reason, endBy string
	}{
		{persona.EndCallerHangup, StatusEnded, call.ReasonRemoteHangup, call.EndedByRemote},
		{persona.EndAssistantHangup, StatusEnded, call.ReasonAssistantHangup, call.EndedByAssistant},
		{persona.EndMediaFailed, StatusFailed, call.ReasonMediaFailed, call.EndedByAssistant},
		{persona.EndRoomClosed, StatusEnded, call.ReasonRoomClosed, call.EndedBySystem},
		{persona.EndTerminated, StatusEnded, call.ReasonAssistantError, call.EndedBySystem},
		{persona.EndWorkerShutdown, StatusEnded, call.ReasonAssistantError, call.EndedByAssistant},
		{persona.EndError, StatusEnded, call.ReasonAssistantError, call.EndedByAssistant},
		{"a reason newer than this code", StatusEnded, call.ReasonAssistantError, call.EndedByAssistant},
	}
	for _, tc := range tests {
		t.Run(tc.worker, func(t *testing.T) {
			status, reason, by := reportEnd(tc.worker)
			if status != tc.status || reason != tc.reason || by != tc.endBy {
				t.Errorf("reportEnd(%s) = %s, %s, %s; want %s, %s, %s", tc.worker, status, reason, by, tc.status, tc.reason, tc.endBy)
			}
		})
	}
}

// TestSweepConditions: which live session each of Sweep's limits takes, at its bound.
func TestSweepConditions(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(d time.Duration) *time.Time { v := t0.Add(d); return &v }
	const limit = time.Minute
	tests := []struct {
		name                    string
		ses                     Session
		now                     time.Time
		tooLong, ringing, unatt bool
		overdue, live           bool
	}{
		{name: "ringing within the bound", ses: Session{Status: StatusRinging, CreatedAt: t0},
			now: t0.Add(limit - time.Millisecond), live: true},
		{name: "ringing at the bound", ses: Session{Status: StatusRinging, CreatedAt: t0},
			now: t0.Add(limit), tooLong: true, ringing: true, live: true},
		{name: "active human past the bound", ses: Session{Status: StatusActive, Mode: ModeHuman, CreatedAt: t0, AnsweredAt: at(0)},
			now: t0.Add(2 * limit), tooLong: true, live: true},
		{name: "assistant answered, no report", ses: Session{Status: StatusActive, Mode: ModeAssistant, CreatedAt: t0, AnsweredAt: at(0)},
			now: t0.Add(limit), tooLong: true, unatt: true, live: true},
		{name: "assistant answered, reported", ses: Session{Status: StatusActive, Mode: ModeAssistant, CreatedAt: t0, AnsweredAt: at(0), AssistantSeenAt: at(time.Second)},
			now: t0.Add(limit), tooLong: true, live: true},
		{name: "ended, held, report due", ses: Session{Status: StatusEnded, CreatedAt: t0, ReportDueAt: at(limit)},
			now: t0.Add(limit), overdue: true, live: true},
		{name: "ended, held, report not yet due", ses: Session{Status: StatusEnded, CreatedAt: t0, ReportDueAt: at(limit)},
			now: t0.Add(limit - time.Millisecond), live: true},
		{name: "ended, room pending", ses: Session{Status: StatusEnded, CreatedAt: t0, RoomPending: true},
			now: t0.Add(2 * limit), live: true},
		{name: "failed", ses: Session{Status: StatusFailed, CreatedAt: t0}, now: t0.Add(2 * limit)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tooLong(tc.ses, tc.now, limit); got != tc.tooLong {
				t.Errorf("tooLong = %v, want %v", got, tc.tooLong)
			}
			if got := ringingTooLong(tc.ses, tc.now, limit); got != tc.ringing {
				t.Errorf("ringingTooLong = %v, want %v", got, tc.ringing)
			}
			if got := unattended(tc.ses, tc.now, limit); got != tc.unatt {
				t.Errorf("unattended = %v, want %v", got, tc.unatt)
			}
			if got := reportOverdue(tc.ses, tc.now); got != tc.overdue {
				t.Errorf("reportOverdue = %v, want %v", got, tc.overdue)
			}
			if got := tc.ses.Live(); got != tc.live {
				t.Errorf("Live = %v, want %v", got, tc.live)
			}
		})
	}
}

// TestPlatformID: the id a call is hung up by, and recording the platform's id from a
// notification once.
func TestPlatformID(t *testing.T) {
	tests := []struct {
		name string
		c    call.Call
		pcid string // a notification's
		want string // platformID after notePlatformID
		note bool   // notePlatformID's answer
	}{
		{name: "outbound, no notification yet", c: call.Call{ID: "call_1", Direction: call.Outbound}, want: "call_1"},
		{name: "outbound, first notification", c: call.Call{ID: "call_1", Direction: call.Outbound}, pcid: "simcall_9",
			want: "simcall_9", note: true},
		{name: "outbound, recorded already", c: call.Call{ID: "call_1", Direction: call.Outbound, PlatformCallID: "simcall_9"},
			pcid: "simcall_other", want: "simcall_9"},
		{name: "inbound", c: call.Call{ID: "call_2", Direction: call.Inbound, PlatformCallID: "simcall_7"}, want: "simcall_7"},
		{name: "inbound without a platform call", c: call.Call{ID: "call_3", Direction: call.Inbound}, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			if got := notePlatformID(&c, tc.pcid); got != tc.note {
				t.Errorf("notePlatformID = %v, want %v", got, tc.note)
			}
			if got := platformID(c); got != tc.want {
				t.Errorf("platformID = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCallSettingsNoiseSuppression: a version's noise_suppression reaches its worker's
// job, and a job without the field (a version from before it) suppresses noise.
func TestCallSettingsNoiseSuppression(t *testing.T) {
	if got := callSettings(assistant.CallSettings{}); got.NoiseSuppressionOff {
		t.Error("a version with noise suppression on gave a job with it off")
	}
	if got := callSettings(assistant.CallSettings{NoiseSuppressionOff: true}); !got.NoiseSuppressionOff {
		t.Error("a version with noise suppression off gave a job with it on")
	}
}

// TestCallSettingsVision: a version's vision reaches its worker's job.
func TestCallSettingsVision(t *testing.T) {
	if got := callSettings(assistant.CallSettings{}); got.Vision != "" {
		t.Errorf("a version without vision gave a job with vision %q", got.Vision)
	}
	if got := callSettings(assistant.CallSettings{Vision: persona.VisionCamera}); got.Vision != persona.VisionCamera {
		t.Errorf("a version with vision camera gave a job with vision %q", got.Vision)
	}
}
