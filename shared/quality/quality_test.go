package quality_test

import (
	"testing"

	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/quality"
)

func intp(v int) *int       { return &v }
func int64p(v int64) *int64 { return &v }

// TestOfCall: a call adds one call, its metrics, and each reply in its bucket; absent
// metrics add nothing.
func TestOfCall(t *testing.T) {
	m := persona.Metrics{Turns: intp(4), BargeIns: intp(1), FalseInterruptions: intp(2), Backchannels: intp(3),
		MidSentenceWaits: intp(1), MidSentenceCuts: intp(1), CallerSpeechMS: int64p(5200), AssistantSpeechMS: int64p(9100)}
	c := quality.OfCall(m, []int64{0, 50, 51, 1500, 1501, 10000, 10001, 60000})
	want := quality.Counts{Calls: 1, Turns: 4, BargeIns: 1, FalseInterruptions: 2, Backchannels: 3, MidSentenceWaits: 1,
		MidSentenceCuts: 1, CallerSpeechMS: 5200, AssistantSpeechMS: 9100}
	got := c
	got.Response = want.Response
	if got != want {
		t.Errorf("counts %+v, want %+v", got, want)
	}
	buckets := map[string]int64{}
	for _, f := range c.Fields() {
		if *f.Value != 0 {
			buckets[f.Name] = *f.Value
		}
	}
	for name, n := range map[string]int64{"response_ms_le_50": 2, "response_ms_le_100": 1, "response_ms_le_1500": 1,
		"response_ms_le_1750": 1, "response_ms_le_10000": 1, "response_ms_over": 2} {
		if buckets[name] != n {
			t.Errorf("%s = %d, want %d (all: %v)", name, buckets[name], n, buckets)
		}
	}
	if c.Replies() != 8 {
		t.Errorf("replies %d, want 8", c.Replies())
	}
	if e := quality.OfCall(persona.Metrics{}, nil); e != (quality.Counts{Calls: 1}) {
		t.Errorf("a call without figures adds %+v, want the call only", e)
	}
}

// TestResponsePercentiles: the percentiles span calls by their replies, not by the
// calls' own percentiles: one call of 99 quick replies and nine calls of one slow reply
// each have a p50 quick and a p95 slow, where the calls' p50s would say slow.
func TestResponsePercentiles(t *testing.T) {
	var sum quality.Counts
	if sum.ResponsePercentiles() != nil {
		t.Fatal("percentiles without replies, want nil")
	}
	quick := make([]int64, 99)
	for i := range quick {
		quick[i] = 420
	}
	sum = sum.Add(quality.OfCall(persona.Metrics{}, quick))
	for range 9 {
		sum = sum.Add(quality.OfCall(persona.Metrics{}, []int64{2200}))
	}
	if sum.Calls != 10 || sum.Replies() != 108 {
		t.Fatalf("calls %d replies %d, want 10 and 108", sum.Calls, sum.Replies())
	}
	if p := sum.ResponsePercentiles(); *p != (persona.Percentiles{P50: 450, P95: 2500}) {
		t.Errorf("percentiles %+v, want p50 450 (the bucket 400-450 ms) and p95 2500", *p)
	}
	// Replies over every bound read as the last bound.
	over := quality.OfCall(persona.Metrics{}, []int64{30000})
	if p := over.ResponsePercentiles(); *p != (persona.Percentiles{P50: 10000, P95: 10000}) {
		t.Errorf("percentiles %+v, want 10000 for both", *p)
	}
}
