// Package quality keeps how an assistant's calls took turns, per published version: an
// aggregate each call adds to once, in the same conditional write that records its
// worker's final report (call.Call.TakeQualityDue, applied by the stores' SaveCall and
// SaveSession, as shared/usage is), so that GET /v1/assistants/{id}/quality reads one
// record per version and never walks the calls.
//
// Reply latency spans calls honestly: the aggregate keeps every reply's response time
// in fixed buckets (ResponseBoundsMS), and the percentiles are read from the bucket
// counts, never averaged from the calls' own.
package quality

import (
	"context"
	"fmt"
	"math"

	"github.com/bridgeline/bridgeline/shared/persona"
)

// ResponseBoundsMS are the upper bounds of the reply latency buckets, in milliseconds: a
// reply of d ms counts in the first bucket whose bound is at least d; one over the last
// bound counts in a bucket of its own. 50 ms apart up to 1.5 s, coarser beyond.
var ResponseBoundsMS = func() []int64 {
	var b []int64
	for ms := int64(50); ms <= 1500; ms += 50 {
		b = append(b, ms)
	}
	return append(b, 1750, 2000, 2500, 3000, 4000, 5000, 7500, 10000)
}()

// Counts are the figures summed per version. A call only adds to them.
type Counts struct {
	// Calls is how many calls' final reports were counted (each call once).
	Calls int64 `json:"calls"`
	// Turns, BargeIns ... AssistantSpeechMS are the calls' metrics summed.
	Turns              int64 `json:"turns"`
	BargeIns           int64 `json:"barge_ins"`
	FalseInterruptions int64 `json:"false_interruptions"`
	Backchannels       int64 `json:"backchannels"`
	MidSentenceWaits   int64 `json:"mid_sentence_waits"`
	MidSentenceCuts    int64 `json:"mid_sentence_cuts"`
	CallerSpeechMS     int64 `json:"caller_speech_ms"`
	AssistantSpeechMS  int64 `json:"assistant_speech_ms"`
	// Response counts the replies per latency bucket: Response[i] those of at most
	// ResponseBoundsMS[i], the last those over every bound.
	Response [responseBounds + 1]int64 `json:"-"`
}

// responseBounds is len(ResponseBoundsMS), as a constant for the array.
const responseBounds = 38

func init() {
	if len(ResponseBoundsMS) != responseBounds {
		panic(fmt.Sprintf("quality: %d response bounds, the array holds %d", len(ResponseBoundsMS), responseBounds))
	}
}

// Field is one count and its name: the stores' row or attribute.
type Field struct {
	Name  string
	Value *int64
}

// Fields are c's counts in a stable order; the buckets are response_ms_le_<bound> and
// response_ms_over.
func (c *Counts) Fields() []Field {
	f := []Field{
		{"calls", &c.Calls}, {"turns", &c.Turns}, {"barge_ins", &c.BargeIns},
		{"false_interruptions", &c.FalseInterruptions}, {"backchannels", &c.Backchannels},
		{"mid_sentence_waits", &c.MidSentenceWaits}, {"mid_sentence_cuts", &c.MidSentenceCuts},
		{"caller_speech_ms", &c.CallerSpeechMS}, {"assistant_speech_ms", &c.AssistantSpeechMS},
	}
	for i, b := range ResponseBoundsMS {
		f = append(f, Field{fmt.Sprintf("response_ms_le_%d", b), &c.Response[i]})
	}
	return append(f, Field{"response_ms_over", &c.Response[len(ResponseBoundsMS)]})
}

// Add is c plus o.
func (c Counts) Add(o Counts) Counts {
	of := o.Fields()
	for i, f := range c.Fields() {
		*f.Value += *of[i].Value
	}
	return c
}

// OfCall is what one call adds: its metrics (the worker's final report's) and its
// replies' response times.
func OfCall(m persona.Metrics, responseMS []int64) Counts {
	n := func(p *int) int64 {
		if p == nil {
			return 0
		}
		return int64(*p)
	}
	n64 := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return max(0, *p)
	}
	c := Counts{Calls: 1, Turns: n(m.Turns), BargeIns: n(m.BargeIns), FalseInterruptions: n(m.FalseInterruptions),
		Backchannels: n(m.Backchannels), MidSentenceWaits: n(m.MidSentenceWaits), MidSentenceCuts: n(m.MidSentenceCuts),
		CallerSpeechMS: n64(m.CallerSpeechMS), AssistantSpeechMS: n64(m.AssistantSpeechMS)}
	for _, ms := range responseMS {
		c.Response[bucket(ms)]++
	}
	return c
}

// bucket is the index of the bucket a reply of ms milliseconds counts in.
func bucket(ms int64) int {
	for i, b := range ResponseBoundsMS {
		if ms <= b {
			return i
		}
	}
	return len(ResponseBoundsMS)
}

// Replies is how many replies the buckets hold.
func (c Counts) Replies() int64 {
	var n int64
	for _, v := range c.Response {
		n += v
	}
	return n
}

// ResponsePercentiles are the replies' p50 and p95 over every call counted, nearest
// rank, each read as the upper bound of the bucket it falls in (so at most that many
// milliseconds, within the bucket's width); a rank in the bucket over every bound reads
// as the last bound. nil without replies.
func (c Counts) ResponsePercentiles() *persona.Percentiles {
	n := c.Replies()
	if n == 0 {
		return nil
	}
	at := func(p float64) int64 {
		rank := max(1, int64(math.Ceil(p*float64(n))))
		var seen int64
		for i, v := range c.Response {
			if seen += v; seen >= rank {
				return ResponseBoundsMS[min(i, len(ResponseBoundsMS)-1)]
			}
		}
		return ResponseBoundsMS[len(ResponseBoundsMS)-1]
	}
	return &persona.Percentiles{P50: at(0.50), P95: at(0.95)}
}

// Due is what one write adds to a version's aggregate; the stores apply it in the
// transaction that writes the call carrying it.
type Due struct {
	AccountID string
	VersionID string
	Counts
}

// Version is one version's aggregate.
type Version struct {
	VersionID string
	Counts
}

// Store reads the aggregate.
type Store interface {
	// VersionQuality returns the aggregates of the account's versions among versionIDs
	// that have any, in any order; it reads those versions' records only.
	VersionQuality(ctx context.Context, accountID string, versionIDs []string) ([]Version, error)
}
