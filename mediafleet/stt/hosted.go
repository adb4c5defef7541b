package stt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
)

// HostedConfig configures an OpenAI-compatible transcription API.
type HostedConfig struct {
	// BaseURL includes the API version, as OpenAI's clients take it:
	// https://api.openai.com/v1, http://127.0.0.1:8000/v1.
	BaseURL string
	APIKey  string
	// Model defaults to whisper-1.
	Model string
	// Client defaults to one with a 30 s timeout.
	Client *http.Client
}

// Hosted posts each turn to POST {BaseURL}/audio/transcriptions as a 16 kHz mono WAV.
// Such APIs take a whole file, so the turn is buffered and sent at End.
type Hosted struct {
	endpoint string
	cfg      HostedConfig
}

var _ speech.Recognizer = (*Hosted)(nil)

// NewHosted checks the configuration.
func NewHosted(cfg HostedConfig) (*Hosted, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("stt: STT_BASE_URL %q is not an http(s) URL", cfg.BaseURL)
	}
	if cfg.Model == "" {
		cfg.Model = "whisper-1"
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 30 * time.Second}
	}
	return &Hosted{endpoint: strings.TrimRight(cfg.BaseURL, "/") + "/audio/transcriptions", cfg: cfg}, nil
}

// Close has nothing to free.
func (h *Hosted) Close() error { return nil }

// NewTranscriber makes a call's transcriber.
func (h *Hosted) NewTranscriber(ctx context.Context) (speech.Transcriber, error) {
	return &hostedTranscriber{h: h}, nil
}

type hostedTranscriber struct {
	h      *Hosted
	inTurn bool
	pcm    []int16
}

func (t *hostedTranscriber) Begin() error {
	t.inTurn = true
	t.pcm = t.pcm[:0]
	return nil
}

func (t *hostedTranscriber) Write(pcm []int16) error {
	if !t.inTurn {
		return errors.New("stt: Write outside a turn")
	}
	t.pcm = append(t.pcm, pcm...)
	return nil
}

func (t *hostedTranscriber) Abort() {
	t.inTurn = false
	t.pcm = t.pcm[:0]
}

func (t *hostedTranscriber) Close() error {
	t.Abort()
	t.pcm = nil
	return nil
}

func (t *hostedTranscriber) End(ctx context.Context) (string, error) {
	if !t.inTurn {
		return "", errors.New("stt: End outside a turn")
	}
	t.inTurn = false
	text, err := t.h.transcribe(ctx, t.pcm)
	t.pcm = t.pcm[:0]
	return text, err
}

func (h *Hosted) transcribe(ctx context.Context, pcm []int16) (string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "turn.wav")
	if err != nil {
		return "", fmt.Errorf("stt: hosted: %w", err)
	}
	if _, err := fw.Write(WAV(pcm, Rate)); err != nil {
		return "", fmt.Errorf("stt: hosted: %w", err)
	}
	for k, v := range map[string]string{"model": h.cfg.Model, "response_format": "json"} {
		if err := mw.WriteField(k, v); err != nil {
			return "", fmt.Errorf("stt: hosted: %w", err)
		}
	}
	if err := mw.Close(); err != nil {
		return "", fmt.Errorf("stt: hosted: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.endpoint, &body)
	if err != nil {
		return "", fmt.Errorf("stt: hosted: %w", err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if h.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+h.cfg.APIKey)
	}
	resp, err := h.cfg.Client.Do(req)
	if err != nil {
		return "", fmt.Errorf("stt: hosted: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("stt: hosted: read response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("stt: hosted: %s: %s", resp.Status, strings.TrimSpace(string(b[:min(len(b), 300)])))
	}
	var out struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return "", fmt.Errorf("stt: hosted: response: %w", err)
	}
	return strings.Join(strings.Fields(out.Text), " "), nil
}

// WAV encodes mono 16-bit samples as a WAV file.
func WAV(pcm []int16, rate int) []byte { return tts.EncodeWAV(tts.PCM{Rate: rate, Samples: pcm}) }
