// Package engines loads the persona worker's speech engines once, when the worker starts,
// so no call waits for a model: the Silero VAD model on ONNX Runtime, the recogniser
// (pocketsphinx decoders, or the hosted API) and the voices (flite loaded in-process).
// Each package documents the variables it reads through the getenv main passes: vad
// (ONNXRUNTIME_LIB, PERSONA_VAD_MODEL, PERSONA_VAD_GATE_DBFS), stt (STT_BASE_URL,
// STT_API_KEY, STT_MODEL, POCKETSPHINX_MODEL_DIR, PERSONA_STT_DECODERS) and tts/voices
// (TTS_BASE_URL, TTS_API_KEY, TTS_MODEL, TTS_VOICES).
package engines

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/mediafleet/stt"
	"github.com/bridgeline/bridgeline/mediafleet/tts/voices"
	"github.com/bridgeline/bridgeline/mediafleet/vad"
)

// Engines are the loaded engines, shared by every call of the worker.
type Engines struct {
	VAD        *vad.Model
	Recognizer stt.Recognizer
	Voices     *voices.Catalog
}

// FromEnv loads every engine as the environment configures it, reading the variables
// through getenv (os.Getenv in main).
func FromEnv(getenv func(string) string, log *slog.Logger) (*Engines, error) {
	if log == nil {
		log = slog.Default()
	}
	start := time.Now()
	e := &Engines{}
	var err error
	vcfg := vad.ConfigFromEnv(getenv)
	if e.VAD, err = vad.Load(vcfg); err != nil {
		return nil, err
	}
	if e.Recognizer, err = stt.FromEnv(getenv); err != nil {
		e.Close()
		return nil, err
	}
	tcfg := voices.ConfigFromEnv(getenv)
	tcfg.Logger = log
	if e.Voices, err = voices.New(tcfg); err != nil {
		e.Close()
		return nil, err
	}
	log.Info("speech engines loaded", "took_ms", time.Since(start).Milliseconds(), "recognizer", fmt.Sprintf("%T", e.Recognizer))
	return e, nil
}

// NewVAD is a detector for one call.
func (e *Engines) NewVAD() (speech.VAD, error) { return e.VAD.NewDetector() }

// Close frees the engines (after every call has ended).
func (e *Engines) Close() error {
	var errs []error
	if e.Recognizer != nil {
		errs = append(errs, e.Recognizer.Close())
	}
	if e.VAD != nil {
		errs = append(errs, e.VAD.Close())
	}
	return errors.Join(errs...)
}
