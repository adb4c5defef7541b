// Package stt transcribes the caller's turns: the speech.Recognizer the persona
// worker plugs into the conversation.
//
//   - Sphinx, the local default: pocketsphinx through libpocketsphinx (cgo), decoding
//     while the caller speaks, with a pool of decoders loaded when the worker starts.
//   - Hosted: any OpenAI-compatible POST {STT_BASE_URL}/audio/transcriptions (whisper
//     servers, OpenAI, Groq...), the turn buffered and posted when it ends.
//
// Environment (FromEnv):
//
//	STT_BASE_URL            hosted recogniser's base URL including /v1; unset: local
//	STT_API_KEY             its bearer token (optional)
//	STT_MODEL               its model; default whisper-1
//	POCKETSPHINX_MODEL_DIR  local model folder; default /usr/share/pocketsphinx/model/en-us
//	PERSONA_STT_DECODERS    local decoders made at start; default 2
package stt

import (
	"fmt"
	"io"
	"os"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
)

// Rate is the sample rate of the audio a Transcriber takes.
const Rate = 16000

// Recognizer is a speech.Recognizer that holds resources until closed.
type Recognizer interface {
	speech.Recognizer
	io.Closer
}

// FromEnv makes the deployment's recogniser, once, when the worker starts: the hosted one
// when STT_BASE_URL is set, else pocketsphinx with its decoders loaded.
func FromEnv() (Recognizer, error) {
	if base := os.Getenv("STT_BASE_URL"); base != "" {
		return NewHosted(HostedConfig{BaseURL: base, APIKey: os.Getenv("STT_API_KEY"), Model: os.Getenv("STT_MODEL")})
	}
	cfg, err := SphinxConfigFromEnv()
	if err != nil {
		return nil, err
	}
	s, err := NewSphinx(cfg)
	if err != nil {
		return nil, fmt.Errorf("stt: local recogniser: %w", err)
	}
	return s, nil
}
