// Package voices maps a persona's voice id (shared/persona's catalogue: flite-slt,
// espeak-en-us-f3, hosted-nova...) to the tts.Synthesizer that speaks it. The worker
// makes one Catalog when it starts: the flite voices are loaded then, into the process,
// so no call waits for them.
//
// Environment (ConfigFromEnv):
//
//	TTS_BASE_URL  an OpenAI-compatible speech API including /v1; when set, hosted-<name>
//	              voices speak through it with the API's voice <name>
//	TTS_API_KEY   its bearer token (optional)
//	TTS_MODEL     its model; default tts-1
//	TTS_VOICES    the hosted voice names the deployment lists (comma separated);
//	              default alloy
package voices

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/mediafleet/tts/espeak"
	"github.com/bridgeline/bridgeline/mediafleet/tts/flite"
	"github.com/bridgeline/bridgeline/mediafleet/tts/openai"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Default is the voice spoken when an id is unknown.
const Default = "flite-slt"

// HostedPrefix starts the id of a hosted voice: hosted-<the API's voice name>.
const HostedPrefix = "hosted-"

// Config configures the catalogue.
type Config struct {
	// Hosted speech API; empty BaseURL: no hosted voices.
	HostedBaseURL string
	HostedAPIKey  string
	HostedModel   string
	// HostedVoices are the API's voice names List offers (default alloy).
	HostedVoices []string
	// ESpeakWPM is espeak-ng's speaking rate (0: its default).
	ESpeakWPM int
	// Logger reports unknown voices; slog.Default when nil.
	Logger *slog.Logger
}

// ConfigFromEnv reads TTS_BASE_URL, TTS_API_KEY, TTS_MODEL and TTS_VOICES through
// getenv (os.Getenv in main).
func ConfigFromEnv(getenv func(string) string) Config {
	c := Config{
		HostedBaseURL: getenv("TTS_BASE_URL"),
		HostedAPIKey:  getenv("TTS_API_KEY"),
		HostedModel:   getenv("TTS_MODEL"),
	}
	for _, v := range strings.Split(getenv("TTS_VOICES"), ",") {
		if v = strings.TrimSpace(v); v != "" {
			c.HostedVoices = append(c.HostedVoices, v)
		}
	}
	return c
}

// Catalog holds a Synthesizer for every voice the deployment offers.
type Catalog struct {
	local  map[string]tts.Synthesizer
	hosted *openai.Client
	names  []string // hosted voice names listed
	log    *slog.Logger

	mu         sync.Mutex
	hostedByID map[string]tts.Synthesizer
	warned     map[string]bool
}

// New loads the flite voices and prepares every voice of persona.LocalVoices, and the
// hosted ones when a speech API is configured.
func New(cfg Config) (*Catalog, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c := &Catalog{local: map[string]tts.Synthesizer{}, hostedByID: map[string]tts.Synthesizer{}, warned: map[string]bool{}, log: cfg.Logger}
	if err := flite.Preload(); err != nil {
		return nil, fmt.Errorf("voices: %w", err)
	}
	for _, v := range persona.LocalVoices {
		switch v.Engine {
		case persona.EngineFlite:
			s, err := flite.New(v.EngineVoice, v.PitchHz)
			if err != nil {
				return nil, fmt.Errorf("voices: %s: %w", v.ID, err)
			}
			c.local[v.ID] = s
		case persona.EngineEspeak:
			c.local[v.ID] = &espeak.Synthesizer{Voice: v.EngineVoice, WPM: cfg.ESpeakWPM}
		default:
			return nil, fmt.Errorf("voices: %s: engine %q is not local", v.ID, v.Engine)
		}
	}
	if _, ok := c.local[Default]; !ok {
		return nil, fmt.Errorf("voices: the default voice %s is not in the catalogue", Default)
	}
	if cfg.HostedBaseURL != "" {
		h, err := openai.New(openai.Config{BaseURL: cfg.HostedBaseURL, APIKey: cfg.HostedAPIKey, Model: cfg.HostedModel})
		if err != nil {
			return nil, fmt.Errorf("voices: %w", err)
		}
		c.hosted = h
		c.names = cfg.HostedVoices
		if len(c.names) == 0 {
			c.names = []string{"alloy"}
		}
	}
	return c, nil
}

// Synthesizer is the voice's synthesizer; an unknown id (or a hosted one with no speech
// API configured) speaks with Default, and is logged once.
func (c *Catalog) Synthesizer(id string) tts.Synthesizer {
	if s, ok := c.local[id]; ok {
		return s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if name, ok := strings.CutPrefix(id, HostedPrefix); ok && name != "" && c.hosted != nil {
		s, ok := c.hostedByID[id]
		if !ok {
			s = c.hosted.Voice(name)
			c.hostedByID[id] = s
		}
		return s
	}
	if !c.warned[id] {
		c.warned[id] = true
		c.log.Warn("voices: unknown voice, speaking with the default", "voice", id, "default", Default)
	}
	return c.local[Default]
}

// Voices is Synthesizer as the pipeline's tts.Voices.
func (c *Catalog) Voices() tts.Voices { return c.Synthesizer }

// List is the voices the deployment offers: the local catalogue, then the hosted voices.
func (c *Catalog) List() []persona.Voice {
	out := append([]persona.Voice(nil), persona.LocalVoices...)
	if c.hosted == nil {
		return out
	}
	for _, n := range c.names {
		out = append(out, persona.Voice{
			ID: HostedPrefix + n, Engine: persona.EngineHosted, EngineVoice: n, Name: n,
			Language: "en-US", Description: "Hosted voice " + n + " of the configured speech API.",
		})
	}
	return out
}
