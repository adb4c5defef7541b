package conversation_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/conversation"
	"github.com/bridgeline/bridgeline/mediafleet/llm"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/shared/persona"
)

var version = persona.Version{
	ID: "ver_1", Name: "Maya", SystemPrompt: "You are Maya, who answers for a flower shop.",
	Greeting: "Hello, this is Maya.", AvatarID: "ava_maya", Model: "tiny-model",
}

type harness struct {
	*line
	rec     *recognizer
	syn     *synth
	srv     *llmtest.Server
	voices  []string
	err     error
	stopped chan struct{}
	cancel  context.CancelFunc
}

// start runs a conversation on a scripted line against the fake model server; texts are
// what the recogniser hears in the caller's turns, in order.
func start(t *testing.T, reply llmtest.Reply, mod func(*conversation.Config), texts ...string) *harness {
	t.Helper()
	h := &harness{line: newLine(), rec: &recognizer{texts: texts}, syn: &synth{}, srv: llmtest.New(reply), stopped: make(chan struct{})}
	t.Cleanup(h.srv.Close)
	model, err := llm.New(llm.Config{BaseURL: h.srv.URL(), Model: "default-model"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := conversation.Config{
		NewVAD:     func() (conversation.VAD, error) { return scriptedVAD{}, nil },
		Recognizer: h.rec, Model: model,
		Voices: func(v string) tts.Synthesizer {
			h.syn.mu.Lock()
			h.voices = append(h.voices, v)
			h.syn.mu.Unlock()
			return h.syn
		},
		MaxTurn: 3 * time.Second,
		Log:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if mod != nil {
		mod(&cfg)
	}
	e, err := conversation.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() {
		defer close(h.stopped)
		h.err = e.Run(ctx, h.line, version)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-h.stopped:
		case <-time.After(5 * time.Second):
			t.Error("Run did not return after its context ended")
		}
	})
	return h
}

func (h *harness) feed(t *testing.T, level int16, d time.Duration) {
	t.Helper()
	h.line.feed(t, h.stopped, level, d)
}

func (h *harness) eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	h.line.eventually(t, h.stopped, what, cond)
}

func (h *harness) turns() []persona.Turn { ts, _, _, _, _, _ := h.snapshot(); return ts }

func (h *harness) metrics() persona.Metrics { _, m, _, _, _, _ := h.snapshot(); return m }

func TestEndOfTurn(t *testing.T) {
	tests := []struct {
		name    string
		speech  time.Duration
		silence time.Duration
		end     time.Duration // configured end-of-turn silence; 0 is the default
		want    int           // turns transcribed
	}{
		{name: "a pause shorter than the end-of-turn silence keeps the turn open", speech: 600 * time.Millisecond, silence: 300 * time.Millisecond, want: 0},
		{name: "the default silence ends the turn", speech: 600 * time.Millisecond, silence: 480 * time.Millisecond, want: 1},
		{name: "a configured longer silence waits for it", speech: 600 * time.Millisecond, silence: 480 * time.Millisecond, end: 700 * time.Millisecond, want: 0},
		{name: "a caller who never pauses is answered at the maximum turn", speech: 3200 * time.Millisecond, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, llmtest.Reply{Text: "Sure."}, func(c *conversation.Config) { c.EndOfTurn = tt.end }, "hello there")
			h.feed(t, 0, 100*time.Millisecond)
			h.feed(t, speechLevel, tt.speech)
			h.feed(t, 0, tt.silence)
			// Frames are handled in order: one more frame is past the decision.
			if got := h.rec.turns(); got != tt.want {
				t.Errorf("got %d turns ended, want %d", got, tt.want)
			}
			if tt.want > 0 {
				h.eventually(t, "the reply", func() bool { return len(h.srv.Requests()) == 1 })
			}
		})
	}
}

