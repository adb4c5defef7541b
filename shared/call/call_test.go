package call_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/call"
)

// TestEnd: a call ends once, with its status, reason, who ended it and its duration from
// the answer (0 when never answered), and call.ended carries the same; ending it again
// changes nothing and emits nothing.
func TestEnd(t *testing.T) {
	start := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	ids := 0
	newID := func() string { ids++; return "evt_" + string(rune('a'+ids)) }
	for _, tc := range []struct {
		name             string
		answeredAfter    time.Duration // 0: never answered
		endAfter         time.Duration
		status, reason   string
		by               string
		wantDurationMS   int64
		alreadyOver      string // a final status the call has before End
		wantChangedEvent bool
	}{
		{name: "answered, then hung up", answeredAfter: 2 * time.Second, endAfter: 65 * time.Second,
			status: call.StatusEnded, reason: call.ReasonRemoteHangup, by: call.EndedByRemote, wantDurationMS: 63000, wantChangedEvent: true},
		{name: "never answered", endAfter: 30 * time.Second, status: call.StatusFailed, reason: call.ReasonNoAnswer,
			by: call.EndedByRemote, wantDurationMS: 0, wantChangedEvent: true},
		{name: "an end stamped before the answer counts 0", answeredAfter: 10 * time.Second, endAfter: 9 * time.Second,
			status: call.StatusEnded, reason: call.ReasonDeleted, by: call.EndedByCustomer, wantDurationMS: 0, wantChangedEvent: true},
		{name: "already ended", alreadyOver: call.StatusEnded, endAfter: time.Minute, status: call.StatusFailed, reason: call.ReasonMaxDuration, by: call.EndedBySystem},
		{name: "already declined", alreadyOver: call.StatusDeclined, endAfter: time.Minute, status: call.StatusEnded, reason: call.ReasonDeleted, by: call.EndedByCustomer},
	} {
		c := call.Call{ID: "call_1", AccountID: "acct_1", Status: call.StatusRinging, StartedAt: start, Direction: call.Inbound}
		if tc.answeredAfter > 0 {
			c.Answer(start.Add(tc.answeredAfter))
			if c.Status != call.StatusActive || c.Over() {
				t.Fatalf("%s: after Answer status %q, over %v", tc.name, c.Status, c.Over())
			}
		}
		if tc.alreadyOver != "" {
			c.Status = tc.alreadyOver
		}
		before := c
		evt, changed := c.End(tc.status, tc.reason, tc.by, start.Add(tc.endAfter), newID)
		if changed != tc.wantChangedEvent {
			t.Errorf("%s: End changed = %v, want %v", tc.name, changed, tc.wantChangedEvent)
		}
		if !changed {
			if c.Status != before.Status || c.EndReason != "" || evt.ID != "" {
				t.Errorf("%s: End of a call that is over changed it to %+v, event %+v", tc.name, c, evt)
			}
			continue
		}
		if c.Status != tc.status || c.EndReason != tc.reason || c.EndedBy != tc.by || !c.Over() ||
			c.DurationMS == nil || *c.DurationMS != tc.wantDurationMS || !c.EndedAt.Equal(start.Add(tc.endAfter)) {
			t.Errorf("%s: after End %+v, want %s %s by %s, %d ms", tc.name, c, tc.status, tc.reason, tc.by, tc.wantDurationMS)
		}
		var ended callevent.CallEnded
		if err := json.Unmarshal(evt.Data, &ended); err != nil || evt.Type != callevent.TypeCallEnded || evt.AccountID != c.AccountID ||
			ended.CallID != c.ID || ended.EndReason != tc.reason || ended.DurationMS != tc.wantDurationMS || ended.EndedBy != tc.by {
			t.Errorf("%s: call.ended %s %s = %+v (%v)", tc.name, evt.Type, evt.Data, ended, err)
		}
	}
}

// TestOver: only ended, failed and declined are final.
func TestOver(t *testing.T) {
	final := map[string]bool{call.StatusEnded: true, call.StatusFailed: true, call.StatusDeclined: true}
	for _, s := range call.Statuses {
		if got := (call.Call{Status: s}).Over(); got != final[s] {
			t.Errorf("Over(%s) = %v, want %v", s, got, final[s])
		}
	}
}

// TestListQueryMatches: every filter set must match; an empty one matches all.
func TestListQueryMatches(t *testing.T) {
	c := call.Call{LineID: "line_1", SessionID: "ses_1", AssistantID: "asst_1", Status: call.StatusActive, Direction: call.Inbound}
	for _, tc := range []struct {
		name string
		q    call.ListQuery
		want bool
	}{
		{"no filter", call.ListQuery{}, true},
		{"its line", call.ListQuery{LineID: "line_1"}, true},
		{"another line", call.ListQuery{LineID: "line_2"}, false},
		{"its session", call.ListQuery{SessionID: "ses_1"}, true},
		{"its assistant", call.ListQuery{AssistantID: "asst_1"}, true},
		{"another assistant", call.ListQuery{AssistantID: "asst_2"}, false},
		{"its status and direction", call.ListQuery{Status: call.StatusActive, Direction: call.Inbound}, true},
		{"its status, the other direction", call.ListQuery{Status: call.StatusActive, Direction: call.Outbound}, false},
		{"every filter, all its own", call.ListQuery{LineID: "line_1", SessionID: "ses_1", AssistantID: "asst_1", Status: call.StatusActive, Direction: call.Inbound}, true},
		{"every filter, one not", call.ListQuery{LineID: "line_1", SessionID: "ses_1", AssistantID: "asst_1", Status: call.StatusEnded, Direction: call.Inbound}, false},
	} {
		if got := tc.q.Matches(c); got != tc.want {
			t.Errorf("%s: Matches = %v, want %v", tc.name, got, tc.want)
		}
	}
}
