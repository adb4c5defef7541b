package conversation

import (
	"encoding/json"
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
	toolCalls, toolErrors                 int
	toolTook                              []time.Duration
	// turnTaking counts the decisions of speech.TurnTaking, by kind.
	turnTaking map[speech.TurnKind]int

	// used sums what the call used (speech.Used); it is not a measurement and does not
	// set measured.
	used speech.Used
}

// NewRecord starts the record of a call answered at answered: transcript offsets count
// from then.
func NewRecord(answered time.Time) *Record { return &Record{answered: answered} }

// Offset is t in milliseconds from answer.
func (r *Record) Offset(t time.Time) int64 { return t.Sub(r.answered).Milliseconds() }

// Turn is the transcript's turn for final words.
func (r *Record) Turn(w speech.Words) persona.Turn {
	return persona.Turn{Speaker: string(w.Speaker), Text: w.Text, StartMS: r.Offset(w.Start), EndMS: r.Offset(w.End),
		Interrupted: w.Interrupted, Backchannel: w.Backchannel, Frames: w.Frames}
}

// Add takes one event of the conversation.
func (r *Record) Add(e speech.Event) {
	switch e := e.(type) {
	case speech.Words:
		if !e.Final {
			return
		}
		if e.Speaker == speech.Caller && !e.Backchannel {
			r.callerTurns++
		}
		t := r.Turn(e)
		r.insertAt(t, t.StartMS)
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
	case speech.ToolUsed:
		r.toolCalls++
		if e.Result.Err != nil {
			r.toolErrors++
		}
		r.toolTook = append(r.toolTook, e.End.Sub(e.Start))
		// Where its answer came: after what the assistant began saying before the
		// model's call reached the line (the call goes out as that speech starts).
		t := r.ToolTurn(e)
		r.insertAt(t, t.EndMS)
	case speech.Used:
		r.used.STTAudio += e.STTAudio
		r.used.TTSCharacters += e.TTSCharacters
		r.used.PromptTokens += e.PromptTokens
		r.used.CompletionTokens += e.CompletionTokens
		r.used.Estimated = r.used.Estimated || e.Estimated
		return
	case speech.BargeIn:
		r.bargeIns++
	case speech.TurnTaking:
		if r.turnTaking == nil {
			r.turnTaking = map[speech.TurnKind]int{}
		}
		r.turnTaking[e.Kind]++
	case speech.Failure:
		r.errors++
		r.lastError = e.Kind
	}
	r.measured = true
}

// insertAt puts t after every turn that started no later than at (its start, or a tool
// call's end): the greeting's words come when it ends, the caller's turns over it may
// come first.
func (r *Record) insertAt(t persona.Turn, at int64) {
	i := len(r.turns)
	for i > 0 && r.turns[i-1].StartMS > at {
		i--
	}
	r.turns = slices.Insert(r.turns, i, t)
}

// ToolTurn is the transcript's turn for a tool call: speaker tool, from the model's call
// to the answer, with what was asked and what came back. Arguments that are not a JSON
// object are recorded as {} (the error says why the call failed).
func (r *Record) ToolTurn(e speech.ToolUsed) persona.Turn {
	args := json.RawMessage(e.Call.Arguments)
	if !isObject(args) {
		args = json.RawMessage("{}")
	}
	use := &persona.ToolUse{Name: e.Call.Name, Arguments: args, DurationMS: e.End.Sub(e.Start).Milliseconds()}
	if e.Result.Err != nil {
		use.Error = &persona.ToolError{Code: e.Result.Err.Code, Message: e.Result.Err.Message}
	} else {
		use.Result = e.Result.Result
		if len(use.Result) == 0 {
			use.Result = json.RawMessage("null")
		}
	}
	return persona.Turn{Speaker: persona.SpeakerTool, StartMS: r.Offset(e.Start), EndMS: r.Offset(e.End), Tool: use, Frames: e.Frames}
}

func isObject(b []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}

// Usage is what the call used so far: the ended report's.
func (r *Record) Usage() persona.Usage {
	u := r.used
	return persona.Usage{STTAudioMS: u.STTAudio.Milliseconds(), TTSCharacters: int64(u.TTSCharacters),
		LLMPromptTokens: int64(u.PromptTokens), LLMCompletionTokens: int64(u.CompletionTokens), Estimated: u.Estimated}
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
	back, falseInt, waits := r.turnTaking[speech.Backchanneled], r.turnTaking[speech.FalseInterruption], r.turnTaking[speech.MidSentenceWait]
	m.Backchannels, m.FalseInterruptions, m.MidSentenceWaits = &back, &falseInt, &waits
	cuts := r.turnTaking[speech.MidSentenceCut]
	m.MidSentenceCuts = &cuts
	callerMS, assistantMS := r.speechMS()
	m.CallerSpeechMS, m.AssistantSpeechMS = &callerMS, &assistantMS
	m.ResponseMS = percentiles(r.response)
	m.BargeInStopMS = percentiles(r.bargeStop)
	m.STTFinalMS = percentiles(r.stt)
	m.LLMFirstTokenMS = percentiles(r.llm)
	m.TTSFirstAudioMS = percentiles(r.ttsLat)
	m.Errors = nil
	if r.errors > 0 {
		m.Errors = &persona.ErrorCount{Count: r.errors, LastKind: string(r.lastError)}
	}
	if r.toolCalls > 0 {
		calls, errs := r.toolCalls, r.toolErrors
		m.ToolCalls, m.ToolErrors, m.ToolMS = &calls, &errs, percentiles(r.toolTook)
	}
}

// speechMS is how long each side spoke: its transcript turns, start to end, summed.
func (r *Record) speechMS() (caller, assistant int64) {
	for _, t := range r.turns {
		d := max(0, t.EndMS-t.StartMS)
		switch t.Speaker {
		case persona.SpeakerCaller:
			caller += d
		case persona.SpeakerAssistant:
			assistant += d
		}
	}
	return caller, assistant
}

// ResponseSamplesMS are the samples of the metrics' response_ms, in milliseconds, in
// the order the replies came (persona.Report.ResponseSamplesMS); nil without any.
func (r *Record) ResponseSamplesMS() []int64 {
	if len(r.response) == 0 {
		return nil
	}
	out := make([]int64, len(r.response))
	for i, d := range r.response {
		out[i] = max(0, d.Milliseconds())
	}
	return out
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
