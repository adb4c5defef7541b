package pipeline

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/webrtc/v4/pkg/media"

	"github.com/bridgeline/bridgeline/mediafleet/avatar"
	"github.com/bridgeline/bridgeline/mediafleet/vp8"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// paint runs a painter showing the avatar for d (no blink comes before 500 ms) with the
// mouth mouth() and returns the samples it sent.
func paint(t *testing.T, idleFPS int, d time.Duration, mouth func() float64) []media.Sample {
	t.Helper()
	const w, h, fps = 320, 180, 15
	enc, err := vp8.NewEncoder(vp8.EncoderConfig{Width: w, Height: h, FPS: fps, BitrateKbps: 300})
	if err != nil {
		t.Fatal(err)
	}
	av, _ := avatar.Lookup("ava_maya")
	var mu sync.Mutex
	var out []media.Sample
	p := &painter{
		w: w, h: h, fps: fps, idleFPS: idleFPS, enc: enc,
		connecting: avatar.NewConnecting(persona.Brand{Name: "Acme", Color: "#ff6a00"}, nil, w, h),
		scene:      avatar.NewScene(av, persona.Framing{Shot: "medium", Position: "center"}, w, h),
		mouth:      mouth,
		out: func(s media.Sample) error {
			mu.Lock()
			defer mu.Unlock()
			out = append(out, s)
			return nil
		},
	}
	p.showAvatar(time.Now())
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	p.run(ctx)
	mu.Lock()
	defer mu.Unlock()
	return out
}

func TestStillAvatarIsSentAtTheIdleRate(t *testing.T) {
	const d = 450 * time.Millisecond
	still := paint(t, 5, d, func() float64 { return 0 })
	// At 5 frames a second: the first (a keyframe) and one every 200 ms, 3 in 450 ms; at
	// the full 15, 7.
	if len(still) < 2 || len(still) > 4 {
		t.Errorf("a still avatar sent %d frames in %v, want 2-4 (5 a second)", len(still), d)
	}
	for i := 1; i < len(still); i++ {
		if gap := still[i].Timestamp.Sub(still[i-1].Timestamp); gap < 150*time.Millisecond {
			t.Errorf("frames %d and %d of a still avatar %v apart, want about 200 ms", i-1, i, gap)
		}
	}

	// A moving mouth changes every frame: every frame is drawn and sent.
	var n atomic.Int64
	talking := paint(t, 5, d, func() float64 { return float64(n.Add(1)%8) / 8 })
	if len(talking) < 5 {
		t.Errorf("a talking avatar sent %d frames in %v, want every frame (about 7)", len(talking), d)
	}

	// idleFPS at the frame rate draws every frame, still or not.
	every := paint(t, 15, d, func() float64 { return 0 })
	if len(every) < 5 {
		t.Errorf("with the idle rate at the frame rate, %d frames in %v, want about 7", len(every), d)
	}
	for _, s := range append(append(still, talking...), every...) {
		if s.Timestamp.IsZero() || len(s.Data) == 0 {
			t.Fatalf("sample %+v: want encoded data with its wall-clock time", s)
		}
	}
}
