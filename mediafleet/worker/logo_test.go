package worker_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/avatar"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/tts/espeak"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// logoGreen is the test logo's colour, far from the brand's, the text's and the avatar's.
var logoGreen = color.RGBA{0x10, 0xc0, 0x40, 0xff}

// testLogo is a 2:1 logo in logoGreen, as the control plane hands it out.
func testLogo(t *testing.T) *persona.BrandLogo {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 160, 80))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = logoGreen.R, logoGreen.G, logoGreen.B, 0xff
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b.Bytes())
	return &persona.BrandLogo{ContentType: "image/png", SHA256: hex.EncodeToString(sum[:]), Data: b.Bytes()}
}

// logoFrames counts the connecting screen's frames (the brand colour in the top corners)
// and those of them with the logo's colour where the logo goes.
type logoFrames struct {
	brand, logo [3]uint8
	src         image.Rectangle
	mu          sync.Mutex
	connecting  int
	withLogo    int
}

func newLogoFrames(brand string, logo image.Rectangle) *logoFrames {
	b, _ := avatar.ParseColor(brand)
	return &logoFrames{brand: ycc(b.R, b.G, b.B), logo: ycc(logoGreen.R, logoGreen.G, logoGreen.B), src: logo}
}

func (l *logoFrames) see(f callerbot.Frame) {
	if !close3(cornerColour(f.Image), l.brand) {
		return
	}
	r := f.Image.Rect
	box := avatar.LogoBox(l.src, true, r.Dx(), r.Dy())
	c := f.Image.YCbCrAt(box.Min.X+box.Dx()/2, box.Min.Y+box.Dy()/2)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.connecting++
	if close3([3]uint8{c.Y, c.Cb, c.Cr}, l.logo) {
		l.withLogo++
	}
}

func (l *logoFrames) counts() (connecting, withLogo int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.connecting, l.withLogo
}

// A video call whose job names the account's logo (a built-in avatar): the worker asks
// the control plane for the logo alone and the caller's connecting screen frames show
// it above the name. The next call of the account, naming the same file, shows it from
// the worker's cache: the logo is read once.
func TestVideoCallLogo(t *testing.T) {
	e := newEnv(t)
	logo := testLogo(t)
	e.logo.Store(logo)
	e.startWorker(nil)
	speech, err := callerbot.Speech(context.Background(), &espeak.Synthesizer{}, "Hello.")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		job := testJob(fmt.Sprintf("call_logo_%d", i), "video", "ava_iris")
		job.Brand.Logo = logo.SHA256
		frames := newLogoFrames(job.Brand.Color, image.Rect(0, 0, 160, 80))
		token := e.call(fmt.Sprintf("room-logo-%d", i), job)
		bot, err := callerbot.Join(context.Background(), callerbot.Options{URL: lk.URL, Token: token, Audio: &speech, Video: true, OnFrame: frames.see})
		if err != nil {
			t.Fatal(err)
		}
		heardGreeting(t, bot)
		bot.Leave()
		e.reportsUntilEnded(job.CallID, 20*time.Second)
		if connecting, withLogo := frames.counts(); connecting == 0 || withLogo == 0 {
			t.Errorf("call %d: %d connecting screen frames, %d with the logo's colour where the logo goes; want the logo", i, connecting, withLogo)
		}
	}
	if reads, asks := e.logoReads.Load(), e.avatarRequests.Load(); reads != 1 || asks != 1 {
		t.Errorf("the logo was read %d times in %d requests, want once in one", reads, asks)
	}
}
