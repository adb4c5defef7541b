package conversation_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/conversation"
	"github.com/bridgeline/bridgeline/mediafleet/llm"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/speech"
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
	hangUp  func() // ends the call: the conversation and the line's speech
}

// start runs a conversation on a scripted line against the fake model server (the real
// client, over in-memory pipes); texts are what the recogniser hears in the caller's
// turns, in order. Call it inside a synctest bubble.
func start(t *testing.T, reply llmtest.Reply, mod func(*conversation.Config), texts ...string) *harness {
	t.Helper()
	return startWith(t, reply, mod, &recognizer{texts: texts})
}

func startWith(t *testing.T, reply llmtest.Reply, mod func(*conversation.Config), rec *recognizer) *harness {
	t.Helper()
	return startCall(t, reply, mod, rec, version, nil)
}

// startVersion is startWith for a version of the test's own.
func startVersion(t *testing.T, v persona.Version, reply llmtest.Reply, mod func(*conversation.Config), rec *recognizer) *harness {
	t.Helper()
	return startCall(t, reply, mod, rec, v, nil)
}

// startCall is startWith for version v on a line that runs its tools with tools (nil: a
// line that cannot run tools).
func startCall(t *testing.T, reply llmtest.Reply, mod func(*conversation.Config), rec *recognizer, v persona.Version, tools func(context.Context, speech.ToolCall) speech.ToolResult) *harness {
	t.Helper()
	return startOn(t, reply, mod, rec, v, func(l *line) speech.Line {
		if tools != nil {
			return toolLine{line: l, run: tools}
		}
		return l
	})
}

// startOn is startCall on the line wrap makes of the scripted one.
func startOn(t *testing.T, reply llmtest.Reply, mod func(*conversation.Config), rec *recognizer, v persona.Version, wrap func(*line) speech.Line) *harness {
	t.Helper()
	h := &harness{line: newLine(), rec: rec, syn: &synth{}, srv: llmtest.NewPiped(reply), stopped: make(chan struct{})}
	model, err := llm.New(llm.Config{BaseURL: h.srv.URL(), Model: "default-model", HTTPClient: h.srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := conversation.Config{
		NewVAD:     func() (speech.VAD, error) { return scriptedVAD{}, nil },
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
	playing, stopPlaying := context.WithCancel(context.Background())
	played := make(chan struct{})
	go func() {
		defer close(played)
		h.line.play(playing)
	}()
	on := wrap(h.line)
	go func() {
		defer close(h.stopped)
		h.err = e.Run(ctx, on, v)
	}()
	h.hangUp = func() {
		cancel()
		select {
		case <-h.stopped:
		case <-time.After(5 * time.Second):
			t.Error("Run did not return after its context ended")
		}
		stopPlaying()
		<-played
	}
	t.Cleanup(func() {
		h.hangUp()
		h.srv.Close()
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

func (h *harness) turns() []persona.Turn { return h.state().turns }

func (h *harness) metrics() persona.Metrics { return h.state().metrics }

// eventsOf are the events of type E the conversation published.
func eventsOf[E speech.Event](events []speech.Event) []E {
	var out []E
	for _, e := range events {
		if x, ok := e.(E); ok {
			out = append(out, x)
		}
	}
	return out
}

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
			synctest.Test(t, func(t *testing.T) {
				h := start(t, llmtest.Reply{Text: "Sure."}, func(c *conversation.Config) { c.EndOfTurn = tt.end }, "hello there")
				h.feed(t, 0, 100*time.Millisecond)
				h.feed(t, speechLevel, tt.speech)
				h.feed(t, 0, tt.silence)
				if got := h.rec.turns(); got != tt.want {
					t.Errorf("got %d turns ended, want %d", got, tt.want)
				}
				if tt.want > 0 {
					h.eventually(t, "reply", func() bool { return len(h.srv.Requests()) == 1 })
				}
			})
		})
	}
}

func TestAnswersATurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, llmtest.Reply{Text: "We open at nine. Dr. Rose closes at 5.30 p.m. on Fridays!"}, nil, "when do you open")
		h.feed(t, 0, 400*time.Millisecond)
		h.feed(t, speechLevel, 800*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "whole reply spoken", func() bool { return len(h.turns()) == 2 })

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
		// The caller spoke from 400 to 1200 ms (within a VAD window of each); the reply
		// is 12 words, 1.2 s.
		if turns[0].Speaker != "caller" || turns[0].Text != "when do you open" || turns[0].StartMS < 368 || turns[0].StartMS > 432 ||
			turns[0].EndMS < 1200 || turns[0].EndMS > 1232 {
			t.Errorf("caller turn %+v, want the words from about 400 ms to 1200 ms", turns[0])
		}
		if turns[1].Speaker != "assistant" || turns[1].Text != "We open at nine. Dr. Rose closes at 5.30 p.m. on Fridays!" || turns[1].Interrupted ||
			turns[1].StartMS < turns[0].EndMS || turns[1].EndMS-turns[1].StartMS != 1200 {
			t.Errorf("assistant turn %+v, want the whole reply, 1.2 s, after the caller's", turns[1])
		}
		// The recogniser got the pre-speech padding (256 ms) before the speech.
		if h.rec.leading[0] < 256*16 || h.rec.leading[0] > 300*16 {
			t.Errorf("%d samples before speech given to the recogniser, want about 256 ms", h.rec.leading[0])
		}
		m := h.metrics()
		if m.Turns == nil || *m.Turns != 1 || m.ResponseMS == nil || m.STTFinalMS == nil || m.LLMFirstTokenMS == nil || m.TTSFirstAudioMS == nil || m.Errors != nil {
			t.Fatalf("metrics %+v, want one turn with response, stt, llm and tts figures and no errors", m)
		}
		// The engines take no time here: the response is the end-of-turn silence, decided
		// on a 32 ms window, and the wait for the line's next 20 ms frame.
		if r := m.ResponseMS.P50; r < 400 || r > 400+32+20 {
			t.Errorf("response %d ms, want the 400 ms end-of-turn silence plus at most a window and a frame", r)
		}
	})
}

