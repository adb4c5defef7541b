package sessions_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/mediafleet/avatar"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
)

// TestConnectingScreenShowsLogo is issue 36's logo on the video connecting screen,
// through the whole stack: the account's logo set with PATCH /v1/account, a sim video
// call answered by an assistant, the worker reading the logo from the control plane's
// internal route (persona.AvatarPath) as the job names it, and the caller decoding the
// connecting screen's frames with the logo's colour where the logo goes, above the
// account's name, before the avatar.
func TestConnectingScreenShowsLogo(t *testing.T) {
	st := tenant(t)
	st.StartWorker(t, nil, worker.Options{})
	publishAssistant(t, st, "Front desk", greetingV1, "ava_theo")

	// A 2:1 logo in a green far from the brand colour, the avatar's and the text's.
	green := color.RGBA{0x10, 0xc0, 0x40, 0xff}
	img := image.NewRGBA(image.Rect(0, 0, 200, 100))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = green.R, green.G, green.B, green.A
	}
	var file bytes.Buffer
	if err := png.Encode(&file, img); err != nil {
		t.Fatal(err)
	}
	var acct struct {
		Logo *struct {
			SHA256 string `json:"sha256"`
		} `json:"logo"`
	}
	harness.Must(t, st.Do(t, http.MethodPatch, "/v1/account", map[string]any{"logo": base64.StdEncoding.EncodeToString(file.Bytes())}, &acct),
		http.StatusOK, "PATCH /v1/account")
	if acct.Logo == nil || acct.Logo.SHA256 == "" {
		t.Fatalf("account after PATCH has no logo: %+v", acct)
	}

	sc := newScreens(brandColor, "ava_theo")
	want := ycc(green)
	var mu sync.Mutex
	var withLogo, withoutLogo int
	var sample [3]uint8
	see := func(f callerbot.Frame) {
		sc.see(f)
		if !near(corners(f.Image), sc.brand) {
			return
		}
		// Where the logo goes on a frame of this size (the layer decoded may be scaled).
		r := f.Image.Rect
		box := avatar.LogoBox(img.Bounds(), true, r.Dx(), r.Dy())
		c := mean(f.Image, image.Rect(box.Min.X+box.Dx()/4, box.Min.Y+box.Dy()/4, box.Max.X-box.Dx()/4, box.Max.Y-box.Dy()/4))
		mu.Lock()
		defer mu.Unlock()
		if near(c, want) {
			withLogo++
		} else {
			withoutLogo++
			sample = c
		}
	}
	placed := ring(t, st, "video", platformsim.PartyOptions{OnFrame: see})
	harness.WaitFor(t, 20*time.Second, "avatar frames", func() bool { return sc.counts().avatars >= 3 })
	if job := dispatchedJob(t, st, record(t, st, placed.CallID).sessionID(t)); job.Brand.Logo != acct.Logo.SHA256 {
		t.Errorf("the job's brand = %+v, want the logo's hash %s", job.Brand, acct.Logo.SHA256)
	}
	hangupSim(t, st, placed.ID)

	n := sc.counts()
	mu.Lock()
	defer mu.Unlock()
	if n.connecting == 0 || !n.firstConnecting.Before(n.firstAvatar) {
		t.Fatalf("connecting screen frames %d (first %v), avatar frames %d (first %v): want the connecting screen first",
			n.connecting, n.firstConnecting, n.avatars, n.firstAvatar)
	}
	if withLogo == 0 {
		t.Errorf("none of %d connecting screen frames shows the logo's colour %v where the logo goes (one had %v)", n.connecting, want, sample)
	}
	t.Logf("connecting screen frames with the logo %d, without %d", withLogo, withoutLogo)
}

// mean averages the frame's colour over r.
func mean(img *image.YCbCr, r image.Rectangle) [3]uint8 {
	var sum [3]int
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := img.YCbCrAt(x, y)
			sum[0] += int(c.Y)
			sum[1] += int(c.Cb)
			sum[2] += int(c.Cr)
			n++
		}
	}
	if n == 0 {
		return [3]uint8{}
	}
	return [3]uint8{uint8(sum[0] / n), uint8(sum[1] / n), uint8(sum[2] / n)}
}
