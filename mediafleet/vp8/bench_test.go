package vp8_test

import (
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/avatar"
	"github.com/bridgeline/bridgeline/mediafleet/vp8"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// BenchmarkAvatarFrame is the per-frame video cost of a call: draw the avatar with a
// moving mouth and encode it at the worker's defaults (640x360, 500 kbps). At 15 fps a
// call spends 15 of these per second.
func BenchmarkAvatarFrame(b *testing.B) {
	const w, h, fps = 640, 360, 15
	a, _ := avatar.Lookup("ava_maya")
	scene := avatar.NewScene(a, persona.Framing{Shot: "medium", Position: "center"}, w, h)
	enc, err := vp8.NewEncoder(vp8.EncoderConfig{Width: w, Height: h, FPS: fps, BitrateKbps: 500})
	if err != nil {
		b.Fatal(err)
	}
	defer enc.Close()
	frame := avatar.NewFrame(w, h)
	for i := 0; b.Loop(); i++ {
		t := time.Duration(i) * time.Second / fps
		scene.Draw(frame, t, float64(i%7)/6)
		if _, _, err := enc.Encode(frame, t, false); err != nil {
			b.Fatal(err)
		}
	}
	perFrame := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(perFrame*fps, "cpu-s/call-s")
}
