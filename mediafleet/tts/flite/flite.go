// Package flite implements tts.Synthesizer with libflite (CMU Flite, Debian flite1-dev)
// through cgo: the voices are loaded into the worker process once, and each sentence is
// synthesised in-process, with no process started per sentence (the flite command costs
// a fork, an exec and a voice load every time).
//
// The voices are the ones Debian ships compiled in: slt (US female), rms (US male), awb
// (Scottish male) and kal16 (US male, diphone). A Synthesizer may move the voice's mean
// pitch (flite's int_f0_target_mean), set on each utterance so voices stay shared.
package flite

/*
#cgo LDFLAGS: -lflite_cmu_us_slt -lflite_cmu_us_rms -lflite_cmu_us_awb -lflite_cmu_us_kal16 -lflite_usenglish -lflite_cmulex -lflite -lm
#include <stdlib.h>
#include <string.h>
#include <flite/flite.h>

cst_voice *register_cmu_us_slt(const char *voxdir);
cst_voice *register_cmu_us_rms(const char *voxdir);
cst_voice *register_cmu_us_awb(const char *voxdir);
cst_voice *register_cmu_us_kal16(const char *voxdir);

static cst_voice *bl_register(int which) {
	switch (which) {
	case 0: return register_cmu_us_slt(NULL);
	case 1: return register_cmu_us_rms(NULL);
	case 2: return register_cmu_us_awb(NULL);
	case 3: return register_cmu_us_kal16(NULL);
	}
	return NULL;
}

// bl_synth speaks text into out (malloc'd, *n samples at *rate). The pitch is set on the
// utterance, whose features fall back to the voice's, so the shared voice is untouched.
static int bl_synth(cst_voice *v, const char *text, float pitch, short **out, int *n, int *rate) {
	cst_utterance *u = new_utterance();
	utt_set_input_text(u, text);
	utt_init(u, v);
	if (pitch > 0) {
		feat_set_float(u->features, "int_f0_target_mean", pitch);
	}
	if (utt_synth(u) == NULL) {
		delete_utterance(u);
		return -1;
	}
	cst_wave *w = utt_wave(u);
	if (w == NULL || w->num_channels != 1) {
		delete_utterance(u);
		return -1;
	}
	*n = w->num_samples;
	*rate = w->sample_rate;
	*out = malloc(sizeof(short) * (w->num_samples > 0 ? w->num_samples : 1));
	if (*out == NULL) {
		delete_utterance(u);
		return -1;
	}
	memcpy(*out, w->samples, sizeof(short) * w->num_samples);
	delete_utterance(u);
	return 0;
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/bridgeline/bridgeline/mediafleet/tts"
)

// Voices are the flite voices compiled into the worker.
var Voices = []string{"slt", "rms", "awb", "kal16"}

type voice struct {
	v *C.cst_voice
	// mu serialises synthesis with one voice: flite keeps no promise that two utterances
	// of one voice may be synthesised at once (a voice carries mutable features and
	// caches), while different voices share only read-only tables.
	mu sync.Mutex
}

var (
	initOnce sync.Once
	loadMu   sync.Mutex
	loaded   = map[string]*voice{}
)

// load registers a voice once per process.
func load(name string) (*voice, error) {
	idx := -1
	for i, v := range Voices {
		if v == name {
			idx = i
		}
	}
	if idx < 0 {
		return nil, fmt.Errorf("flite: no voice %q (have %s)", name, strings.Join(Voices, ", "))
	}
	initOnce.Do(func() { C.flite_init() })
	loadMu.Lock()
	defer loadMu.Unlock()
	if v, ok := loaded[name]; ok {
		return v, nil
	}
	cv := C.bl_register(C.int(idx))
	if cv == nil {
		return nil, fmt.Errorf("flite: cannot load voice %q", name)
	}
	v := &voice{v: cv}
	loaded[name] = v
	return v, nil
}

// Preload loads the voices (all of Voices when none are named), as the worker does when
// it starts, so no call waits for a voice to load.
func Preload(names ...string) error {
	if len(names) == 0 {
		names = Voices
	}
	for _, n := range names {
		if _, err := load(n); err != nil {
			return err
		}
	}
	return nil
}

// Synthesizer speaks with one flite voice.
type Synthesizer struct {
	v       *voice
	name    string
	pitchHz float64
}

var _ tts.Synthesizer = (*Synthesizer)(nil)

// New is a synthesizer for a flite voice (one of Voices), its mean pitch moved to pitchHz
// when that is above zero.
func New(name string, pitchHz float64) (*Synthesizer, error) {
	v, err := load(name)
	if err != nil {
		return nil, err
	}
	return &Synthesizer{v: v, name: name, pitchHz: pitchHz}, nil
}

// Synthesize speaks text. flite cannot be interrupted, so ctx is checked before and
// after: a sentence takes tens of milliseconds.
func (s *Synthesizer) Synthesize(ctx context.Context, text string) (tts.PCM, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return tts.PCM{}, errors.New("flite: empty text")
	}
	if strings.ContainsRune(text, 0) {
		return tts.PCM{}, errors.New("flite: text holds a NUL byte")
	}
	if err := ctx.Err(); err != nil {
		return tts.PCM{}, err
	}
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	var out *C.short
	var n, rate C.int
	s.v.mu.Lock()
	rc := C.bl_synth(s.v.v, ctext, C.float(s.pitchHz), &out, &n, &rate)
	s.v.mu.Unlock()
	if rc != 0 {
		return tts.PCM{}, fmt.Errorf("flite %s: synthesis failed", s.name)
	}
	defer C.free(unsafe.Pointer(out))
	pcm := make([]int16, int(n))
	if n > 0 {
		copy(pcm, unsafe.Slice((*int16)(unsafe.Pointer(out)), int(n)))
	}
	if err := ctx.Err(); err != nil {
		return tts.PCM{}, err
	}
	return tts.PCM{Rate: int(rate), Samples: pcm}, nil
}
