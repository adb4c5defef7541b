package conversation_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/conversation"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/speech"
)

// gate is a noise suppressor that knows the noise: audio at noiseLevel or below comes out
// as silence. It counts what it was handed, to show the audio went through it.
type gate struct{ samples *int }

const noiseLevel = speechLevel / 2

func (g gate) Process(pcm []int16) []int16 {
	*g.samples += len(pcm)
	out := make([]int16, len(pcm))
	for i, v := range pcm {
		if v > noiseLevel || v < -noiseLevel {
			out[i] = v
		}
	}
	return out
}
func (gate) Close() {}

// TestNoiseSuppression: the caller's audio passes the call's suppressor before the VAD,
// so a noise the suppressor removes opens no turn, while speech still does; a version
// with noise suppression off hears the same noise as a turn.
func TestNoiseSuppression(t *testing.T) {
	for _, off := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			var handed int
			v := version
			v.NoiseSuppressionOff = off
			h := startVersion(t, v, llmtest.Reply{Text: "We open at nine."}, func(c *conversation.Config) {
				c.NewSuppressor = func() (speech.Suppressor, error) { return gate{&handed}, nil }
			}, &recognizer{texts: []string{"is that a hum", "when do you open"}})
			h.feed(t, 0, 400*time.Millisecond)
			h.feed(t, noiseLevel, 800*time.Millisecond) // a fan, loud enough for the VAD
			h.feed(t, 0, 800*time.Millisecond)
			noiseTurns := h.rec.turns()
			h.feed(t, speechLevel, 800*time.Millisecond)
			h.feed(t, 0, 500*time.Millisecond)
			h.eventually(t, "the answer", func() bool { return len(h.srv.Requests()) >= 1 })
			switch {
			case !off && (noiseTurns != 0 || handed == 0):
				t.Errorf("suppression on: %d turns from the noise, %d samples through the suppressor; want none, and all the audio through it", noiseTurns, handed)
			case off && (noiseTurns != 1 || handed != 0):
				t.Errorf("suppression off: %d turns from the noise, %d samples through the suppressor; want the noise taken for a turn, and no suppressor", noiseTurns, handed)
			}
			h.hangUp()
		})
	}
}
