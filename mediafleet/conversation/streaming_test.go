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
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/mediafleet/stt/deepgram"
	"github.com/bridgeline/bridgeline/mediafleet/stt/deepgram/deepgramtest"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
)

// TestStreamingRecognizer: the conversation with the real Deepgram client against the
// fake service (its wire protocol over in-memory pipes), on the simulated clock. The
// caller's words come as interim captions while they speak; the final text comes the
// service's own delay after the end of the turn, nothing added (stt_final), or at the
// end of the turn when the client was flushed in the pause before it; a socket
// that drops in the middle of a turn loses none of it; with the service down and no
// fallback, the turn is answered with the apology and counted as an stt_error.
func TestStreamingRecognizer(t *testing.T) {
	t.Run("flushed in the pause", func(t *testing.T) { testStreamingRecognizer(t, 0) })
	t.Run("not flushed", func(t *testing.T) { testStreamingRecognizer(t, conversation.NoFlush) })
}

// testStreamingRecognizer is TestStreamingRecognizer with Config.FlushAfter flush: when
// the client is flushed in the caller's pause (by default at 224 ms of the 416 that end
// the turn), the service's answer comes during the pause and the final text is there
// at the end-of-turn decision (stt_final 0); not flushed, it comes the service's delay
// after it.
func testStreamingRecognizer(t *testing.T, flush time.Duration) {
	synctest.Test(t, func(t *testing.T) {
		const delay = 120 * time.Millisecond
		sttWant := time.Duration(0)
		if flush == conversation.NoFlush {
			sttWant = delay
		}
		srv := deepgramtest.NewPiped(deepgramtest.Config{Key: "k", FinalizeDelay: delay, InterimEvery: 200 * time.Millisecond})
		// The scripted line's speech is speechLevel; a cough (coughLevel) has no words.
		script := []string{"when do you open", "and on sundays"}
		srv.SetConfig(func(c *deepgramtest.Config) {
			c.Words = func(audio []int16, final bool) string {
				if !slices.Contains(audio, speechLevel) || len(script) == 0 {
					return ""
				}
				text := script[0]
				if final {
					script = script[1:]
				}
				return text
			}
		})
		dg, err := deepgram.New(deepgram.Config{APIKey: "k", BaseURL: srv.URL(), Dialer: srv.Dialer(),
			Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		h := startWith(t, llmtest.Reply{Text: "We open at nine."}, func(c *conversation.Config) { c.Recognizer, c.FlushAfter = dg, flush }, &recognizer{})
		t.Cleanup(srv.Close) // after the call's transcriber closed its stream

		h.feed(t, 0, 300*time.Millisecond)
		h.feed(t, speechLevel, 900*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "the answer", func() bool { return len(h.turns()) == 2 })
		st := h.state()
		if st.turns[0].Text != "when do you open" {
			t.Errorf("caller turn %q, want the service's words", st.turns[0].Text)
		}
		var interim []string
		for _, w := range eventsOf[speech.Words](st.events) {
			if w.Speaker == speech.Caller && !w.Final {
				interim = append(interim, w.Text)
			}
		}
		if len(interim) == 0 {
			t.Error("no interim caller words while the caller spoke")
		}
		sttFinal := func() []time.Duration {
			var out []time.Duration
			for _, l := range eventsOf[speech.Latency](h.state().events) {
				if l.Step == speech.STTFinal {
					out = append(out, l.Took)
				}
			}
			return out
		}
		if got := sttFinal(); !slices.Equal(got, []time.Duration{sttWant}) {
			t.Errorf("stt_final %v, want %v", got, sttWant)
		}

		// The socket drops in the middle of the next turn.
		h.srv.SetReply(llmtest.Reply{Text: "Ten to four."})
		h.feed(t, speechLevel, 400*time.Millisecond)
		srv.DropAll()
		h.feed(t, speechLevel, 400*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "the second answer", func() bool { return len(h.turns()) == 4 })
		if got := h.turns()[2].Text; got != "and on sundays" {
			t.Errorf("caller turn across the drop %q, want it whole", got)
		}
		if n := len(srv.Received()); n != 2 {
			t.Errorf("%d connections, want 2 (one dropped)", n)
		}
		if got := sttFinal(); !slices.Equal(got, []time.Duration{sttWant, sttWant}) {
			t.Errorf("stt_final %v, want %v for the turn across the drop too", got, sttWant)
		}

		// Down, no fallback: the apology.
		srv.SetConfig(func(c *deepgramtest.Config) { c.Down = true })
		srv.DropAll()
		h.feed(t, 0, 6*time.Second) // past the client's redial backoff
		h.feed(t, speechLevel, 600*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "the apology", func() bool { return len(h.turns()) == 5 })
		if got := h.turns()[4].Text; got != conversation.Missed {
			t.Errorf("reply with the service down %q, want %q", got, conversation.Missed)
		}
		if m := h.metrics(); m.Errors == nil || m.Errors.LastKind != string(speech.STTError) {
			t.Errorf("errors %+v, want the stt_error counted", m.Errors)
		}
	})
}

// TestFlushInPauses: with a recogniser that can flush (speech.Flusher), the conversation
// flushes it once per pause of the caller, at the window whose silence reaches
// FlushAfter (the 7th of 32 ms, 224 ms, for the default 200 ms), whether the caller then
// goes on (the pause's held windows reach the recogniser before the new speech: it
// hears the turn whole) or the pause ends the turn (the rest of the pause is never
// sent). With FlushAfter NoFlush it is never flushed and hears every window, as a
// recogniser that cannot flush does.
func TestFlushInPauses(t *testing.T) {
	const window = scriptedWindow
	for _, tc := range []struct {
		name    string
		flush   time.Duration
		flushes []int // silent samples before each Flush
		written int   // samples the recogniser got in the turn
	}{
		// The turn: 8 windows of padding, 20 of speech, a pause of 10 (under the 13 that
		// end a turn), 10 of speech, then the 13 that end it.
		{"default", 0, []int{7 * window, 7 * window}, (8 + 20 + 10 + 10 + 7) * window},
		{"at 100ms", 100 * time.Millisecond, []int{4 * window, 4 * window}, (8 + 20 + 10 + 10 + 4) * window},
		{"off", conversation.NoFlush, nil, (8 + 20 + 10 + 10 + 13) * window},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := &recognizer{texts: []string{"i would like two dozen roses"}, flush: true}
				h := startWith(t, llmtest.Reply{Text: "Red ones?"}, func(c *conversation.Config) { c.FlushAfter = tc.flush }, rec)
				h.feed(t, 0, 10*32*time.Millisecond)
				h.feed(t, speechLevel, 20*32*time.Millisecond)
				h.feed(t, 0, 10*32*time.Millisecond) // the line's 20 ms frames: whole windows
				h.feed(t, speechLevel, 10*32*time.Millisecond)
				h.feed(t, 0, 20*32*time.Millisecond)
				h.eventually(t, "the answer", func() bool { return len(h.turns()) == 2 })
				if got := h.turns()[0].Text; got != "i would like two dozen roses" {
					t.Errorf("caller turn %q", got)
				}
				rec.mu.Lock()
				defer rec.mu.Unlock()
				if !slices.Equal(rec.flushes, tc.flushes) {
					t.Errorf("Flush after %v samples of silence, want %v", rec.flushes, tc.flushes)
				}
				if rec.written != tc.written {
					t.Errorf("the recogniser got %d samples (%.1f windows), want %d", rec.written, float64(rec.written)/window, tc.written)
				}
				if rec.words != 30*window {
					t.Errorf("the recogniser got %d samples of speech, want all %d", rec.words, 30*window)
				}
			})
		})
	}
}

