package voices

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/bridgeline/bridgeline/mediafleet/resample"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest/sphinx"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/mediafleet/tts/espeak"
	"github.com/bridgeline/bridgeline/mediafleet/tts/flite"
	"github.com/bridgeline/bridgeline/shared/persona"
)

var sentences = []string{
	"Hello, thank you for calling. How can I help you today?",
	"The store opens at nine in the morning.",
}

func speak(t *testing.T, s tts.Synthesizer, text string) []int16 {
	t.Helper()
	pcm, err := s.Synthesize(context.Background(), text)
	if err != nil {
		t.Fatal(err)
	}
	out, err := resample.Mono(pcm.Samples, pcm.Rate, speechtest.Rate)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLocalVoices: every voice of the catalogue speaks, with its engine, and the flite
// voices are heard as the words they were given.
func TestLocalVoices(t *testing.T) {
	c, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range persona.LocalVoices {
		t.Run(v.ID, func(t *testing.T) {
			s := c.Synthesizer(v.ID)
			switch v.Engine {
			case persona.EngineFlite:
				if _, ok := s.(*flite.Synthesizer); !ok {
					t.Fatalf("%s is a %T, want flite", v.ID, s)
				}
				got, err := sphinx.Choose(context.Background(), speak(t, s, sentences[0]), sentences)
				if err != nil {
					t.Fatal(err)
				}
				if want := strings.Join(sphinx.Words(sentences[0]), " "); got != want {
					t.Errorf("heard %q, want %q", got, want)
				}
			case persona.EngineEspeak:
				e, ok := s.(*espeak.Synthesizer)
				if !ok || e.Voice != v.EngineVoice {
					t.Fatalf("%s is %#v, want espeak-ng voice %s", v.ID, s, v.EngineVoice)
				}
				if pcm := speak(t, s, sentences[1]); speechtest.RMS(pcm) < 300 {
					t.Errorf("espeak-ng spoke %d samples at RMS %.0f: no speech", len(pcm), speechtest.RMS(pcm))
				}
			}
		})
	}
	plain := speechtest.MeanF0(speak(t, c.Synthesizer("flite-slt"), sentences[1]))
	bright := speechtest.MeanF0(speak(t, c.Synthesizer("flite-slt-bright"), sentences[1]))
	if bright < plain+20 {
		t.Errorf("flite-slt-bright at %.0f Hz, flite-slt at %.0f Hz: want it brighter", bright, plain)
	}
}

func TestUnknownVoiceSpeaksDefault(t *testing.T) {
	var logs bytes.Buffer
	c, err := New(Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	def := c.Synthesizer(Default)
	for _, id := range []string{"no-such-voice", "no-such-voice", "", "hosted-nova", "en-us+f3"} {
		if got := c.Synthesizer(id); got != def {
			t.Errorf("Synthesizer(%q) = %#v, want the default %s", id, got, Default)
		}
	}
	if n := strings.Count(logs.String(), "voice=no-such-voice"); n != 1 {
		t.Errorf("unknown voice logged %d times, want once:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "voice=hosted-nova") {
		t.Errorf("a hosted voice with no speech API configured was not logged:\n%s", logs.String())
	}
	for _, v := range c.List() {
		if v.Engine == persona.EngineHosted {
			t.Errorf("List offers %s with no speech API configured", v.ID)
		}
	}
}

func TestHostedVoices(t *testing.T) {
	var mu sync.Mutex
	var voices []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Voice, Input, Model string }
		if r.URL.Path != "/v1/audio/speech" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		voices = append(voices, req.Voice+"/"+req.Model)
		mu.Unlock()
		w.Header().Set("Content-Type", "audio/pcm")
		w.Write(make([]byte, 4800)) // 100 ms at 24 kHz
	}))
	defer srv.Close()
	c, err := New(Config{HostedBaseURL: srv.URL + "/v1", HostedModel: "tts-1-hd", HostedVoices: []string{"nova", "onyx"}})
	if err != nil {
		t.Fatal(err)
	}
	pcm, err := c.Synthesizer("hosted-onyx").Synthesize(context.Background(), "Hello.")
	if err != nil {
		t.Fatal(err)
	}
	if pcm.Rate != 24000 || len(pcm.Samples) != 2400 {
		t.Errorf("hosted audio %d samples at %d Hz, want 2400 at 24000", len(pcm.Samples), pcm.Rate)
	}
	if c.Synthesizer("hosted-onyx") != c.Synthesizer("hosted-onyx") {
		t.Error("a hosted voice's synthesizer is made anew each time")
	}
	mu.Lock()
	if len(voices) != 1 || voices[0] != "onyx/tts-1-hd" {
		t.Errorf("server got %v, want [onyx/tts-1-hd]", voices)
	}
	mu.Unlock()
	var hosted []string
	for _, v := range c.List() {
		if v.Engine == persona.EngineHosted {
			hosted = append(hosted, v.ID+"="+v.EngineVoice)
		}
	}
	if got, want := strings.Join(hosted, ","), "hosted-nova=nova,hosted-onyx=onyx"; got != want {
		t.Errorf("List's hosted voices %s, want %s", got, want)
	}
	if _, err := New(Config{HostedBaseURL: "not a url"}); err == nil {
		t.Error("New with a bad TTS_BASE_URL succeeded")
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("TTS_BASE_URL", "http://127.0.0.1:9/v1")
	t.Setenv("TTS_API_KEY", "k")
	t.Setenv("TTS_MODEL", "m")
	t.Setenv("TTS_VOICES", " nova, ,onyx ")
	c := ConfigFromEnv(os.Getenv)
	if c.HostedBaseURL != "http://127.0.0.1:9/v1" || c.HostedAPIKey != "k" || c.HostedModel != "m" || strings.Join(c.HostedVoices, "|") != "nova|onyx" {
		t.Errorf("ConfigFromEnv = %+v", c)
	}
}