// TestAnsweredStamps: each answered turn's stages are stamped once, in order: the turn
// decided 400-432 ms after the last speech, the first token after the model's delay.
func TestAnsweredStamps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, llmtest.Reply{Text: "We open at nine. Come by."}, nil, "when do you open")
		h.srv.SetDelays(50*time.Millisecond, 0)
		h.feed(t, speechLevel, 600*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "whole reply spoken", func() bool { return len(h.turns()) == 2 })
		answered := eventsOf[speech.Answered](h.state().events)
		if len(answered) != 1 {
			t.Fatalf("%d Answered events for one turn, want 1", len(answered))
		}
		tm := answered[0].Timing
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
		if d := tm.Decided.Sub(tm.LastSpeech); d < 400*time.Millisecond || d >= 432*time.Millisecond {
			t.Errorf("turn decided %v after the last speech, want 400 ms of silence within a 32 ms window", d)
		}
		if d := tm.FirstToken.Sub(tm.Transcribed); d != 50*time.Millisecond {
			t.Errorf("first token %v after the transcript, want the model's 50 ms delay", d)
		}
	})
}

func TestBargeInCancelsAndRecordsWhatWasHeard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		long := "Our roses come from three farms. Each farm grows a dozen kinds of rose. We cut them every morning at six. They reach the shop by noon the same day."
		h := start(t, llmtest.Reply{Text: long}, nil, "tell me about roses", "do you deliver")
		h.srv.SetDelays(0, 5*time.Millisecond)
		h.feed(t, speechLevel, 600*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "reply half way", func() bool { return h.state().sent >= 60 })

		// The caller talks over it: paused on the first confident window.
		h.line.alignToWindow(t, h.stopped)
		before := h.state().sent
		h.feed(t, speechLevel, 60*time.Millisecond)
		if s := h.state(); !s.paused || s.sent-before > 3 {
			t.Fatalf("paused %v, %d frames sent in the 60 ms after the caller started talking: want paused within a window", s.paused, s.sent-before)
		}
		h.feed(t, speechLevel, 600*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "second question answered", func() bool { return len(h.turns()) == 4 })

		turns := h.turns()
		cut := turns[1]
		if cut.Speaker != "assistant" || !cut.Interrupted || cut.Text == "" || len(cut.Text) >= len(long) || !strings.HasPrefix(long, cut.Text) {
			t.Errorf("interrupted turn %+v, want a marked prefix of %q", cut, long)
		}
		if turns[2].Speaker != "caller" || turns[2].Text != "do you deliver" || turns[2].StartMS < cut.StartMS || turns[2].StartMS > cut.EndMS+20 {
			t.Errorf("third turn %+v, want the caller's new question, from where the reply stopped", turns[2])
		}
		reqs := h.srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("model got %d requests, want 2", len(reqs))
		}
		msgs := reqs[1].Messages
		if len(msgs) != 5 || msgs[3] != (llmtest.Message{Role: "assistant", Content: cut.Text}) || msgs[4] != (llmtest.Message{Role: "user", Content: "do you deliver"}) {
			t.Errorf("second request's messages %+v, want the reply as cut then the new question", msgs)
		}
		// The pause comes as the onset window is scored: 32 ms after its start.
		m := h.metrics()
		if m.BargeIns == nil || *m.BargeIns != 1 || m.BargeInStopMS == nil || m.BargeInStopMS.P95 != 32 {
			t.Errorf("barge-ins %v stop %+v, want 1 within 32 ms", m.BargeIns, m.BargeInStopMS)
		}
	})
}

