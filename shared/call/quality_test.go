package call_test

import (
	"testing"

	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// TestTakeQualityDue: a call adds to its version's quality once, when its final report
// is in with metrics; not before, not without a version, not after it was counted.
func TestTakeQualityDue(t *testing.T) {
	turns := 3
	m := &persona.Metrics{Turns: &turns}
	for _, tc := range []struct {
		name string
		c    call.Call
		want bool
	}{
		{"report received", call.Call{VersionID: "ver_1", AssistantReport: call.ReportReceived, Metrics: m, ResponseSamplesMS: []int64{300}}, true},
		{"report pending", call.Call{VersionID: "ver_1", Metrics: m}, false},
		{"report missing", call.Call{VersionID: "ver_1", AssistantReport: call.ReportMissing, Metrics: m}, false},
		{"no metrics", call.Call{VersionID: "ver_1", AssistantReport: call.ReportReceived}, false},
		{"no version", call.Call{AssistantReport: call.ReportReceived, Metrics: m}, false},
		{"counted", call.Call{VersionID: "ver_1", AssistantReport: call.ReportReceived, Metrics: m, QualityCounted: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			due, ok := c.TakeQualityDue()
			if ok != tc.want || c.QualityCounted != (tc.want || tc.c.QualityCounted) {
				t.Fatalf("due %v, counted %v; want %v", ok, c.QualityCounted, tc.want)
			}
			if !ok {
				return
			}
			if due.VersionID != "ver_1" || due.Calls != 1 || due.Turns != 3 || due.Replies() != 1 || c.ResponseSamplesMS != nil {
				t.Errorf("due %+v, samples %v; want one call of 3 turns and 1 reply, samples dropped", due, c.ResponseSamplesMS)
			}
			if _, again := c.TakeQualityDue(); again {
				t.Error("due twice")
			}
		})
	}
}
