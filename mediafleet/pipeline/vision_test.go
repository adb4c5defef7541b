package pipeline

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/livekit/protocol/livekit"

	"github.com/bridgeline/bridgeline/mediafleet/agent"
	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/mediafleet/vp8"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// green is the test's solid colour, 0x20c040.
var green = color.RGBA{R: 0x20, G: 0xc0, B: 0x40, A: 0xff}

// solid is a w×h I420 picture of one colour, as a camera's frame is.
func solid(w, h int, c color.RGBA) *image.YCbCr {
	img := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	y, cb, cr := color.RGBToYCbCr(c.R, c.G, c.B)
	for i := range img.Y {
		img.Y[i] = y
	}
	for i := range img.Cb {
		img.Cb[i], img.Cr[i] = cb, cr
	}
	return img
}

// nearRGB: every channel of got within tol of want.
func nearRGB(got color.Color, want color.RGBA, tol int) bool {
	r, g, b, _ := got.RGBA()
	d := func(x uint32, y uint8) bool { v := int(x>>8) - int(y); return v >= -tol && v <= tol }
	return d(r, want.R) && d(g, want.G) && d(b, want.B)
}

// decodeStill decodes a still's JPEG: its size and its centre pixel.
func decodeStill(t *testing.T, jpg []byte) (image.Point, color.Color) {
	t.Helper()
	img, err := jpeg.Decode(bytes.NewReader(jpg))
	if err != nil {
		t.Fatalf("the still is not a JPEG: %v", err)
	}
	b := img.Bounds()
	return b.Size(), img.At(b.Min.X+b.Dx()/2, b.Min.Y+b.Dy()/2)
}

// TestStillJPEG: a frame becomes a JPEG at most 768 pixels on its long side, its aspect
// kept, never scaled up, its colour kept.
func TestStillJPEG(t *testing.T) {
	for _, tc := range []struct {
		w, h int
		want image.Point
	}{
		{1280, 720, image.Pt(768, 432)},
		{720, 1280, image.Pt(432, 768)},
		{1920, 1080, image.Pt(768, 432)},
		{320, 240, image.Pt(320, 240)},
		{768, 768, image.Pt(768, 768)},
	} {
		jpg, err := stillJPEG(solid(tc.w, tc.h, green))
		if err != nil {
			t.Fatal(err)
		}
		size, centre := decodeStill(t, jpg)
		if size != tc.want || !nearRGB(centre, green, 6) {
			t.Errorf("%dx%d: still %v with centre %v, want %v of %v", tc.w, tc.h, size, centre, tc.want, green)
		}
	}
}