func TestCoughResumes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reply := "Our roses come from three farms. Each farm grows a dozen kinds of rose."
		h := start(t, llmtest.Reply{Text: reply}, nil, "tell me about roses")
		h.feed(t, speechLevel, 600*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "reply under way", func() bool { return h.state().sent >= 20 })

		h.feed(t, coughLevel, 160*time.Millisecond)
		at := h.state()
		if !at.paused {
			t.Fatal("a sound over the assistant did not pause it")
		}
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "reply finished", func() bool { return len(h.turns()) == 2 })

		s := h.state()
		if s.pauses != 1 || s.resumes != 1 || s.sent <= at.sent {
			t.Errorf("pauses %d resumes %d, frames %d then %d: want it resumed after the cough", s.pauses, s.resumes, at.sent, s.sent)
		}
		if s.turns[1].Text != reply || s.turns[1].Interrupted {
			t.Errorf("assistant turn %+v, want the whole reply, not interrupted", s.turns[1])
		}
		if n := len(h.srv.Requests()); n != 1 || (s.metrics.BargeIns != nil && *s.metrics.BargeIns != 0) {
			t.Errorf("%d model requests, barge-ins %v: a cough is not a turn", n, s.metrics.BargeIns)
		}
	})
}

func TestEndCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, llmtest.Reply{Text: "Thanks for calling. Goodbye!", EndCall: true}, nil, "that's all, bye")
		h.feed(t, speechLevel, 600*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "hang-up", func() bool { return closed(h.stopped) })
		if h.err != nil {
			t.Fatalf("Run = %v, want nil (hang up)", h.err)
		}
		turns := h.turns()
		if len(turns) != 2 || turns[1].Text != "Thanks for calling. Goodbye!" || turns[1].Interrupted {
			t.Errorf("turns %+v, want the goodbye said in full before hanging up", turns)
		}
	})
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
			synctest.Test(t, func(t *testing.T) {
				h := start(t, tt.reply, func(c *conversation.Config) { c.FirstTokenTimeout = 200 * time.Millisecond }, "hello", "are you there")
				h.feed(t, speechLevel, 600*time.Millisecond)
				h.feed(t, 0, 500*time.Millisecond)
				h.eventually(t, "apology", func() bool { return len(h.turns()) == 2 })
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
				h.eventually(t, "next answer", func() bool { return len(h.turns()) == 4 })
				if got := h.turns()[3].Text; got != "Yes, I'm here." {
					t.Errorf("next answer %q", got)
				}
				if msgs := h.srv.Requests()[1].Messages; msgs[3].Content != conversation.Apology {
					t.Errorf("second request %+v, want the apology recorded as said", msgs)
				}
			})
		})
	}
}

func TestRunStopsWithTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, llmtest.Reply{Text: "A long answer that goes on and on and on for quite a while indeed."}, nil, "hi")
		h.feed(t, speechLevel, 600*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "speech", func() bool { return h.state().sent >= 5 })
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
	})
}

// longGreeting plays for 1.3 s.
const longGreeting = "Hello, this is Maya at the flower shop. How can I help you today?"

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestHangUpWhileTranscribing: the call ends while the recogniser is still at a turn
// spoken over the reply; the reply stops, and what was heard of it is recorded.
func TestHangUpWhileTranscribing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, llmtest.Reply{Text: "Our roses come from three farms. Each farm grows a dozen kinds of rose."}, nil, "tell me about roses")
		h.feed(t, speechLevel, 600*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "reply under way", func() bool { return h.state().sent >= 20 })
		h.rec.mu.Lock()
		h.rec.stall = true
		h.rec.mu.Unlock()
		h.feed(t, coughLevel, 160*time.Millisecond)
		h.eventually(t, "end of the turn", func() bool { // the recogniser does not answer
			h.rec.mu.Lock()
			defer h.rec.mu.Unlock()
			return h.rec.stalled == 1
		})
		h.hangUp()
		if !errors.Is(h.err, context.Canceled) {
			t.Errorf("Run = %v, want context.Canceled", h.err)
		}
		if turns := h.turns(); len(turns) != 2 || turns[1].Text == "" || turns[1].Interrupted {
			t.Errorf("turns %+v, want what was heard of the reply, not marked as a barge-in", turns)
		}
	})
}

// greet plays the greeting as the worker does before the conversation starts, and
// follows it; started receives the time its first frame went out.
func greet(t *testing.T, h *harness, text string) (started <-chan time.Time, followed <-chan struct{}) {
	t.Helper()
	g, err := conversation.Greet(h.line, text, words(text))
	if err != nil {
		t.Fatal(err)
	}
	at := make(chan time.Time, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.Follow(context.Background(), func(t time.Time) { at <- t })
	}()
	return at, done
}

func TestGreeting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, llmtest.Reply{Text: "Of course."}, nil, "can I order roses")
		began := time.Now()
		started, followed := greet(t, h, version.Greeting) // four words, 400 ms
		h.feed(t, 0, 600*time.Millisecond)
		select {
		case at := <-started:
			if d := at.Sub(began); d != 30*time.Millisecond {
				t.Errorf("greeting started %v after it was queued, want at the line's first frame, 30 ms", d)
			}
		default:
			t.Fatal("the greeting's start was not told")
		}
		<-followed
		s := h.state()
		if len(s.turns) != 1 || s.turns[0] != (persona.Turn{Speaker: "assistant", Text: version.Greeting, StartMS: 30, EndMS: 430}) {
			t.Errorf("transcript %+v, want the whole greeting from 30 to 430 ms", s.turns)
		}
		if ws := eventsOf[speech.Words](s.events); len(ws) != 2 || ws[0].Final || ws[0].Text != version.Greeting || !ws[1].Final {
			t.Errorf("words %+v, want the greeting as it starts, then final", ws)
		}
		// The model is told the greeting was said.
		h.feed(t, speechLevel, 600*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "answer", func() bool { return len(h.turns()) == 3 })
		if msgs := h.srv.Requests()[0].Messages; len(msgs) != 3 || msgs[1] != (llmtest.Message{Role: "assistant", Content: version.Greeting}) {
			t.Errorf("request %+v, want the greeting as the first assistant message", msgs)
		}
	})
}

func TestTalkingOverTheGreetingCutsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, llmtest.Reply{Text: "Of course."}, nil, "can I speak to someone")
		long := "Hello, this is Maya at the flower shop on the corner of Main Street and Elm, open every day from nine until six."
		_, followed := greet(t, h, long)
		h.feed(t, 0, 200*time.Millisecond)
		h.feed(t, speechLevel, 700*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "answer", func() bool { return len(h.turns()) == 3 })
		<-followed
		turns := h.turns()
		if g := turns[0]; g.Speaker != "assistant" || !g.Interrupted || g.Text == "" || !strings.HasPrefix(long, g.Text) || len(g.Text) >= len(long) {
			t.Errorf("first turn %+v, want the greeting as far as it played, interrupted", g)
		}
		if turns[1].Text != "can I speak to someone" || turns[2].Text != "Of course." {
			t.Errorf("turns %+v, want the caller's question and its answer after the greeting", turns)
		}
		if m := h.metrics(); m.BargeIns == nil || *m.BargeIns != 1 {
			t.Errorf("barge-ins %v, want 1", m.BargeIns)
		}
	})
}

func TestCoughOverTheGreetingResumesIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, llmtest.Reply{Text: "Of course."}, nil)
		_, followed := greet(t, h, longGreeting)
		h.feed(t, 0, 300*time.Millisecond)
		h.feed(t, coughLevel, 160*time.Millisecond)
		h.eventually(t, "greeting played", func() bool { return closed(followed) })
		s := h.state()
		if len(s.turns) != 1 || s.turns[0].Text != longGreeting || s.turns[0].Interrupted || s.pauses != 1 || s.resumes != 1 {
			t.Errorf("transcript %+v after %d pauses and %d resumes, want the whole greeting, paused once and resumed", s.turns, s.pauses, s.resumes)
		}
		if n := len(h.srv.Requests()); n != 0 {
			t.Errorf("%d model requests: a cough is not a turn", n)
		}
	})
}

func TestHangUpDuringTheGreeting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, llmtest.Reply{Text: "Of course."}, nil)
		_, followed := greet(t, h, longGreeting)
		h.feed(t, 0, 500*time.Millisecond)
		h.hangUp()
		<-followed
		turns := h.turns()
		if len(turns) != 1 || turns[0].Interrupted || turns[0].Text == "" || len(turns[0].Text) >= len(longGreeting) {
			t.Errorf("transcript %+v, want what was heard of the greeting, not marked as a barge-in", turns)
		}
	})
}

