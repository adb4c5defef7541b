package pipeline

import (
	"image"
	"image/color"
	"math"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/avatar"
	"github.com/bridgeline/bridgeline/shared/avatars"
	"github.com/bridgeline/bridgeline/shared/avatars/avatartest"
)

// colourAt is the RGB of a frame's pixel.
func colourAt(f *image.YCbCr, x, y int) color.RGBA {
	c := f.YCbCrAt(x, y)
	r, g, b := color.YCbCrToRGB(c.Y, c.Cb, c.Cr)
	return color.RGBA{r, g, b, 0xff}
}

func near(a, b color.RGBA) bool {
	d := func(x, y uint8) float64 { return math.Abs(float64(x) - float64(y)) }
	return d(a.R, b.R) < 40 && d(a.G, b.G) < 40 && d(a.B, b.B) < 40
}

// speechFrame is a 20 ms frame of a 220 Hz tone at dbfs (0 for silence).
func speechFrame(i int, dbfs float64) []int16 {
	f := make([]int16, frameLen)
	if dbfs == 0 {
		return f
	}
	amp := math.Pow(10, dbfs/20) * 32767 * math.Sqrt2
	for n := range f {
		f[n] = int16(amp * math.Sin(2*math.Pi*220*float64(i*frameLen+n)/outRate))
	}
	return f
}

// An uploaded character sheet speaking: the audio's loudness, through the speaker's own
// mouth follower, picks the mouth shape whose colour then shows in the mouth region of
// the rendered frame; a blink shows the eyes_closed frame; the idle frame comes in turn.
func TestSheetAvatarSpeaks(t *testing.T) {
	sh, err := avatars.Validate(avatartest.JSON(avatartest.Manifest()), avatartest.Files())
	if err != nil {
		t.Fatal(err)
	}
	const w, h = 640, 360
	scene := avatar.NewSheetScene(avatars.Avatar{Parts: sh.Parts, Face: sh.Face}, sh.Images, w, h)
	mouthX, mouthY := avatartest.MouthX+avatartest.MouthW/2, avatartest.MouthY+avatartest.MouthH/2
	eyesX, eyesY := avatartest.EyesX+avatartest.EyesW/2, avatartest.EyesY+avatartest.EyesH/2
	idleX, idleY := avatartest.IdleX+avatartest.IdleW/2, avatartest.IdleY+avatartest.IdleH/2

	// 1 s silence, 1 s of quiet speech, 1 s of loud speech, 1 s silence.
	script := []struct {
		dbfs float64
		want color.RGBA
		part string
	}{{0, avatartest.MouthClosed, "closed"}, {-34, avatartest.MouthHalf, "half"}, {-6, avatartest.MouthOpen, "open"}, {0, avatartest.MouthClosed, "closed again"}}
	frame := avatar.NewFrame(w, h)
	level := 0.0
	i := 0
	var blinked, openEyes bool
	var frames int
	for _, seg := range script {
		seen := 0
		for k := 0; k < 50; k, i = k+1, i+1 {
			level = smooth(level, openness(speechFrame(i, seg.dbfs)))
			at := time.Duration(i) * frameDur
			scene.Draw(frame, at, quantizeMouth(level))
			frames++
			// After 200 ms in the segment the mouth follower has settled.
			if k >= 10 && near(colourAt(frame, mouthX, mouthY), seg.want) {
				seen++
			}
			// Outside the mouth the face is the base's skin, whatever the mouth does.
			if got := colourAt(frame, avatartest.FaceX+10, avatartest.FaceY+200); !near(got, avatartest.Skin) {
				t.Fatalf("at %s the cheek is %v, want skin %v", at, got, avatartest.Skin)
			}
			eye := colourAt(frame, eyesX, eyesY)
			switch {
			case avatar.Blink(at) >= avatar.EyesClosedAt:
				if !near(eye, avatartest.EyesClosed) {
					t.Errorf("at %s (blink %.2f) the eyes are %v, want eyes_closed %v", at, avatar.Blink(at), eye, avatartest.EyesClosed)
				}
				blinked = true
			case avatar.Blink(at) == 0:
				if !near(eye, avatartest.Skin) {
					t.Errorf("at %s (no blink) the eyes are %v, want the base %v", at, eye, avatartest.Skin)
				}
				openEyes = true
			}
		}
		if seen < 40 {
			t.Errorf("%s (%v dBFS): the mouth region showed the %s shape in %d of 40 settled frames", seg.part, seg.dbfs, seg.part, seen)
		}
	}
	if !blinked || !openEyes {
		t.Errorf("in %d frames: blink frame shown %v, open eyes %v; want both", frames, blinked, openEyes)
	}
	// The idle frame: in at 5 s (for 1.2 s), not at 4 s.
	scene.Draw(frame, 5100*time.Millisecond, 0)
	if got := colourAt(frame, idleX, idleY); !near(got, avatartest.Idle) {
		t.Errorf("at 5.1 s the idle patch is %v, want idle_1 %v", got, avatartest.Idle)
	}
	scene.Draw(frame, 4*time.Second, 0)
	if got := colourAt(frame, idleX, idleY); !near(got, avatartest.Backdrop) {
		t.Errorf("at 4 s the idle patch is %v, want the backdrop %v", got, avatartest.Backdrop)
	}
	// Still tells the painter when a frame changes: mouth shape, blink, idle frame.
	if scene.Still(time.Second, 0.01) != scene.Still(time.Second, 0.1) {
		t.Error("two openings within the closed group differ in Still")
	}
	if scene.Still(time.Second, 0) == scene.Still(time.Second, 0.9) {
		t.Error("closed and open mouths are the same Still")
	}
	if scene.Still(4*time.Second, 0) == scene.Still(5100*time.Millisecond, 0) && avatar.Blink(4*time.Second) == 0 {
		t.Error("the idle frame does not change Still")
	}
}

// A base of another size and aspect is scaled to fit the frame: the mouth shapes stay
// on the face.
func TestSheetAvatarScales(t *testing.T) {
	m, f := avatartest.Manifest(), avatartest.Files()
	// The same sheet at twice the size, drawn into a 320x180 frame (a quarter).
	sh, err := avatars.Validate(avatartest.JSON(m), f)
	if err != nil {
		t.Fatal(err)
	}
	scene := avatar.NewSheetScene(avatars.Avatar{Parts: sh.Parts, Face: sh.Face}, sh.Images, 320, 180)
	frame := avatar.NewFrame(320, 180)
	scene.Draw(frame, time.Second, 1)
	x, y := (avatartest.MouthX+avatartest.MouthW/2)/2, (avatartest.MouthY+avatartest.MouthH/2)/2
	if got := colourAt(frame, x, y); !near(got, avatartest.MouthOpen) {
		t.Errorf("scaled frame's mouth %v, want mouth_open %v", got, avatartest.MouthOpen)
	}
}
