package call_test

import (
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// TestBillableSeconds: every started second counts, from the answer.
func TestBillableSeconds(t *testing.T) {
	for _, tc := range []struct{ ms, want int64 }{
		{-5, 0}, {0, 0}, {1, 1}, {999, 1}, {1000, 1}, {1001, 2}, {59000, 59}, {59001, 60}, {3600000, 3600},
	} {
		if got := call.BillableSeconds(tc.ms); got != tc.want {
			t.Errorf("BillableSeconds(%d) = %d, want %d", tc.ms, got, tc.want)
		}
	}
}

// TestUsageAtEndAndFromTheReport: the end sets the duration and billable seconds; the
// worker's counts, before or after the end, are kept beside them, and a redelivered
// report replaces rather than adds.
func TestUsageAtEndAndFromTheReport(t *testing.T) {
	start := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	worker := persona.Usage{STTAudioMS: 4200, TTSCharacters: 310, LLMPromptTokens: 900, LLMCompletionTokens: 61, Estimated: true}
	want := call.Usage{DurationMS: 12001, BillableSeconds: 13, Usage: worker}
	newID := func() string { return "evt_1" }

	for _, reportFirst := range []bool{false, true} {
		c := call.Call{ID: "call_1", AccountID: "acct_1", Status: call.StatusRinging, StartedAt: start}
		if c.Usage != nil {
			t.Fatal("a new call has usage")
		}
		c.Answer(start.Add(3 * time.Second))
		if reportFirst {
			c.CountUsage(worker)
		}
		c.End(call.StatusEnded, call.ReasonRemoteHangup, call.EndedByRemote, start.Add(15001*time.Millisecond), newID)
		if !reportFirst {
			c.CountUsage(worker)
			c.CountUsage(worker) // redelivered
		}
		if c.Usage == nil || *c.Usage != want {
			t.Errorf("report first %v: usage %+v, want %+v", reportFirst, c.Usage, want)
		}
	}

	// A call never answered: nothing billable.
	c := call.Call{ID: "call_2", Status: call.StatusRinging, StartedAt: start}
	c.End(call.StatusFailed, call.ReasonNoAnswer, call.EndedByRemote, start.Add(30*time.Second), newID)
	if c.Usage == nil || *c.Usage != (call.Usage{}) {
		t.Errorf("unanswered call's usage %+v, want all zero", c.Usage)
	}
}