// TestCaptions: the words of both sides come as they are known, for live captions:
// the caller's while they speak (from a recogniser with interim results) and final at
// the end of the turn, the assistant's as each sentence starts and final when the reply
// ends, cut at a barge-in.
func TestCaptions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		long := "Our roses come from three farms. Each farm grows a dozen kinds of rose. We cut them every morning at six."
		h := startWith(t, llmtest.Reply{Text: long}, nil, &recognizer{texts: []string{"tell me about your roses", "thanks"}, interim: true})
		h.feed(t, speechLevel, 500*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "second sentence", func() bool { return h.state().sent >= 50 })
		h.srv.SetReply(llmtest.Reply{Text: "You are welcome."})
		h.line.alignToWindow(t, h.stopped)
		h.feed(t, speechLevel, 400*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "answer to the thanks", func() bool { return len(h.turns()) == 4 })

		var got []string
		for _, w := range eventsOf[speech.Words](h.state().events) {
			kind := "interim"
			if w.Final {
				kind = "final"
			}
			if w.Interrupted {
				kind += ", interrupted"
			}
			got = append(got, string(w.Speaker)+" ("+kind+"): "+w.Text)
		}
		want := []string{
			"caller (interim): tell",
			"caller (interim): tell me",
			"caller (interim): tell me about",
			"caller (interim): tell me about your",
			"caller (interim): tell me about your roses",
			"caller (final): tell me about your roses",
			"assistant (interim): Our roses come from three farms.",
			"assistant (interim): Our roses come from three farms. Each farm grows a dozen kinds of rose.",
			"caller (interim): thanks",
			"assistant (final, interrupted): " + h.turns()[1].Text,
			"caller (final): thanks",
			"assistant (interim): You are welcome.",
			"assistant (final): You are welcome.",
		}
		if !slices.Equal(got, want) {
			t.Errorf("words:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

func TestSpeechPastTheMaximumTurnDoesNotCancelTheAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, llmtest.Reply{Text: "Let me answer that first."}, nil, "a very long story")
		h.feed(t, speechLevel, 3500*time.Millisecond) // max turn 3 s: answered while still talking
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "answer", func() bool { return len(h.turns()) == 2 })
		turns := h.turns()
		if turns[1].Text != "Let me answer that first." || turns[1].Interrupted || len(h.srv.Requests()) != 1 {
			t.Errorf("turns %+v after %d requests, want the answer in full and one request", turns, len(h.srv.Requests()))
		}
	})
}

// TestKeysMakeATurn: keys pressed with no speech are the caller's turn once the caller
// stops pressing (the key gap), as "[pressed 1] [pressed #]", answered by the model and
// kept in the transcript; a key pressed while the caller speaks joins that turn.
func TestKeysMakeATurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, llmtest.Reply{Text: "Thank you."}, nil, "when do you open")
		h.feed(t, 0, 400*time.Millisecond)
		h.line.keys <- speech.Key{Digit: "1", At: time.Now()}
		h.feed(t, 0, 500*time.Millisecond)
		h.line.keys <- speech.Key{Digit: "#", At: time.Now()}
		h.feed(t, 0, 2*time.Second)
		h.eventually(t, "the keys answered", func() bool { return len(h.turns()) == 2 })
		turns := h.turns()
		if turns[0].Speaker != "caller" || turns[0].Text != "[pressed 1] [pressed #]" || turns[0].StartMS < 400 || turns[0].EndMS < 900 {
			t.Errorf("caller turn %+v, want both keys, from the first to the last", turns[0])
		}
		reqs := h.srv.Requests()
		if len(reqs) != 1 || reqs[0].Messages[len(reqs[0].Messages)-1] != (llmtest.Message{Role: "user", Content: "[pressed 1] [pressed #]"}) {
			t.Errorf("requests %+v, want one ending with the keys as the caller's words", reqs)
		}

		h.feed(t, speechLevel, 400*time.Millisecond)
		h.line.keys <- speech.Key{Digit: "5", At: time.Now()}
		h.feed(t, speechLevel, 400*time.Millisecond)
		h.feed(t, 0, time.Second)
		h.eventually(t, "the spoken turn with its key answered", func() bool { return len(h.turns()) == 4 })
		if got := h.turns()[2]; got.Speaker != "caller" || got.Text != "when do you open [pressed 5]" {
			t.Errorf("caller turn %+v, want the words and the key pressed while speaking", got)
		}
	})
}

