package conversation_test

import (
	"slices"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/conversation"
	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// TestRecord: the transcript keeps final words in the order the turns started, whenever
// they were published (the greeting's come when it ends, after the caller's turn over
// it); the conversation's figures appear once it has measured something.
func TestRecord(t *testing.T) {
	answered := time.Unix(1000, 0)
	at := func(ms int) time.Time { return answered.Add(time.Duration(ms) * time.Millisecond) }
	r := conversation.NewRecord(answered)
	var m persona.Metrics
	r.Add(speech.Words{Speaker: speech.Assistant, Text: "Hello, this", Start: at(500)}) // interim
	r.Metrics(&m)
	if m.Turns != nil || len(r.Transcript()) != 0 {
		t.Fatalf("after interim words: metrics %+v transcript %+v, want neither", m, r.Transcript())
	}
	events := []speech.Event{
		speech.Latency{Step: speech.BargeInStop, Took: 40 * time.Millisecond},
		speech.BargeIn{},
		speech.Latency{Step: speech.STTFinal, Took: 20 * time.Millisecond},
		speech.Words{Speaker: speech.Caller, Text: "hi", Final: true, Start: at(900), End: at(1400)},
		speech.Words{Speaker: speech.Assistant, Text: "Hello, this", Final: true, Start: at(500), End: at(960), Interrupted: true},
		speech.Latency{Step: speech.LLMFirstToken, Took: 300 * time.Millisecond},
		speech.Latency{Step: speech.TTSFirstAudio, Took: 30 * time.Millisecond},
		speech.Answered{Timing: speech.TurnTiming{LastSpeech: at(1400), FirstSent: at(2100)}},
		speech.Words{Speaker: speech.Assistant, Text: "How can I help?", Final: true, Start: at(2100), End: at(3000)},
		speech.Failure{Kind: speech.TTSError},
	}
	for _, e := range events {
		r.Add(e)
	}
	want := []persona.Turn{
		{Speaker: "assistant", Text: "Hello, this", StartMS: 500, EndMS: 960, Interrupted: true},
		{Speaker: "caller", Text: "hi", StartMS: 900, EndMS: 1400},
		{Speaker: "assistant", Text: "How can I help?", StartMS: 2100, EndMS: 3000},
	}
	if got := r.Transcript(); !slices.Equal(got, want) {
		t.Errorf("transcript %+v, want %+v", got, want)
	}
	r.Metrics(&m)
	if *m.Turns != 1 || *m.BargeIns != 1 || m.ResponseMS.P50 != 700 || m.BargeInStopMS.P50 != 40 || m.STTFinalMS.P50 != 20 ||
		m.LLMFirstTokenMS.P50 != 300 || m.TTSFirstAudioMS.P50 != 30 || *m.Errors != (persona.ErrorCount{Count: 1, LastKind: "tts_error"}) {
		t.Errorf("metrics %+v", m)
	}
}

// TestRecordToolCalls: each tool call is a tool turn placed where its answer came, with
// what was asked and what came back (an error instead of a result, arguments that are
// not an object kept as {}), and the metrics count the calls and the errors and give
// tool_ms as nearest-rank p50/p95 over every call of the call. A call without tool calls
// reports none of the three.
func TestRecordToolCalls(t *testing.T) {
	answered := time.Unix(1000, 0)
	at := func(ms int) time.Time { return answered.Add(time.Duration(ms) * time.Millisecond) }
	r := conversation.NewRecord(answered)
	r.Add(speech.Words{Speaker: speech.Caller, Text: "where is my order", Final: true, Start: at(0), End: at(800)})
	var m persona.Metrics
	r.Metrics(&m)
	if m.ToolCalls != nil || m.ToolErrors != nil || m.ToolMS != nil {
		t.Fatalf("metrics %+v before any tool call, want no tool figures", m)
	}
	// Twenty calls of 100, 200, ... 2000 ms, one after the other from 1 s; every
	// fifth fails.
	var wantTools []persona.ToolUse
	for i := 1; i <= 20; i++ {
		start := 1000 + 3000*(i-1)
		e := speech.ToolUsed{Call: speech.ToolCall{Name: "lookup_order", Arguments: `{"n":1}`}, Start: at(start), End: at(start + 100*i)}
		use := persona.ToolUse{Name: "lookup_order", DurationMS: int64(100 * i)}
		switch {
		case i%5 == 0:
			e.Result.Err = &speech.ToolError{Code: persona.ToolErrTimeout, Message: "no answer"}
			use.Error = &persona.ToolError{Code: persona.ToolErrTimeout, Message: "no answer"}
		case i == 1:
			e.Call.Arguments = `["not", "an", "object"]`
			e.Result.Result = []byte(`{"status":"shipped"}`)
		default:
			e.Result.Result = []byte(`{"status":"shipped"}`)
		}
		r.Add(e)
		wantTools = append(wantTools, use)
	}
	r.Metrics(&m)
	if m.ToolCalls == nil || *m.ToolCalls != 20 || m.ToolErrors == nil || *m.ToolErrors != 4 {
		t.Errorf("tool_calls %v tool_errors %v, want 20 and 4", m.ToolCalls, m.ToolErrors)
	}
	if m.ToolMS == nil || *m.ToolMS != (persona.Percentiles{P50: 1000, P95: 1900}) {
		t.Errorf("tool_ms %+v, want p50 1000 and p95 1900", m.ToolMS)
	}
	turns := r.Transcript()
	if len(turns) != 21 || turns[0].Speaker != "caller" {
		t.Fatalf("transcript %+v, want the caller's turn then the 20 tool calls", turns)
	}
	for i, tn := range turns[1:] {
		w := wantTools[i]
		if tn.Speaker != persona.SpeakerTool || tn.Tool == nil || tn.Tool.Name != w.Name || tn.Tool.DurationMS != w.DurationMS ||
			tn.EndMS-tn.StartMS != w.DurationMS || (tn.Tool.Error == nil) != (w.Error == nil) || (w.Error != nil && *tn.Tool.Error != *w.Error) {
			t.Errorf("tool turn %d: %+v (%+v), want %+v", i, tn, tn.Tool, w)
			continue
		}
		wantArgs, wantResult := `{"n":1}`, `{"status":"shipped"}`
		if i == 0 {
			wantArgs = `{}`
		}
		if string(tn.Tool.Arguments) != wantArgs || (w.Error == nil && string(tn.Tool.Result) != wantResult) || (w.Error != nil && tn.Tool.Result != nil) {
			t.Errorf("tool turn %d: arguments %s result %s", i, tn.Tool.Arguments, tn.Tool.Result)
		}
	}
}

// TestRecordSpeakingAndCuts: each side's speaking time is its transcript turns summed
// (an acknowledgement over the assistant is the caller's, a tool call no one's), the
// turns cut mid-sentence are counted apart from the waits, and the response samples are
// those of response_ms, in order.
func TestRecordSpeakingAndCuts(t *testing.T) {
	answered := time.Unix(1000, 0)
	at := func(ms int) time.Time { return answered.Add(time.Duration(ms) * time.Millisecond) }
	r := conversation.NewRecord(answered)
	if got := r.ResponseSamplesMS(); got != nil {
		t.Fatalf("samples %v before any reply, want none", got)
	}
	for _, e := range []speech.Event{
		speech.Words{Speaker: speech.Assistant, Text: "Hello, how can I help?", Final: true, Start: at(300), End: at(2300)},
		speech.Words{Speaker: speech.Caller, Text: "I'd like to book a", Final: true, Start: at(2600), End: at(3800)},
		speech.TurnTaking{Kind: speech.MidSentenceWait},
		speech.TurnTaking{Kind: speech.MidSentenceCut},
		speech.Answered{Timing: speech.TurnTiming{LastSpeech: at(3800), FirstSent: at(4400)}},
		speech.Words{Speaker: speech.Assistant, Text: "Sure, for when?", Final: true, Start: at(4400), End: at(6400)},
		speech.Words{Speaker: speech.Caller, Text: "uh-huh", Final: true, Start: at(5000), End: at(5300), Backchannel: true},
		speech.TurnTaking{Kind: speech.Backchanneled},
		speech.ToolUsed{Call: speech.ToolCall{Name: "book", Arguments: `{}`}, Start: at(7000), End: at(9000)},
		speech.Words{Speaker: speech.Caller, Text: "tomorrow at eight.", Final: true, Start: at(6900), End: at(7900)},
		speech.Answered{Timing: speech.TurnTiming{LastSpeech: at(7900), FirstSent: at(8150)}},
	} {
		r.Add(e)
	}
	var m persona.Metrics
	r.Metrics(&m)
	if m.CallerSpeechMS == nil || *m.CallerSpeechMS != 1200+300+1000 || m.AssistantSpeechMS == nil || *m.AssistantSpeechMS != 2000+2000 {
		t.Errorf("caller_speech_ms %v assistant_speech_ms %v, want 2500 and 4000", m.CallerSpeechMS, m.AssistantSpeechMS)
	}
	if count(m.MidSentenceCuts) != 1 || count(m.MidSentenceWaits) != 1 || count(m.Backchannels) != 1 || count(m.Turns) != 2 {
		t.Errorf("cuts %d waits %d backchannels %d turns %d, want 1, 1, 1, 2",
			count(m.MidSentenceCuts), count(m.MidSentenceWaits), count(m.Backchannels), count(m.Turns))
	}
	if got := r.ResponseSamplesMS(); !slices.Equal(got, []int64{600, 250}) {
		t.Errorf("samples %v, want [600 250]", got)
	}
}
