// Package resample converts mono 16-bit PCM between sample rates with libsoxr, for
// speech engines whose native rate (espeak-ng: 22050 Hz) is not one Opus takes.
package resample

/*
#cgo pkg-config: soxr
#include <soxr.h>

static const char *bl_resample(double in_rate, double out_rate, const short *in, size_t ilen,
		short *out, size_t olen, size_t *odone) {
	soxr_io_spec_t io = soxr_io_spec(SOXR_INT16_I, SOXR_INT16_I);
	// No dither: soxr's default adds random noise to 16-bit output, seeded differently in
	// every process, so the same clip came out different from run to run (and a
	// recogniser heard flite's "what time" as "what kind" in one run, "what dying" in
	// the next).
	io.flags |= SOXR_NO_DITHER;
	soxr_quality_spec_t q = soxr_quality_spec(SOXR_MQ, 0);
	size_t idone = 0;
	soxr_error_t err = soxr_oneshot(in_rate, out_rate, 1, in, ilen, &idone, out, olen, odone, &io, &q, NULL);
	return err;
}
*/
import "C"

import (
	"errors"
	"unsafe"
)

// Mono resamples a whole mono clip from inRate to outRate.
func Mono(in []int16, inRate, outRate int) ([]int16, error) {
	if inRate <= 0 || outRate <= 0 {
		return nil, errors.New("resample: rates must be positive")
	}
	if inRate == outRate || len(in) == 0 {
		return append([]int16(nil), in...), nil
	}
	out := make([]int16, int(int64(len(in))*int64(outRate)/int64(inRate))+16)
	var done C.size_t
	if msg := C.bl_resample(C.double(inRate), C.double(outRate),
		(*C.short)(unsafe.Pointer(&in[0])), C.size_t(len(in)),
		(*C.short)(unsafe.Pointer(&out[0])), C.size_t(len(out)), &done); msg != nil {
		return nil, errors.New("resample: " + C.GoString(msg))
	}
	return out[:int(done)], nil
}