// encodeFrames encodes n frames of a solid picture with libvpx, the first a key frame.
func encodeFrames(t *testing.T, w, h, n int, c color.RGBA) [][]byte {
	t.Helper()
	enc, err := vp8.NewEncoder(vp8.EncoderConfig{Width: w, Height: h, FPS: 15, BitrateKbps: 500})
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	var out [][]byte
	img := solid(w, h, c)
	for i := range n {
		data, _, err := enc.Encode(img, time.Duration(i)*time.Second/15, i == 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 0 {
			out = append(out, data)
		}
	}
	if len(out) < 2 || out[0][0]&0x01 != 0 || out[1][0]&0x01 == 0 {
		t.Fatalf("encoded %d frames; want a key frame then inter frames", len(out))
	}
	return out
}

// TestViewerKeepsKeyFrameStills: the viewer asks the caller's client for a key frame as
// it starts watching; an inter frame gives no still; the key frame becomes the still,
// JPEG of the camera's colour, which Pictures returns at once for a since before it and
// waits for past it until its context ends. A Refresh asks for a key frame again (at most
// every refreshEvery); a source that goes away leaves no stale still.
func TestViewerKeepsKeyFrameStills(t *testing.T) {
	frames := encodeFrames(t, 640, 480, 3, green)
	v := newViewer(persona.VisionCamera, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if v == nil || newViewer(persona.VisionOff, nil) != nil || newViewer("", nil) != nil {
		t.Fatal("a viewer for vision camera, none for off")
	}
	dec, err := vp8.NewDecoder()
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	var plis atomic.Int32
	start := time.Now()
	src := v.add(speech.PictureCamera, func() { plis.Add(1) })
	if plis.Load() != 1 {
		t.Errorf("%d key frame requests on starting, want 1", plis.Load())
	}
	v.frame(src, speech.PictureCamera, dec, frames[1])
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if got := v.Pictures(ctx, start); len(got) != 0 {
		t.Errorf("an inter frame gave %d stills, want none", len(got))
	}
	cancel()
	v.frame(src, speech.PictureCamera, dec, frames[0])
	got := v.Pictures(context.Background(), start)
	if len(got) != 1 || got[0].Source != speech.PictureCamera || got[0].At.Before(start) {
		t.Fatalf("stills %+v, want the camera's", got)
	}
	if size, centre := decodeStill(t, got[0].JPEG); size != image.Pt(640, 480) || !nearRGB(centre, green, 12) {
		t.Errorf("still %v with centre %v, want 640x480 of %v", size, centre, green)
	}

	// Past the still: Pictures waits for a newer one, then gives the latest.
	later := time.Now().Add(time.Millisecond)
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	t0 := time.Now()
	old := v.Pictures(ctx, later)
	cancel()
	if waited := time.Since(t0); len(old) != 1 || waited < 90*time.Millisecond {
		t.Errorf("Pictures past the still gave %d after %v; want the latest after its context ended", len(old), waited)
	}
	// A key frame asked for arrives while Pictures waits.
	v.Refresh()
	go func() {
		time.Sleep(20 * time.Millisecond)
		v.frame(src, speech.PictureCamera, dec, frames[0])
	}()
	fresh := v.Pictures(context.Background(), later)
	if len(fresh) != 1 || fresh[0].At.Before(later) {
		t.Errorf("stills %+v, want the key frame that came after %v", fresh, later)
	}
	time.Sleep(refreshEvery)
	n := plis.Load()
	v.Refresh()
	v.Refresh()
	if plis.Load() != n+1 {
		t.Errorf("two Refreshes past refreshEvery asked %d times, want once", plis.Load()-n)
	}

	v.remove(speech.PictureCamera, src)
	if got := v.Pictures(context.Background(), later); len(got) != 0 {
		t.Errorf("stills %+v after the camera went away, want none", got)
	}
	if got := v.sourceOf(livekit.TrackSource_MICROPHONE); got != "" {
		t.Errorf("an unknown track source shows %q", got)
	}
}

// TestViewerSources: the sources each vision mode watches.
func TestViewerSources(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for mode, want := range map[string][2]string{
		persona.VisionCamera:          {speech.PictureCamera, ""},
		persona.VisionScreen:          {"", speech.PictureScreen},
		persona.VisionCameraAndScreen: {speech.PictureCamera, speech.PictureScreen},
	} {
		v := newViewer(mode, quiet)
		if got := [2]string{v.sourceOf(livekit.TrackSource_CAMERA), v.sourceOf(livekit.TrackSource_SCREEN_SHARE)}; got != want {
			t.Errorf("%s: camera, screen show %q, want %q", mode, got, want)
		}
	}
	var off *viewer
	if off.sourceOf(livekit.TrackSource_CAMERA) != "" || off.Pictures(context.Background(), time.Now()) != nil {
		t.Error("vision off shows something")
	}
	off.Refresh()
}

// TestAudioCallSeesNothing: a vision version's audio call (a phone) watches no video and
// runs its conversation with vision off, so the model is not offered look; its video
// call keeps vision.
func TestAudioCallSeesNothing(t *testing.T) {
	r := &Runner{cfg: Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	for media, want := range map[string]string{"audio": "", "video": persona.VisionCamera} {
		job := persona.Job{CallID: "call_1", Media: media}
		job.Version.Vision = persona.VisionCamera
		c := newCall(r, agent.Job{}, job)
		if got := (&Call{c: c}).Job().Version.Vision; got != want || (c.viewer == nil) != (want == "") {
			t.Errorf("%s call: the conversation's vision %q (viewer %v), want %q", media, got, c.viewer != nil, want)
		}
		close(c.reports)
		<-c.reportsDone
	}
}