// TestFlushAfterEndOfTurn: a flush point at or past the end-of-turn silence is refused.
func TestFlushAfterEndOfTurn(t *testing.T) {
	_, err := conversation.New(conversation.Config{NewVAD: func() (speech.VAD, error) { return scriptedVAD{}, nil },
		Recognizer: &recognizer{}, Model: noModel{}, Voices: func(string) tts.Synthesizer { return &synth{} },
		EndOfTurn: 300 * time.Millisecond, FlushAfter: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "flush after") {
		t.Errorf("New with FlushAfter = EndOfTurn: %v, want an error", err)
	}
}

type noModel struct{}

func (noModel) Stream(context.Context, speech.Request) (speech.Stream, error) {
	return nil, errors.New("no model")
}

// TestPunctuationEndsTheTurnSooner: with the real Deepgram client against the fake
// service, a caller turn the service punctuates as a finished sentence ("Roses,
// please.") ends after the short silence; the same words unpunctuated say nothing of
// their end and wait the fixed silence.
func TestPunctuationEndsTheTurnSooner(t *testing.T) {
	for _, tc := range []struct {
		text string
		want time.Duration // end of speech to the end-of-turn decision, within a frame
	}{{"Roses, please.", 256 * time.Millisecond}, {"roses please", 416 * time.Millisecond}} {
		t.Run(tc.text, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := deepgramtest.NewPiped(deepgramtest.Config{Key: "k", FinalizeDelay: 20 * time.Millisecond, InterimEvery: 100 * time.Millisecond})
				srv.SetConfig(func(c *deepgramtest.Config) {
					c.Words = func(audio []int16, final bool) string {
						if !slices.Contains(audio, speechLevel) {
							return ""
						}
						return tc.text
					}
				})
				dg, err := deepgram.New(deepgram.Config{APIKey: "k", BaseURL: srv.URL(), Dialer: srv.Dialer(),
					Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
				if err != nil {
					t.Fatal(err)
				}
				h := startWith(t, llmtest.Reply{Text: "Of course."}, func(c *conversation.Config) { c.Recognizer, c.FlushAfter = dg, conversation.NoFlush }, &recognizer{})
				t.Cleanup(srv.Close)
				h.feed(t, 0, 96*time.Millisecond)
				h.feed(t, speechLevel, 620*time.Millisecond)
				h.eventually(t, "the answer", func() bool { return len(h.turns()) == 2 })
				var got []time.Duration
				for _, a := range eventsOf[speech.Answered](h.state().events) {
					got = append(got, a.Timing.Decided.Sub(a.Timing.LastSpeech))
				}
				if len(got) != 1 || got[0] < tc.want-20*time.Millisecond || got[0] > tc.want+20*time.Millisecond {
					t.Errorf("end of speech to the end-of-turn decision %v, want %v", got, tc.want)
				}
			})
		})
	}
}
