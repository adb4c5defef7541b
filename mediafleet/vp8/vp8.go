// Package vp8 binds libvpx's VP8 encoder and decoder for I420 frames (image.YCbCr with
// 4:2:0 subsampling): the worker encodes its connecting screen and avatar with it, the
// caller bot decodes what it receives.
package vp8

/*
#cgo pkg-config: vpx
#include <stdlib.h>
#include <string.h>
#include <vpx/vpx_encoder.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vp8cx.h>
#include <vpx/vp8dx.h>

typedef struct {
	vpx_codec_ctx_t ctx;
	vpx_image_t *img;
	vpx_codec_iter_t iter;
} bl_enc;

static int bl_enc_open(bl_enc *e, int w, int h, int fps, int kbps, int threads) {
	vpx_codec_enc_cfg_t cfg;
	if (vpx_codec_enc_config_default(vpx_codec_vp8_cx(), &cfg, 0)) return -1;
	cfg.g_w = w;
	cfg.g_h = h;
	cfg.g_timebase.num = 1;
	cfg.g_timebase.den = 1000;
	cfg.rc_target_bitrate = kbps;
	cfg.rc_end_usage = VPX_CBR;
	cfg.g_error_resilient = VPX_ERROR_RESILIENT_DEFAULT;
	cfg.g_lag_in_frames = 0;
	cfg.g_threads = threads;
	cfg.kf_mode = VPX_KF_AUTO;
	cfg.kf_max_dist = fps * 3;
	cfg.rc_min_quantizer = 4;
	cfg.rc_max_quantizer = 56;
	cfg.rc_undershoot_pct = 95;
	cfg.rc_buf_sz = 1000;
	cfg.rc_buf_initial_sz = 500;
	cfg.rc_buf_optimal_sz = 600;
	if (vpx_codec_enc_init(&e->ctx, vpx_codec_vp8_cx(), &cfg, 0)) return -2;
	vpx_codec_control(&e->ctx, VP8E_SET_CPUUSED, 12);
	vpx_codec_control(&e->ctx, VP8E_SET_STATIC_THRESHOLD, 1);
	vpx_codec_control(&e->ctx, VP8E_SET_NOISE_SENSITIVITY, 0);
	e->img = vpx_img_alloc(NULL, VPX_IMG_FMT_I420, w, h, 16);
	if (!e->img) { vpx_codec_destroy(&e->ctx); return -3; }
	return 0;
}

static int bl_enc_encode(bl_enc *e, long pts, long dur, int force_key) {
	e->iter = NULL;
	return vpx_codec_encode(&e->ctx, e->img, pts, dur, force_key ? VPX_EFLAG_FORCE_KF : 0, VPX_DL_REALTIME);
}

// bl_enc_next returns the next frame packet of the last encode, or NULL.
static const vpx_codec_cx_pkt_t *bl_enc_next(bl_enc *e) {
	const vpx_codec_cx_pkt_t *p;
	while ((p = vpx_codec_get_cx_data(&e->ctx, &e->iter)) != NULL) {
		if (p->kind == VPX_CODEC_CX_FRAME_PKT) return p;
	}
	return NULL;
}

static void *bl_pkt_buf(const vpx_codec_cx_pkt_t *p) { return p->data.frame.buf; }
static size_t bl_pkt_sz(const vpx_codec_cx_pkt_t *p) { return p->data.frame.sz; }
static int bl_pkt_key(const vpx_codec_cx_pkt_t *p) { return (p->data.frame.flags & VPX_FRAME_IS_KEY) != 0; }

static void bl_enc_close(bl_enc *e) {
	vpx_img_free(e->img);
	vpx_codec_destroy(&e->ctx);
}

typedef struct {
	vpx_codec_ctx_t ctx;
} bl_dec;

static int bl_dec_open(bl_dec *d) {
	vpx_codec_dec_cfg_t cfg = {1, 0, 0};
	return vpx_codec_dec_init(&d->ctx, vpx_codec_vp8_dx(), &cfg, 0);
}

static vpx_image_t *bl_dec_decode(bl_dec *d, const unsigned char *data, unsigned int n, int *err) {
	vpx_codec_iter_t iter = NULL;
	*err = vpx_codec_decode(&d->ctx, data, n, NULL, 0);
	if (*err) return NULL;
	return vpx_codec_get_frame(&d->ctx, &iter);
}

static void bl_dec_close(bl_dec *d) { vpx_codec_destroy(&d->ctx); }
*/
import "C"

import (
	"errors"
	"fmt"
	"image"
	"time"
	"unsafe"
)

// EncoderConfig sizes an encoder.
type EncoderConfig struct {
	Width, Height int // even
	FPS           int
	BitrateKbps   int
	Threads       int
}

// Encoder encodes I420 frames in real-time mode. It is not safe for concurrent use.
type Encoder struct {
	e    *C.bl_enc
	w, h int
}

