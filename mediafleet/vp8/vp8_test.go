package vp8

import (
	"image"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	const w, h = 320, 180
	enc, err := NewEncoder(EncoderConfig{Width: w, Height: h, FPS: 15, BitrateKbps: 400})
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	dec, err := NewDecoder()
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()

	// Left half dark, right half bright; chroma flat.
	src := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	for y := range h {
		for x := range w {
			v := byte(40)
			if x >= w/2 {
				v = 210
			}
			src.Y[y*src.YStride+x] = v
		}
	}
	for i := range src.Cb {
		src.Cb[i], src.Cr[i] = 100, 160
	}

	var got *image.YCbCr
	for i := range 5 {
		frame, key, err := enc.Encode(src, time.Duration(i)*66*time.Millisecond, false)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 && !key {
			t.Errorf("first frame is not a keyframe")
		}
		if frame == nil {
			continue
		}
		if got, err = dec.Decode(frame); err != nil {
			t.Fatal(err)
		}
	}
	if got == nil || got.Rect.Dx() != w || got.Rect.Dy() != h {
		t.Fatalf("decoded frame = %v, want %dx%d", got, w, h)
	}
	near := func(a, b byte) bool { return int(a)-int(b) < 8 && int(b)-int(a) < 8 }
	if l, r := got.Y[90*got.YStride+40], got.Y[90*got.YStride+280]; !near(l, 40) || !near(r, 210) {
		t.Errorf("luma left/right = %d/%d, want about 40/210", l, r)
	}
	if cb, cr := got.Cb[45*got.CStride+40], got.Cr[45*got.CStride+40]; !near(cb, 100) || !near(cr, 160) {
		t.Errorf("chroma = %d/%d, want about 100/160", cb, cr)
	}

	frame, key, err := enc.Encode(src, 400*time.Millisecond, true)
	if err != nil || !key || len(frame) == 0 {
		t.Errorf("forced keyframe: key=%v len=%d err=%v", key, len(frame), err)
	}
}
