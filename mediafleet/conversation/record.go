package conversation

import (
	"slices"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Record is what a call's report says of its conversation, kept from the events
// published on its line: the transcript (the final words of every turn, of both
// speakers, in the order they started) and the conversation's metrics. It is not safe for
// concurrent use: the call it belongs to serialises Add.
type Record struct {
	answered time.Time
	turns    []persona.Turn

	// The figures. measured: the conversation has measured something, so the report
	// carries its counts (zero included) from then on.
	measured                              bool
	callerTurns, bargeIns                 int
	response, bargeStop, stt, llm, ttsLat []time.Duration
	errors                                int
	lastError                             speech.FailureKind
}

// NewRecord starts the record of a call answered at answered: transcript offsets count
// from then.
func NewRecord(answered time.Time) *Record { return &Record{answered: answered} }

// Offset is t in milliseconds from answer.
func (r *Record) Offset(t time.Time) int64 { return t.Sub(r.answered).Milliseconds() }

// Turn is the transcript's turn for final words.
func (r *Record) Turn(w speech.Words) persona.Turn {
	return persona.Turn{Speaker: string(w.Speaker), Text: w.Text, StartMS: r.Offset(w.Start), EndMS: r.Offset(w.End), Interrupted: w.Interrupted}
}

// Add takes one event of the conversation.
func (r *Record) Add(e speech.Event) {
	switch e := e.(type) {
	case speech.Words:
		if !e.Final {
			return
		}
		if e.Speaker == speech.Caller {
			r.callerTurns++
		}
		t := r.Turn(e)
		// After every turn that started no later: the greeting's words come when it
		// ends, the caller's turns over it may come first.
		i := len(r.turns)
		for i > 0 && r.turns[i-1].StartMS > t.StartMS {
			i--
		}
		r.turns = slices.Insert(r.turns, i, t)
		return
	case speech.Answered:
		r.response = append(r.response, e.Timing.Response())
	case speech.Latency:
		switch e.Step {
		case speech.STTFinal:
			r.stt = append(r.stt, e.Took)
		case speech.LLMFirstToken:
			r.llm = append(r.llm, e.Took)
		case speech.TTSFirstAudio:
			r.ttsLat = append(r.ttsLat, e.Took)
		case speech.BargeInStop:
			r.bargeStop = append(r.bargeStop, e.Took)
		}
	case speech.BargeIn:
		r.bargeIns++
	case speech.Failure:
		r.errors++
		r.lastError = e.Kind
	}
	r.measured = true
}

// Transcript is the transcript so far.
func (r *Record) Transcript() []persona.Turn { return slices.Clone(r.turns) }

// Metrics writes the conversation's figures into m, once it has measured anything.
func (r *Record) Metrics(m *persona.Metrics) {
	if !r.measured {
		return
	}
	turns, barge := r.callerTurns, r.bargeIns
	m.Turns, m.BargeIns = &turns, &barge
	m.ResponseMS = percentiles(r.response)
	m.BargeInStopMS = percentiles(r.bargeStop)
	m.STTFinalMS = percentiles(r.stt)
	m.LLMFirstTokenMS = percentiles(r.llm)
	m.TTSFirstAudioMS = percentiles(r.ttsLat)
	m.Errors = nil
	if r.errors > 0 {
		m.Errors = &persona.ErrorCount{Count: r.errors, LastKind: string(r.lastError)}
	}
}

// percentiles are nearest-rank p50 and p95; nil without samples.
func percentiles(d []time.Duration) *persona.Percentiles {
	if len(d) == 0 {
		return nil
	}
	s := slices.Clone(d)
	slices.Sort(s)
	rank := func(p float64) int64 {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[max(0, min(i, len(s)-1))].Milliseconds()
	}
	return &persona.Percentiles{P50: rank(0.50), P95: rank(0.95)}
}