// NewEncoder returns a realtime VP8 encoder.
func NewEncoder(cfg EncoderConfig) (*Encoder, error) {
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width%2 != 0 || cfg.Height%2 != 0 {
		return nil, fmt.Errorf("vp8: frame size %dx%d must be positive and even", cfg.Width, cfg.Height)
	}
	if cfg.FPS <= 0 {
		cfg.FPS = 15
	}
	if cfg.BitrateKbps <= 0 {
		cfg.BitrateKbps = 600
	}
	if cfg.Threads <= 0 {
		cfg.Threads = 1
	}
	e := (*C.bl_enc)(C.calloc(1, C.sizeof_bl_enc))
	if r := C.bl_enc_open(e, C.int(cfg.Width), C.int(cfg.Height), C.int(cfg.FPS), C.int(cfg.BitrateKbps), C.int(cfg.Threads)); r != 0 {
		C.free(unsafe.Pointer(e))
		return nil, fmt.Errorf("vp8: encoder init failed (%d)", int(r))
	}
	return &Encoder{e: e, w: cfg.Width, h: cfg.Height}, nil
}

// Encode encodes one frame shown at pts (time since the stream started) and returns the
// encoded frame (nil when the encoder dropped it) and whether it is a keyframe. The
// returned slice is the caller's.
func (enc *Encoder) Encode(img *image.YCbCr, pts time.Duration, forceKey bool) ([]byte, bool, error) {
	if enc.e == nil {
		return nil, false, errors.New("vp8: encoder closed")
	}
	if img.Rect.Dx() != enc.w || img.Rect.Dy() != enc.h || img.SubsampleRatio != image.YCbCrSubsampleRatio420 {
		return nil, false, fmt.Errorf("vp8: frame %v %v, want %dx%d 4:2:0", img.Rect.Size(), img.SubsampleRatio, enc.w, enc.h)
	}
	vimg := enc.e.img
	copyPlane(vimg.planes[0], int(vimg.stride[0]), img.Y, img.YStride, enc.w, enc.h)
	copyPlane(vimg.planes[1], int(vimg.stride[1]), img.Cb, img.CStride, enc.w/2, enc.h/2)
	copyPlane(vimg.planes[2], int(vimg.stride[2]), img.Cr, img.CStride, enc.w/2, enc.h/2)
	key := 0
	if forceKey {
		key = 1
	}
	if r := C.bl_enc_encode(enc.e, C.long(pts.Milliseconds()), 1, C.int(key)); r != 0 {
		return nil, false, fmt.Errorf("vp8: encode failed (%d)", int(r))
	}
	var out []byte
	isKey := false
	for p := C.bl_enc_next(enc.e); p != nil; p = C.bl_enc_next(enc.e) {
		out = append(out, C.GoBytes(C.bl_pkt_buf(p), C.int(C.bl_pkt_sz(p)))...)
		isKey = isKey || C.bl_pkt_key(p) != 0
	}
	return out, isKey, nil
}

func copyPlane(dst *C.uchar, dstStride int, src []byte, srcStride, w, h int) {
	d := unsafe.Slice((*byte)(unsafe.Pointer(dst)), dstStride*h)
	for y := range h {
		copy(d[y*dstStride:y*dstStride+w], src[y*srcStride:y*srcStride+w])
	}
}

// Close frees the encoder.
func (enc *Encoder) Close() {
	if enc.e != nil {
		C.bl_enc_close(enc.e)
		C.free(unsafe.Pointer(enc.e))
		enc.e = nil
	}
}

// Decoder decodes VP8 frames. It is not safe for concurrent use.
type Decoder struct {
	d *C.bl_dec
}

// NewDecoder returns a VP8 decoder.
func NewDecoder() (*Decoder, error) {
	d := (*C.bl_dec)(C.calloc(1, C.sizeof_bl_dec))
	if r := C.bl_dec_open(d); r != 0 {
		C.free(unsafe.Pointer(d))
		return nil, fmt.Errorf("vp8: decoder init failed (%d)", int(r))
	}
	return &Decoder{d: d}, nil
}

// Decode decodes one complete frame and returns it as a fresh image (nil when the
// decoder produced no picture).
func (dec *Decoder) Decode(frame []byte) (*image.YCbCr, error) {
	if dec.d == nil {
		return nil, errors.New("vp8: decoder closed")
	}
	if len(frame) == 0 {
		return nil, errors.New("vp8: empty frame")
	}
	cbuf := C.CBytes(frame)
	defer C.free(cbuf)
	var cerr C.int
	vimg := C.bl_dec_decode(dec.d, (*C.uchar)(cbuf), C.uint(len(frame)), &cerr)
	if cerr != 0 {
		return nil, fmt.Errorf("vp8: decode failed (%d)", int(cerr))
	}
	if vimg == nil {
		return nil, nil
	}
	w, h := int(vimg.d_w), int(vimg.d_h)
	img := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	cw, ch := (w+1)/2, (h+1)/2
	readPlane(img.Y, img.YStride, vimg.planes[0], int(vimg.stride[0]), w, h)
	readPlane(img.Cb, img.CStride, vimg.planes[1], int(vimg.stride[1]), cw, ch)
	readPlane(img.Cr, img.CStride, vimg.planes[2], int(vimg.stride[2]), cw, ch)
	return img, nil
}

func readPlane(dst []byte, dstStride int, src *C.uchar, srcStride, w, h int) {
	s := unsafe.Slice((*byte)(unsafe.Pointer(src)), srcStride*h)
	for y := range h {
		copy(dst[y*dstStride:y*dstStride+w], s[y*srcStride:y*srcStride+w])
	}
}

// Close frees the decoder.
func (dec *Decoder) Close() {
	if dec.d != nil {
		C.bl_dec_close(dec.d)
		C.free(unsafe.Pointer(dec.d))
		dec.d = nil
	}
}