func TestAnswersATurn(t *testing.T) {
	h := start(t, llmtest.Reply{Text: "We open at nine. Dr. Rose closes at 5.30 p.m. on Fridays!"}, nil, "when do you open")
	h.feed(t, 0, 400*time.Millisecond)
	h.feed(t, speechLevel, 800*time.Millisecond)
	h.feed(t, 0, 500*time.Millisecond)
	h.eventually(t, "the whole reply spoken", func() bool { return len(h.turns()) == 2 })

	reqs := h.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("model got %d requests, want 1", len(reqs))
	}
	wantMsgs := []llmtest.Message{
		{Role: "system", Content: version.SystemPrompt},
		{Role: "assistant", Content: version.Greeting},
		{Role: "user", Content: "when do you open"},
	}
	if !slices.Equal(reqs[0].Messages, wantMsgs) || reqs[0].Model != "tiny-model" || !reqs[0].HasTool("end_call") {
		t.Errorf("request model %q end_call %v messages %+v, want tiny-model, end_call offered, %+v", reqs[0].Model, reqs[0].HasTool("end_call"), reqs[0].Messages, wantMsgs)
	}
	if got, want := h.syn.said(), []string{"We open at nine.", "Dr. Rose closes at 5.30 p.m. on Fridays!"}; !slices.Equal(got, want) {
		t.Errorf("spoke %q, want sentence by sentence %q", got, want)
	}
	h.syn.mu.Lock()
	voices := slices.Clone(h.voices)
	h.syn.mu.Unlock()
	if len(voices) == 0 || slices.ContainsFunc(voices, func(v string) bool { return v != "flite-slt-bright" }) {
		t.Errorf("voices %q, want Maya's flite-slt-bright", voices)
	}
	turns := h.turns()
	// (The test feeds audio faster than real time: offsets are the arrival times.)
	if turns[0].Speaker != "caller" || turns[0].Text != "when do you open" || turns[0].EndMS < turns[0].StartMS {
		t.Errorf("caller turn %+v, want the words", turns[0])
	}
	if turns[1].Speaker != "assistant" || turns[1].Text != "We open at nine. Dr. Rose closes at 5.30 p.m. on Fridays!" || turns[1].Interrupted || turns[1].StartMS < turns[0].EndMS {
		t.Errorf("assistant turn %+v, want the whole reply after the caller's", turns[1])
	}
	// The recogniser got the pre-speech padding (256 ms) before the speech.
	if h.rec.leading[0] < 256*16 || h.rec.leading[0] > 300*16 {
		t.Errorf("%d samples before speech given to the recogniser, want about 256 ms", h.rec.leading[0])
	}
	m := h.metrics()
	if m.Turns == nil || *m.Turns != 1 || m.ResponseMS == nil || m.STTFinalMS == nil || m.LLMFirstTokenMS == nil || m.TTSFirstAudioMS == nil || m.Errors != nil {
		t.Errorf("metrics %+v, want one turn with response, stt, llm and tts figures and no errors", m)
	}
}

// TestOnTurnStamps: each answered turn's worker-side stamps come once, in the order of
// the stages, the first token after the model's delay.
func TestOnTurnStamps(t *testing.T) {
	type stamped struct {
		callID string
		tm     conversation.TurnTiming
	}
	got := make(chan stamped, 4)
	h := start(t, llmtest.Reply{Text: "We open at nine. Come by."}, func(c *conversation.Config) {
		c.OnTurn = func(id string, tm conversation.TurnTiming) { got <- stamped{id, tm} }
	}, "when do you open")
	h.srv.SetDelays(50*time.Millisecond, 0)
	h.feed(t, speechLevel, 600*time.Millisecond)
	h.feed(t, 0, 500*time.Millisecond)
	h.eventually(t, "the whole reply spoken", func() bool { return len(h.turns()) == 2 })
	var s stamped
	select {
	case s = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("no stamps for the answered turn")
	}
	tm := s.tm
	steps := []struct {
		name string
		at   time.Time
	}{{"last speech", tm.LastSpeech}, {"decided", tm.Decided}, {"transcribed", tm.Transcribed},
		{"first token", tm.FirstToken}, {"synthesized", tm.Synthesized}, {"first sent", tm.FirstSent}}
	for i, st := range steps {
		if st.at.IsZero() {
			t.Errorf("%s is not stamped: %+v", st.name, tm)
		} else if i > 0 && st.at.Before(steps[i-1].at) {
			t.Errorf("%s %v is before %s %v", st.name, st.at, steps[i-1].name, steps[i-1].at)
		}
	}
	if d := tm.FirstToken.Sub(tm.Transcribed); d < 50*time.Millisecond {
		t.Errorf("first token %v after the transcript, want at least the model's 50 ms delay", d)
	}
	if s.callID != "" {
		t.Errorf("call id %q on a line run without a call, want empty", s.callID)
	}
	select {
	case extra := <-got:
		t.Errorf("stamps came twice for one turn: %+v", extra)
	default:
	}
}

