// Package denoise binds speexdsp's preprocessor as the caller's noise suppression: a
// spectral noise estimate, updated while the caller is quiet and subtracted from every
// frame, before the voice activity detector and the recogniser hear the audio. Automatic
// gain, dereverberation and speexdsp's own VAD stay off: the worker's VAD decides what
// speech is, and a gain that rises in pauses would lift the noise back up.
//
// On a quiet line the suppressor's output is not used: the audio passes as it came. Over
// clean speech the preprocessor still shaves the quiet parts of words (pocketsphinx's
// word errors on clean flite questions rose from 8.7% to 13.3% through it), so it is
// engaged only while the line's noise floor (the quietest 20 ms of the last 3 s) is
// above EngageRMS, and released below half of it, crossfading over a frame each way.
package denoise

/*
#cgo pkg-config: speexdsp
#include <stdlib.h>
#include <speex/speex_preprocess.h>

static int bl_set_int(SpeexPreprocessState *st, int req, int v) { return speex_preprocess_ctl(st, req, &v); }
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// DefaultSuppress is how far, in dB, noise is pushed down: speexdsp's own default
// (-15 dB) leaves a television audible under the caller; much deeper and the model's
// over-subtraction starts to chip the quiet ends of words.
const DefaultSuppress = -25

// EngageRMS is the noise floor (RMS of 16-bit samples, about -61 dBFS) above which the
// suppressor's output replaces the audio: above a digital line's idle noise and a quiet
// room's, below a fan's, traffic's or a room of voices at 20 dB under the caller.
const EngageRMS = 30

// floorFrames is how many frames the noise floor is the quietest of: 3 s, longer than a
// sentence's words run without a 20 ms gap (flite's run past a second).
const floorFrames = 3000 / FrameDuration

// FrameDuration is the length of the frames the preprocessor works on, in milliseconds:
// the shortest it is made for, since the stream runs one frame late.
const FrameDuration = 20

// Suppressor removes stationary noise from a stream of mono 16-bit audio at one rate.
// Audio may come in pieces of any length; it is handed back in the same pieces, one
// frame (FrameDuration) late: the stream starts with a frame of silence, so whatever
// the pieces' lengths, a processed frame is always there to hand back and the stream
// never gains a gap. It is not safe for concurrent use.
type Suppressor struct {
	st      *C.SpeexPreprocessState
	frame   int
	pending []int16 // the start of the next frame, not yet processed
	ready   []int16 // processed audio not yet handed back (at first, a frame of silence)
	buf     *C.spx_int16_t

	levels  []float64 // the last floorFrames frames' RMS, a ring
	next    int
	engaged bool
}

// New makes a suppressor for audio at rate samples a second, pushing noise down by
// suppress dB (negative; 0 means DefaultSuppress).
func New(rate, suppress int) (*Suppressor, error) {
	if rate < 8000 || rate > 48000 {
		return nil, fmt.Errorf("denoise: rate %d outside 8000-48000", rate)
	}
	if suppress == 0 {
		suppress = DefaultSuppress
	}
	if suppress > 0 {
		return nil, fmt.Errorf("denoise: suppress %d dB must be negative", suppress)
	}
	frame := rate * FrameDuration / 1000
	st := C.speex_preprocess_state_init(C.int(frame), C.int(rate))
	if st == nil {
		return nil, errors.New("denoise: speex_preprocess_state_init failed")
	}
	for _, c := range []struct{ req, v C.int }{
		{C.SPEEX_PREPROCESS_SET_DENOISE, 1},
		{C.SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, C.int(suppress)},
		{C.SPEEX_PREPROCESS_SET_AGC, 0},
		{C.SPEEX_PREPROCESS_SET_DEREVERB, 0},
	} {
		if C.bl_set_int(st, c.req, c.v) != 0 {
			C.speex_preprocess_state_destroy(st)
			return nil, fmt.Errorf("denoise: speex_preprocess_ctl(%d) failed", int(c.req))
		}
	}
	buf := (*C.spx_int16_t)(C.malloc(C.size_t(frame) * C.size_t(unsafe.Sizeof(C.spx_int16_t(0)))))
	return &Suppressor{st: st, frame: frame, buf: buf, ready: make([]int16, frame), levels: make([]float64, 0, floorFrames)}, nil
}

// Delay is how late the suppressed stream runs behind the input.
func (s *Suppressor) Delay() int { return s.frame }

// Process hands back as many samples as pcm holds, from the suppressed stream, which
// runs Delay samples behind the input. pcm is not modified.
func (s *Suppressor) Process(pcm []int16) []int16 {
	s.pending = append(s.pending, pcm...)
	for len(s.pending) >= s.frame {
		s.ready = append(s.ready, s.run(s.pending[:s.frame])...)
		s.pending = s.pending[s.frame:]
	}
	// ready holds frame + processed - handed back = frame - len(pending) + len(pcm)
	// samples, more than len(pcm).
	out := append([]int16(nil), s.ready[:len(pcm)]...)
	s.ready = append(s.ready[:0], s.ready[len(pcm):]...)
	s.pending = append(s.pending[:0:0], s.pending...)
	return out
}

// run passes a frame through the preprocessor (which learns the noise from every frame)
// and returns the processed frame while engaged, else the frame as it came; on a change,
// the frame fades from one to the other.
func (s *Suppressor) run(frame []int16) []int16 {
	b := unsafe.Slice((*int16)(unsafe.Pointer(s.buf)), s.frame)
	copy(b, frame)
	C.speex_preprocess_run(s.st, s.buf)
	was := s.engaged
	floor := s.floor(rms(frame))
	switch {
	case !s.engaged && floor > EngageRMS:
		s.engaged = true
	case s.engaged && floor < EngageRMS/2:
		s.engaged = false
	}
	out := make([]int16, s.frame)
	for i := range out {
		w := 0.0 // the processed frame's weight
		switch {
		case was && s.engaged:
			w = 1
		case was != s.engaged:
			w = float64(i) / float64(s.frame)
			if was {
				w = 1 - w
			}
		}
		out[i] = int16(w*float64(b[i]) + (1-w)*float64(frame[i]))
	}
	return out
}

// floor records a frame's level and returns the quietest of the last floorFrames.
func (s *Suppressor) floor(level float64) float64 {
	if len(s.levels) < floorFrames {
		s.levels = append(s.levels, level)
	} else {
		s.levels[s.next] = level
		s.next = (s.next + 1) % floorFrames
	}
	lo := level
	for _, l := range s.levels {
		lo = min(lo, l)
	}
	return lo
}

// Engaged reports whether the suppressor's output is in use: the line is noisy.
func (s *Suppressor) Engaged() bool { return s.engaged }

func rms(pcm []int16) float64 {
	var sum float64
	for _, v := range pcm {
		sum += float64(v) * float64(v)
	}
	return math.Sqrt(sum / float64(len(pcm)))
}

// Close frees the preprocessor.
func (s *Suppressor) Close() {
	if s.st != nil {
		C.speex_preprocess_state_destroy(s.st)
		C.free(unsafe.Pointer(s.buf))
		s.st, s.buf = nil, nil
	}
}
