package conversation_test

import (
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/speech"
)

// TestUsageCounted: a call's record sums the caller audio the recogniser got, the
// characters synthesised and the model's tokens: the model's own usage report when it
// sends one, else counted by the worker and marked estimated.
func TestUsageCounted(t *testing.T) {
	for _, noUsage := range []bool{false, true} {
		name := "model reports usage"
		if noUsage {
			name = "model reports none"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := start(t, llmtest.Reply{Text: "We open at nine. See you then!", NoUsage: noUsage}, nil, "when do you open", "thanks")
				for range 2 {
					h.feed(t, 0, 400*time.Millisecond)
					h.feed(t, speechLevel, 800*time.Millisecond)
					h.feed(t, 0, 500*time.Millisecond)
					n := len(h.turns())
					h.eventually(t, "reply spoken", func() bool { return len(h.turns()) >= n+1 && !h.line.Speaking() })
				}
				h.hangUp()
				u := h.state().usage

				h.rec.mu.Lock()
				written := h.rec.written
				h.rec.mu.Unlock()
				if want := int64(written / 16); written == 0 || u.STTAudioMS != want {
					t.Errorf("stt_audio_ms %d, want the %d ms the recogniser got", u.STTAudioMS, want)
				}
				if u.STTAudioMS < 2*800 {
					t.Errorf("stt_audio_ms %d, want at least the two turns' 1600 ms of speech", u.STTAudioMS)
				}
				chars := 0
				for _, s := range h.syn.said() {
					chars += utf8.RuneCountInString(s)
				}
				if chars == 0 || u.TTSCharacters != int64(chars) {
					t.Errorf("tts_characters %d, want the %d synthesised", u.TTSCharacters, chars)
				}
				reqs := h.srv.Requests()
				if len(reqs) != 2 {
					t.Fatalf("%d model requests, want 2", len(reqs))
				}
				if noUsage {
					// The worker's count: about four characters a token of what was sent
					// and what came back ("We open at nine. See you then!" is 30).
					var prompt int
					for _, r := range reqs {
						req := speech.Request{Messages: make([]speech.Message, len(r.Messages))}
						for i, m := range r.Messages {
							req.Messages[i] = speech.Message{Role: m.Role, Content: m.Content}
						}
						prompt += speech.EstimatePrompt(req)
					}
					if !u.Estimated || u.LLMCompletionTokens != 2*8 || u.LLMPromptTokens < int64(prompt) {
						t.Errorf("usage %+v, want estimated, 16 completion tokens, prompt at least %d", u, prompt)
					}
					return
				}
				var prompt, completion int64
				for _, r := range h.srv.Usages() {
					prompt += int64(r.PromptTokens)
					completion += int64(r.CompletionTokens)
				}
				if u.Estimated || u.LLMPromptTokens != prompt || u.LLMCompletionTokens != completion || prompt == 0 {
					t.Errorf("usage %+v, want the model's own %d prompt and %d completion tokens", u, prompt, completion)
				}
			})
		})
	}
}