func TestBargeInCancelsAndRecordsWhatWasHeard(t *testing.T) {
	long := "Our roses come from three farms. Each farm grows a dozen kinds of rose. We cut them every morning at six. They reach the shop by noon the same day."
	h := start(t, llmtest.Reply{Text: long}, nil, "tell me about roses", "do you deliver")
	h.srv.SetDelays(0, 5*time.Millisecond)
	h.feed(t, speechLevel, 600*time.Millisecond)
	h.feed(t, 0, 500*time.Millisecond)
	h.eventually(t, "the reply half way", func() bool { _, _, _, _, _, sent := h.snapshot(); return sent >= 60 })

	// The caller talks over it: paused on the first confident window.
	h.line.alignToWindow(t, h.stopped)
	h.feed(t, speechLevel, 60*time.Millisecond)
	if _, _, paused, _, _, _ := h.snapshot(); !paused {
		t.Fatal("not paused 60 ms after the caller started talking")
	}
	h.feed(t, speechLevel, 600*time.Millisecond)
	h.feed(t, 0, 500*time.Millisecond)
	h.eventually(t, "the second question answered", func() bool { return len(h.turns()) == 4 })

	turns := h.turns()
	cut := turns[1]
	if cut.Speaker != "assistant" || !cut.Interrupted || cut.Text == "" || len(cut.Text) >= len(long) || !strings.HasPrefix(long, cut.Text) {
		t.Errorf("interrupted turn %+v, want a marked prefix of %q", cut, long)
	}
	if turns[2].Speaker != "caller" || turns[2].Text != "do you deliver" {
		t.Errorf("third turn %+v, want the caller's new question", turns[2])
	}
	reqs := h.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model got %d requests, want 2", len(reqs))
	}
	msgs := reqs[1].Messages
	if len(msgs) != 5 || msgs[3] != (llmtest.Message{Role: "assistant", Content: cut.Text}) || msgs[4] != (llmtest.Message{Role: "user", Content: "do you deliver"}) {
		t.Errorf("second request's messages %+v, want the reply as cut then the new question", msgs)
	}
	m := h.metrics()
	if m.BargeIns == nil || *m.BargeIns != 1 || m.BargeInStopMS == nil || m.BargeInStopMS.P95 > 200 {
		t.Errorf("barge-ins %v stop %+v, want 1 within 200 ms", m.BargeIns, m.BargeInStopMS)
	}
}

func TestCoughResumes(t *testing.T) {
	reply := "Our roses come from three farms. Each farm grows a dozen kinds of rose."
	h := start(t, llmtest.Reply{Text: reply}, nil, "tell me about roses")
	h.feed(t, speechLevel, 600*time.Millisecond)
	h.feed(t, 0, 500*time.Millisecond)
	h.eventually(t, "the reply under way", func() bool { _, _, _, _, _, sent := h.snapshot(); return sent >= 20 })

	h.feed(t, coughLevel, 160*time.Millisecond)
	_, _, paused, _, _, atCough := h.snapshot()
	if !paused {
		t.Fatal("a sound over the assistant did not pause it")
	}
	h.feed(t, 0, 500*time.Millisecond)
	h.eventually(t, "the reply finished", func() bool { return len(h.turns()) == 2 })

	turns, m, _, pauses, resumes, sent := h.snapshot()
	if pauses != 1 || resumes != 1 || sent <= atCough {
		t.Errorf("pauses %d resumes %d, frames %d then %d: want it resumed after the cough", pauses, resumes, atCough, sent)
	}
	if turns[1].Text != reply || turns[1].Interrupted {
		t.Errorf("assistant turn %+v, want the whole reply, not interrupted", turns[1])
	}
	if n := len(h.srv.Requests()); n != 1 || (m.BargeIns != nil && *m.BargeIns != 0) {
		t.Errorf("%d model requests, barge-ins %v: a cough is not a turn", n, m.BargeIns)
	}
}

func TestEndCall(t *testing.T) {
	h := start(t, llmtest.Reply{Text: "Thanks for calling. Goodbye!", EndCall: true}, nil, "that's all, bye")
	h.feed(t, speechLevel, 600*time.Millisecond)
	h.feed(t, 0, 500*time.Millisecond)
	h.eventually(t, "the conversation to hang up", func() bool {
		select {
		case <-h.stopped:
			return true
		default:
			return false
		}
	})
	if h.err != nil {
		t.Fatalf("Run = %v, want nil (hang up)", h.err)
	}
	turns := h.turns()
	if len(turns) != 2 || turns[1].Text != "Thanks for calling. Goodbye!" || turns[1].Interrupted {
		t.Errorf("turns %+v, want the goodbye said in full before hanging up", turns)
	}
}

