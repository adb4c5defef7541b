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
