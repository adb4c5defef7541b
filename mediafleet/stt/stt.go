// Package stt transcribes the caller's turns: the speech.Recognizer the persona
// worker plugs into the conversation.
//
//   - Sphinx, the local default: pocketsphinx through libpocketsphinx (cgo), decoding
//     while the caller speaks, with a pool of decoders loaded when the worker starts.
//   - Hosted: any OpenAI-compatible POST {STT_BASE_URL}/audio/transcriptions (whisper
//     servers, OpenAI, Groq...), the turn buffered and posted when it ends.
//   - Deepgram's live API (package stt/deepgram): the turn streamed over a WebSocket as
//     the caller speaks, interim words for captions, the final text at the end of the
//     turn; pocketsphinx transcribes the turns it cannot.
//
// Environment (FromEnv):
//
//	STT_PROVIDER               pocketsphinx, openai or deepgram; default openai when
//	                           STT_BASE_URL is set, else pocketsphinx
//	STT_BASE_URL               openai: the recogniser's base URL including /v1
//	STT_API_KEY                openai: its bearer token (optional)
//	STT_MODEL                  openai: its model; default whisper-1
//	DEEPGRAM_API_KEY           deepgram: the key (Authorization: Token ...)
//	DEEPGRAM_BASE_URL          deepgram: another server speaking the API (self-hosted,
//	                           compatible); default wss://api.deepgram.com
//	DEEPGRAM_MODEL             deepgram: default nova-3
//	DEEPGRAM_LANGUAGE          deepgram: default en
//	DEEPGRAM_QUERY             deepgram: more query parameters, e.g. smart_format=true
//	DEEPGRAM_FINALIZE_TIMEOUT  deepgram: wait for a turn's final result; default 500ms
//	STT_FALLBACK               deepgram: pocketsphinx (default) or none (an apology)
//	POCKETSPHINX_MODEL_DIR     local model folder; default /usr/share/pocketsphinx/model/en-us
//	PERSONA_STT_DECODERS       local decoders made at start; default 2
package stt

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/mediafleet/stt/deepgram"
)

// Rate is the sample rate of the audio a Transcriber takes.
const Rate = 16000

// Recognizer is a speech.Recognizer that holds resources until closed.
type Recognizer interface {
	speech.Recognizer
	io.Closer
}

// Providers STT_PROVIDER names.
const (
	ProviderPocketsphinx = "pocketsphinx"
	ProviderOpenAI       = "openai"
	ProviderDeepgram     = "deepgram"
)

// FromEnv makes the deployment's recogniser, once, when the worker starts (see the
// package comment for the environment), reading the variables through getenv
// (os.Getenv in main).
func FromEnv(getenv func(string) string) (Recognizer, error) {
	provider := getenv("STT_PROVIDER")
	if provider == "" {
		provider = ProviderPocketsphinx
		if getenv("STT_BASE_URL") != "" {
			provider = ProviderOpenAI
		}
	}
	switch provider {
	case ProviderPocketsphinx:
		return sphinxFromEnv(getenv)
	case ProviderOpenAI:
		base := getenv("STT_BASE_URL")
		if base == "" {
			return nil, errors.New("stt: STT_PROVIDER=openai needs STT_BASE_URL")
		}
		return NewHosted(HostedConfig{BaseURL: base, APIKey: getenv("STT_API_KEY"), Model: getenv("STT_MODEL")})
	case ProviderDeepgram:
		return deepgramFromEnv(getenv)
	}
	return nil, fmt.Errorf("stt: STT_PROVIDER=%q: want pocketsphinx, openai or deepgram", provider)
}

func sphinxFromEnv(getenv func(string) string) (*Sphinx, error) {
	cfg, err := SphinxConfigFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	s, err := NewSphinx(cfg)
	if err != nil {
		return nil, fmt.Errorf("stt: local recogniser: %w", err)
	}
	return s, nil
}

// DeepgramConfigFromEnv reads the DEEPGRAM_* variables through getenv.
func DeepgramConfigFromEnv(getenv func(string) string) (deepgram.Config, error) {
	cfg := deepgram.Config{APIKey: getenv("DEEPGRAM_API_KEY"), BaseURL: getenv("DEEPGRAM_BASE_URL"),
		Model: getenv("DEEPGRAM_MODEL"), Language: getenv("DEEPGRAM_LANGUAGE")}
	if q := getenv("DEEPGRAM_QUERY"); q != "" {
		v, err := url.ParseQuery(q)
		if err != nil {
			return cfg, fmt.Errorf("stt: DEEPGRAM_QUERY=%q: %w", q, err)
		}
		cfg.Query = v
	}
	if s := getenv("DEEPGRAM_FINALIZE_TIMEOUT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 || d > 5*time.Second {
			return cfg, fmt.Errorf("stt: DEEPGRAM_FINALIZE_TIMEOUT=%q: want a duration up to 5s, like 500ms", s)
		}
		cfg.FinalizeTimeout = d
	}
	return cfg, nil
}

// withFallback is the Deepgram recogniser with the fallback it closes too.
type withFallback struct {
	*deepgram.Recognizer
	fallback io.Closer
}

func (w withFallback) Close() error {
	return errors.Join(w.Recognizer.Close(), w.fallback.Close())
}

func deepgramFromEnv(getenv func(string) string) (Recognizer, error) {
	cfg, err := DeepgramConfigFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	var fallback *Sphinx
	switch fb := getenv("STT_FALLBACK"); fb {
	case "", ProviderPocketsphinx:
		if fallback, err = sphinxFromEnv(getenv); err != nil {
			return nil, fmt.Errorf("%w (STT_FALLBACK=none runs without a fallback)", err)
		}
		cfg.Fallback = fallback
	case "none":
	default:
		return nil, fmt.Errorf("stt: STT_FALLBACK=%q: want pocketsphinx or none", fb)
	}
	r, err := deepgram.New(cfg)
	if err != nil {
		if fallback != nil {
			fallback.Close()
		}
		return nil, fmt.Errorf("stt: %w", err)
	}
	if fallback == nil {
		return r, nil
	}
	return withFallback{r, fallback}, nil
}