func TestModelFailuresApologise(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		kind  string
	}{
		{"server error", llmtest.Reply{Status: 500}, "llm_error"},
		{"no first token in time", llmtest.Reply{Hang: true}, "llm_timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, tt.reply, func(c *conversation.Config) { c.FirstTokenTimeout = 200 * time.Millisecond }, "hello", "are you there")
			h.feed(t, speechLevel, 600*time.Millisecond)
			h.feed(t, 0, 500*time.Millisecond)
			h.eventually(t, "the apology", func() bool { return len(h.turns()) == 2 })
			if got := h.turns()[1].Text; got != conversation.Apology {
				t.Errorf("assistant said %q, want the apology", got)
			}
			m := h.metrics()
			if m.Errors == nil || m.Errors.Count != 1 || m.Errors.LastKind != tt.kind {
				t.Errorf("errors %+v, want 1 %s", m.Errors, tt.kind)
			}
			// It keeps listening: the next turn goes to the model again.
			h.srv.SetReply(llmtest.Reply{Text: "Yes, I'm here."})
			h.feed(t, speechLevel, 600*time.Millisecond)
			h.feed(t, 0, 500*time.Millisecond)
			h.eventually(t, "the next answer", func() bool { return len(h.turns()) == 4 })
			if got := h.turns()[3].Text; got != "Yes, I'm here." {
				t.Errorf("next answer %q", got)
			}
			if msgs := h.srv.Requests()[1].Messages; msgs[3].Content != conversation.Apology {
				t.Errorf("second request %+v, want the apology recorded as said", msgs)
			}
		})
	}
}

func TestRunStopsWithTheCall(t *testing.T) {
	h := start(t, llmtest.Reply{Text: "A long answer that goes on and on and on for quite a while indeed."}, nil, "hi")
	h.feed(t, speechLevel, 600*time.Millisecond)
	h.feed(t, 0, 500*time.Millisecond)
	h.eventually(t, "speech", func() bool { _, _, _, _, _, sent := h.snapshot(); return sent >= 5 })
	h.cancel()
	select {
	case <-h.stopped:
	case <-time.After(2 * time.Second):
		t.Fatal("Run kept going after the call ended")
	}
	if !errors.Is(h.err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", h.err)
	}
	if turns := h.turns(); len(turns) != 2 || turns[1].Text == "" || turns[1].Interrupted {
		t.Errorf("turns %+v, want what was heard of the reply, not marked as a barge-in", turns)
	}
}

func TestTalkingOverTheGreetingCutsIt(t *testing.T) {
	h := start(t, llmtest.Reply{Text: "Of course."}, nil, "can I speak to someone")
	greeting, err := h.line.Speak(tts.PCM{Rate: 16000, Samples: make([]int16, 3*16000)}) // 3 s, as the pipeline queues it
	if err != nil {
		t.Fatal(err)
	}
	h.feed(t, 0, 200*time.Millisecond)
	h.feed(t, speechLevel, 700*time.Millisecond)
	h.feed(t, 0, 500*time.Millisecond)
	h.eventually(t, "the answer", func() bool { return len(h.turns()) == 2 })
	if p := greeting.Progress(); !p.Cut || p.Played >= p.Total {
		t.Errorf("greeting %+v, want it cut part way", p)
	}
	if m := h.metrics(); m.BargeIns == nil || *m.BargeIns != 1 {
		t.Errorf("barge-ins %v, want 1", m.BargeIns)
	}
}

func TestSpeechPastTheMaximumTurnDoesNotCancelTheAnswer(t *testing.T) {
	h := start(t, llmtest.Reply{Text: "Let me answer that first."}, nil, "a very long story")
	h.feed(t, speechLevel, 3500*time.Millisecond) // max turn 3 s: answered while still talking
	h.feed(t, 0, 500*time.Millisecond)
	h.eventually(t, "the answer", func() bool { return len(h.turns()) == 2 })
	turns := h.turns()
	if turns[1].Text != "Let me answer that first." || turns[1].Interrupted || len(h.srv.Requests()) != 1 {
		t.Errorf("turns %+v after %d requests, want the answer in full and one request", turns, len(h.srv.Requests()))
	}
}