// TestAPITransferFailureIsSaid: the control plane's notice that a transfer the assistant
// did not ask for failed (an API transfer of its call) cuts what the assistant is saying
// and has it tell the caller; the call goes on and the caller is answered as before.
func TestAPITransferFailureIsSaid(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		long := "Our roses come from three farms. Each farm grows a dozen kinds of rose. We cut them every morning at six."
		h := startWith(t, llmtest.Reply{Text: long}, nil, &recognizer{texts: []string{"tell me about your roses", "thanks"}})
		h.feed(t, speechLevel, 500*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "the answer under way", func() bool { return h.state().sent >= 50 })
		h.line.transferFailures <- speech.TransferFailure{To: "+15550199999", Failure: "the destination refused the transfer or did not answer"}
		h.feed(t, 0, 6*time.Second)
		h.eventually(t, "the failure said", func() bool {
			turns := h.turns()
			return len(turns) == 3 && turns[2].Text == conversation.TransferFailed && !turns[2].Interrupted
		})
		if turns := h.turns(); !turns[1].Interrupted {
			t.Errorf("the answer under way %+v, want it cut for the failure", turns[1])
		}
		h.srv.SetReply(llmtest.Reply{Text: "You are welcome."})
		h.feed(t, speechLevel, 400*time.Millisecond)
		h.feed(t, 0, 2*time.Second)
		h.eventually(t, "the caller answered after", func() bool { return len(h.turns()) == 5 })
		if closed(h.stopped) {
			t.Error("the conversation ended after a failed transfer, want it to go on")
		}
	})
}

// TestTransferCall: with transfer destinations on the version, the model is offered
// transfer_call; when it calls it, the assistant says its handover sentence to the end,
// then the line transfers the call to the destination and the conversation is over. A
// transfer that fails is said to the caller and the call goes on; a destination the
// version does not list is not transferred to.
func TestTransferCall(t *testing.T) {
	v := version
	v.TransferDestinations = []persona.TransferDestination{{To: "+15550199999", Description: "the sales team"},
		{To: "sip:desk@pbx.example.com", Description: "the front desk"}}
	call := func(dest string) llmtest.Reply {
		return llmtest.Reply{Text: "Let me put you through.", ToolCalls: []llmtest.ToolCall{{Name: "transfer_call",
			Arguments: `{"destination":"` + dest + `"}`}}}
	}
	synctest.Test(t, func(t *testing.T) {
		h := startVersion(t, v, call("+15550199999"), nil, &recognizer{texts: []string{"sales please"}})
		h.feed(t, speechLevel, 600*time.Millisecond)
		h.feed(t, 0, 3*time.Second)
		h.eventually(t, "the transfer", func() bool { return closed(h.stopped) })
		if h.err != nil {
			t.Fatalf("Run = %v, want nil (transferred)", h.err)
		}
		if got := h.line.transferred(); len(got) != 1 || got[0] != "+15550199999" {
			t.Errorf("transfers %v, want one to the sales team", got)
		}
		if req := h.srv.Requests()[0]; !req.HasTool("transfer_call") || !req.HasTool("end_call") {
			t.Errorf("tools offered: transfer_call %v, end_call %v; want both", req.HasTool("transfer_call"), req.HasTool("end_call"))
		}
		if turns := h.turns(); len(turns) != 2 || turns[1].Text != "Let me put you through." || turns[1].Interrupted {
			t.Errorf("turns %+v, want the handover sentence in full before the transfer", turns)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := startVersion(t, v, call("sip:desk@pbx.example.com"), nil, &recognizer{texts: []string{"the desk please"}})
		h.line.transferErr = errors.New("busy")
		h.feed(t, speechLevel, 600*time.Millisecond)
		h.feed(t, 0, 8*time.Second)
		h.eventually(t, "the failure said", func() bool {
			turns := h.turns()
			return len(turns) == 3 && turns[2].Text == conversation.TransferFailed
		})
		if closed(h.stopped) {
			t.Error("the conversation ended after a failed transfer, want it to go on")
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := startVersion(t, v, call("+19005550000"), nil, &recognizer{texts: []string{"premium please"}})
		h.feed(t, speechLevel, 600*time.Millisecond)
		h.feed(t, 0, 3*time.Second)
		h.eventually(t, "the reply", func() bool { return len(h.turns()) == 2 })
		if got := h.line.transferred(); len(got) != 0 || closed(h.stopped) {
			t.Errorf("transfers %v (ended %v), want none to a destination the version does not list", got, closed(h.stopped))
		}
	})
}
