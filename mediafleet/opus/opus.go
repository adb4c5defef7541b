// Package opus binds libopus: an encoder and a decoder for 16-bit PCM, the codec of every
// audio track the media fleet sends and receives.
package opus

/*
#cgo pkg-config: opus
#include <opus.h>
#include <opus_multistream.h>

static int bl_set_bitrate(OpusEncoder *e, opus_int32 v) { return opus_encoder_ctl(e, OPUS_SET_BITRATE(v)); }
static int bl_set_complexity(OpusEncoder *e, opus_int32 v) { return opus_encoder_ctl(e, OPUS_SET_COMPLEXITY(v)); }
static int bl_set_signal_voice(OpusEncoder *e) { return opus_encoder_ctl(e, OPUS_SET_SIGNAL(OPUS_SIGNAL_VOICE)); }
static int bl_ms_set_bitrate(OpusMSEncoder *e, opus_int32 v) { return opus_multistream_encoder_ctl(e, OPUS_SET_BITRATE(v)); }
static int bl_ms_set_signal_voice(OpusMSEncoder *e) { return opus_multistream_encoder_ctl(e, OPUS_SET_SIGNAL(OPUS_SIGNAL_VOICE)); }
static int bl_ms_get_lookahead(OpusMSEncoder *e, opus_int32 *v) { return opus_multistream_encoder_ctl(e, OPUS_GET_LOOKAHEAD(v)); }
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// MaxPacket is a safe upper bound for one encoded packet.
const MaxPacket = 1500

// Encoder turns fixed-size PCM frames into Opus packets. It is not safe for concurrent use.
type Encoder struct {
	st       *C.OpusEncoder
	channels int
	rate     int
}

// NewEncoder returns a VoIP-tuned encoder. sampleRate is one of 8000, 12000, 16000,
// 24000, 48000.
func NewEncoder(sampleRate, channels int) (*Encoder, error) {
	var cerr C.int
	st := C.opus_encoder_create(C.opus_int32(sampleRate), C.int(channels), C.OPUS_APPLICATION_VOIP, &cerr)
	if cerr != C.OPUS_OK {
		return nil, fmt.Errorf("opus encoder: %s", C.GoString(C.opus_strerror(cerr)))
	}
	C.bl_set_signal_voice(st)
	C.bl_set_complexity(st, 5)
	return &Encoder{st: st, channels: channels, rate: sampleRate}, nil
}

// SetBitrate sets the target bitrate in bits per second.
func (e *Encoder) SetBitrate(bps int) error {
	if r := C.bl_set_bitrate(e.st, C.opus_int32(bps)); r != C.OPUS_OK {
		return fmt.Errorf("opus bitrate: %s", C.GoString(C.opus_strerror(r)))
	}
	return nil
}

// Encode encodes one frame of interleaved PCM (2.5, 5, 10, 20, 40 or 60 ms) into out and
// returns the packet length.
func (e *Encoder) Encode(pcm []int16, out []byte) (int, error) {
	if len(pcm) == 0 || len(out) == 0 {
		return 0, errors.New("opus encode: empty buffer")
	}
	n := C.opus_encode(e.st, (*C.opus_int16)(unsafe.Pointer(&pcm[0])), C.int(len(pcm)/e.channels),
		(*C.uchar)(unsafe.Pointer(&out[0])), C.opus_int32(len(out)))
	if n < 0 {
		return 0, fmt.Errorf("opus encode: %s", C.GoString(C.opus_strerror(n)))
	}
	return int(n), nil
}

// Close frees the encoder.
func (e *Encoder) Close() {
	if e.st != nil {
		C.opus_encoder_destroy(e.st)
		e.st = nil
	}
}

// Decoder turns Opus packets into PCM at the rate it was made for, whatever rate the
// sender encoded at. It is not safe for concurrent use.
type Decoder struct {
	st       *C.OpusDecoder
	channels int
	rate     int
}

// NewDecoder returns a decoder producing sampleRate (8000, 12000, 16000, 24000, 48000).
func NewDecoder(sampleRate, channels int) (*Decoder, error) {
	var cerr C.int
	st := C.opus_decoder_create(C.opus_int32(sampleRate), C.int(channels), &cerr)
	if cerr != C.OPUS_OK {
		return nil, fmt.Errorf("opus decoder: %s", C.GoString(C.opus_strerror(cerr)))
	}
	return &Decoder{st: st, channels: channels, rate: sampleRate}, nil
}

// MaxFrame is the number of samples per channel of the longest Opus frame (120 ms).
func (d *Decoder) MaxFrame() int { return d.rate * 120 / 1000 }

// Decode decodes one packet into pcm (interleaved; size it MaxFrame()*channels) and
// returns the samples per channel. A nil packet asks for loss concealment.
func (d *Decoder) Decode(packet []byte, pcm []int16) (int, error) {
	if len(pcm) == 0 {
		return 0, errors.New("opus decode: empty buffer")
	}
	var data *C.uchar
	if len(packet) > 0 {
		data = (*C.uchar)(unsafe.Pointer(&packet[0]))
	}
	n := C.opus_decode(d.st, data, C.opus_int32(len(packet)),
		(*C.opus_int16)(unsafe.Pointer(&pcm[0])), C.int(len(pcm)/d.channels), 0)
	if n < 0 {
		return 0, fmt.Errorf("opus decode: %s", C.GoString(C.opus_strerror(n)))
	}
	return int(n), nil
}

// Close frees the decoder.
func (d *Decoder) Close() {
	if d.st != nil {
		C.opus_decoder_destroy(d.st)
		d.st = nil
	}
}

// SplitEncoder codes each channel of interleaved PCM as a mono stream of its own (a
// multistream with no coupled pair): nothing of one channel leaks into another, as it
// can when Opus codes a stereo pair jointly. Its packets go with Ogg Opus channel mapping
// family 1 (streams = channels, coupled 0, mapping 0..n-1). Not safe for concurrent use.
type SplitEncoder struct {
	st       *C.OpusMSEncoder
	channels int
}

// NewSplitEncoder returns a voice-tuned encoder of channels mono streams at sampleRate.
func NewSplitEncoder(sampleRate, channels int) (*SplitEncoder, error) {
	mapping := make([]C.uchar, channels)
	for i := range mapping {
		mapping[i] = C.uchar(i)
	}
	var cerr C.int
	st := C.opus_multistream_encoder_create(C.opus_int32(sampleRate), C.int(channels), C.int(channels), 0,
		&mapping[0], C.OPUS_APPLICATION_VOIP, &cerr)
	if cerr != C.OPUS_OK {
		return nil, fmt.Errorf("opus multistream encoder: %s", C.GoString(C.opus_strerror(cerr)))
	}
	C.bl_ms_set_signal_voice(st)
	return &SplitEncoder{st: st, channels: channels}, nil
}

// SetBitrate sets the target bitrate of all the streams together, in bits per second.
func (e *SplitEncoder) SetBitrate(bps int) error {
	if r := C.bl_ms_set_bitrate(e.st, C.opus_int32(bps)); r != C.OPUS_OK {
		return fmt.Errorf("opus bitrate: %s", C.GoString(C.opus_strerror(r)))
	}
	return nil
}

// Lookahead is the encoder's delay in samples at its own rate.
func (e *SplitEncoder) Lookahead() (int, error) {
	var v C.opus_int32
	if r := C.bl_ms_get_lookahead(e.st, &v); r != C.OPUS_OK {
		return 0, fmt.Errorf("opus lookahead: %s", C.GoString(C.opus_strerror(r)))
	}
	return int(v), nil
}

// Encode encodes one frame of interleaved PCM into out and returns the packet length.
func (e *SplitEncoder) Encode(pcm []int16, out []byte) (int, error) {
	if len(pcm) == 0 || len(out) == 0 {
		return 0, errors.New("opus encode: empty buffer")
	}
	n := C.opus_multistream_encode(e.st, (*C.opus_int16)(unsafe.Pointer(&pcm[0])), C.int(len(pcm)/e.channels),
		(*C.uchar)(unsafe.Pointer(&out[0])), C.opus_int32(len(out)))
	if n < 0 {
		return 0, fmt.Errorf("opus encode: %s", C.GoString(C.opus_strerror(n)))
	}
	return int(n), nil
}

// Close frees the encoder.
func (e *SplitEncoder) Close() {
	if e.st != nil {
		C.opus_multistream_encoder_destroy(e.st)
		e.st = nil
	}
}

// SplitDecoder decodes a SplitEncoder's packets into interleaved PCM.
type SplitDecoder struct {
	st       *C.OpusMSDecoder
	channels int
	rate     int
}

// NewSplitDecoder returns a decoder of channels uncoupled mono streams at sampleRate.
func NewSplitDecoder(sampleRate, channels int) (*SplitDecoder, error) {
	mapping := make([]C.uchar, channels)
	for i := range mapping {
		mapping[i] = C.uchar(i)
	}
	var cerr C.int
	st := C.opus_multistream_decoder_create(C.opus_int32(sampleRate), C.int(channels), C.int(channels), 0, &mapping[0], &cerr)
	if cerr != C.OPUS_OK {
		return nil, fmt.Errorf("opus multistream decoder: %s", C.GoString(C.opus_strerror(cerr)))
	}
	return &SplitDecoder{st: st, channels: channels, rate: sampleRate}, nil
}

// MaxFrame is the number of samples per channel of the longest Opus frame (120 ms).
func (d *SplitDecoder) MaxFrame() int { return d.rate * 120 / 1000 }

// Decode decodes one packet into pcm (interleaved; size it MaxFrame()*channels) and
// returns the samples per channel.
func (d *SplitDecoder) Decode(packet []byte, pcm []int16) (int, error) {
	if len(pcm) == 0 || len(packet) == 0 {
		return 0, errors.New("opus decode: empty buffer")
	}
	n := C.opus_multistream_decode(d.st, (*C.uchar)(unsafe.Pointer(&packet[0])), C.opus_int32(len(packet)),
		(*C.opus_int16)(unsafe.Pointer(&pcm[0])), C.int(len(pcm)/d.channels), 0)
	if n < 0 {
		return 0, fmt.Errorf("opus decode: %s", C.GoString(C.opus_strerror(n)))
	}
	return int(n), nil
}

// Close frees the decoder.
func (d *SplitDecoder) Close() {
	if d.st != nil {
		C.opus_multistream_decoder_destroy(d.st)
		d.st = nil
	}
}
