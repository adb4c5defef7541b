package conversation_test

import (
	"io"
	"log/slog"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/conversation"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/mediafleet/stt/deepgram"
	"github.com/bridgeline/bridgeline/mediafleet/stt/deepgram/deepgramtest"
)

// TestStreamingRecognizer: the conversation with the real Deepgram client against the
// fake service (its wire protocol over in-memory pipes), on the simulated clock. The
// caller's words come as interim captions while they speak; the final text comes the
// service's own delay after the end of the turn, nothing added (stt_final); a socket
// that drops in the middle of a turn loses none of it; with the service down and no
// fallback, the turn is answered with the apology and counted as an stt_error.
func TestStreamingRecognizer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const delay = 120 * time.Millisecond
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
		h := startWith(t, llmtest.Reply{Text: "We open at nine."}, func(c *conversation.Config) { c.Recognizer = dg }, &recognizer{})
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
		if got := sttFinal(); !slices.Equal(got, []time.Duration{delay}) {
			t.Errorf("stt_final %v, want the service's own %v", got, delay)
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
		if got := sttFinal(); !slices.Equal(got, []time.Duration{delay, delay}) {
			t.Errorf("stt_final %v, want the service's own %v for the turn across the drop too", got, delay)
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
