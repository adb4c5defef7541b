// Package openai implements tts.Synthesizer with an OpenAI-compatible speech API:
// POST {TTS_BASE_URL}/audio/speech, which OpenAI and many hosted and self-hosted
// text-to-speech servers speak. It asks for response_format "pcm" (raw 24 kHz 16-bit
// little-endian mono, as OpenAI defines it) and also takes a WAV answer, which some
// servers send whatever was asked.
package openai

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/tts"
)

// PCMRate is the sample rate of OpenAI's "pcm" response format.
const PCMRate = 24000

// Config configures the API.
type Config struct {
	// BaseURL includes the API version: https://api.openai.com/v1.
	BaseURL string
	APIKey  string
	// Model defaults to tts-1.
	Model string
	// Client defaults to one with a 30 s timeout.
	Client *http.Client
}

// Client is a configured speech API; Voice makes a Synthesizer per voice.
type Client struct {
	endpoint string
	cfg      Config
}

// New checks the configuration.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("tts: TTS_BASE_URL %q is not an http(s) URL", cfg.BaseURL)
	}
	if cfg.Model == "" {
		cfg.Model = "tts-1"
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 30 * time.Second}
	}
	return &Client{endpoint: strings.TrimRight(cfg.BaseURL, "/") + "/audio/speech", cfg: cfg}, nil
}

// Voice is a Synthesizer speaking with the API's voice name (alloy, nova...).
func (c *Client) Voice(name string) *Synthesizer { return &Synthesizer{c: c, voice: name} }

// Synthesizer speaks with one voice of the API.
type Synthesizer struct {
	c     *Client
	voice string
}

var _ tts.Synthesizer = (*Synthesizer)(nil)

// Synthesize asks the API for speech.
func (s *Synthesizer) Synthesize(ctx context.Context, text string) (tts.PCM, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return tts.PCM{}, errors.New("tts: empty text")
	}
	body, err := json.Marshal(map[string]string{
		"model":           s.c.cfg.Model,
		"voice":           s.voice,
		"input":           text,
		"response_format": "pcm",
	})
	if err != nil {
		return tts.PCM{}, fmt.Errorf("tts: hosted: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.c.endpoint, bytes.NewReader(body))
	if err != nil {
		return tts.PCM{}, fmt.Errorf("tts: hosted: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if s.c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+s.c.cfg.APIKey)
	}
	resp, err := s.c.cfg.Client.Do(req)
	if err != nil {
		return tts.PCM{}, fmt.Errorf("tts: hosted: %w", err)
	}
	defer resp.Body.Close()
	// A minute of 24 kHz audio is 2.9 MB; a sentence is far less.
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return tts.PCM{}, fmt.Errorf("tts: hosted: read: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return tts.PCM{}, fmt.Errorf("tts: hosted: %s: %s", resp.Status, strings.TrimSpace(string(b[:min(len(b), 300)])))
	}
	if len(b) >= 12 && string(b[0:4]) == "RIFF" && string(b[8:12]) == "WAVE" {
		pcm, err := tts.DecodeWAV(b)
		if err != nil {
			return tts.PCM{}, fmt.Errorf("tts: hosted: %w", err)
		}
		return pcm, nil
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "text/") {
		return tts.PCM{}, fmt.Errorf("tts: hosted: answered %s, not audio", ct)
	}
	if len(b)%2 != 0 {
		return tts.PCM{}, fmt.Errorf("tts: hosted: %d bytes of pcm is not whole samples", len(b))
	}
	pcm := make([]int16, len(b)/2)
	for i := range pcm {
		pcm[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return tts.PCM{Rate: PCMRate, Samples: pcm}, nil
}
