package webcall

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/examples/internal/browser"
	"github.com/bridgeline/bridgeline/mediafleet/avatar"
)

// logoColour fills the test's logo: a colour nothing else on the page has.
var logoColour = color.RGBA{R: 0xe0, G: 0x20, B: 0xa0, A: 0xff}

// brandAccount gives the stack's account a name, a colour and a logo through PATCH
// /v1/account, as a customer does.
func brandAccount(t *testing.T, st *harness.Stack) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 160, 80))
	for y := range 80 {
		for x := range 160 {
			img.SetRGBA(x, y, logoColour)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	harness.Must(t, st.Do(t, http.MethodPatch, "/v1/account", map[string]any{"name": "Acme Dental", "brand_color": "#0a7b83",
		"support_url": "https://acme.example/help", "logo": base64.StdEncoding.EncodeToString(b.Bytes())}, nil), http.StatusOK, "PATCH /v1/account")
}

// TestJoinPageBranded: in Chromium and in Firefox, a branded account's join page shows
// its logo (pixels of the logo's colour where the logo is), its name and the assistant's
// before Start, and in the call, at 1280x800 and at a phone's 390x844, the avatar's video
// fills the stage: no black bars (the landscape video is cropped to the portrait stage,
// not letterboxed). Chromium's two screenshots are the ones docs/guide.md shows
// (SCREENSHOT_DIR keeps them).
func TestJoinPageBranded(t *testing.T) {
	browser.Setup(t)
	browser.SetupFirefox(t)
	st, _, asst := assistantStack(t)
	brandAccount(t, st)
	av, _ := avatar.Lookup("ava_iris")
	for _, name := range []string{"chromium", "firefox"} {
		t.Run(name, func(t *testing.T) {
			var b *browser.Browser
			if name == "chromium" {
				b = browser.Launch(t)
			} else {
				b = browser.LaunchFirefox(t, nil)
			}
			w := createWebCall(t, st, asst, "video")
			p := b.Open(w.JoinURL).For(t)
			p.SetViewport(1280, 800)
			p.WaitFor("the page to be ready", `document.body.dataset.state === 'ready'`, 10*time.Second, nil)
			var shown struct{ Brand, Title, Icon, Support string }
			p.Eval(`({ brand: document.getElementById('brand').textContent, title: document.title,
  icon: document.getElementById('favicon').href, support: document.getElementById('support').href })`, &shown)
			if shown.Brand != "Acme Dental" || shown.Title != "Acme Dental — Front desk" || !strings.HasPrefix(shown.Icon, "data:image/png;base64,") ||
				shown.Support != "https://acme.example/help" {
				t.Errorf("before Start the page shows %+v, want the company, the assistant, the logo as icon and the support link", shown)
			}
			checkLogo(t, p, shotPath(t, "join-ready-"+name+".png"))
			// On a phone before Start, the panel (what Start does, the button) starts below
			// the stage: Chromium once sized the stage's row shorter than the stage.
			p.SetViewport(390, 844)
			time.Sleep(200 * time.Millisecond) // a layout at the new size
			if stage, panel := rectOf(p, "stage"), rectOf(p, "panel"); panel.Min.Y < stage.Max.Y {
				t.Errorf("on a 390x844 screen before Start the panel starts at y %d, inside the stage (to y %d)", panel.Min.Y, stage.Max.Y)
			}
			p.SetViewport(1280, 800)

			p.Click("#start")
			p.WaitFor("the page to join the call", `document.body.dataset.state === 'connected'`, 30*time.Second, nil)
			p.WaitForRemoteMedia("the assistant's video", "window.joinPage.room", "#remote-video", `m.width > 0 && m.framesDecoded > 30`, 30*time.Second)
			p.WaitFor("the greeting's caption", `window.joinPage.greeted`, 30*time.Second, nil)
			var status string
			p.Eval(`document.getElementById('status').textContent`, &status)
			if status != "On the call with Front desk." {
				t.Errorf("once greeted the status says %q, want it no longer to ask to say hello", status)
			}
			desktop := shotPath(t, "join-desktop-"+name+".png")
			p.CheckVideoShows("#remote-video", desktop, av.Backdrop)
			checkStageFilled(t, p, desktop)
			checkLogo(t, p, desktop)

			p.SetViewport(390, 844)
			time.Sleep(500 * time.Millisecond) // a frame at the new size
			phone := shotPath(t, "join-phone-"+name+".png")
			p.CheckVideoShows("#remote-video", phone, av.Backdrop)
			checkStageFilled(t, p, phone)
			checkLogo(t, p, phone)
			var fits fit
			p.Eval(`(() => { const vw = window.innerWidth, r = document.getElementById('stage').getBoundingClientRect();
  return { scroll: document.documentElement.scrollWidth <= vw, stage: r.width >= 0.9 * vw && r.height >= r.width, button: true }; })()`, &fits)
			if !fits.Scroll || !fits.Stage {
				t.Errorf("on a 390x844 screen: %+v, want no sideways scroll and a portrait stage across the screen", fits)
			}
			if name == "chromium" && os.Getenv("SCREENSHOT_DIR") != "" {
				t.Logf("docs screenshots: %s, %s", desktop, phone)
			}
			p.Click("#hangup")
			p.WaitFor("the page to show the end", `document.body.dataset.state === 'ended'`, 10*time.Second, nil)
		})
	}
}

// elementRect is an element's box on the screen.
type elementRect struct{ X, Y, Width, Height float64 }

func rectOf(p *browser.Page, id string) image.Rectangle {
	var r elementRect
	p.Eval(`(() => { const r = document.getElementById('`+id+`').getBoundingClientRect(); return { x: r.x, y: r.y, width: r.width, height: r.height }; })()`, &r)
	return image.Rect(int(r.X+0.5), int(r.Y+0.5), int(r.X+r.Width), int(r.Y+r.Height))
}

func screenshot(t *testing.T, path string) image.Image {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// share is the part of rect's pixels in img for which is is true.
func share(img image.Image, rect image.Rectangle, is func(r, g, b uint8) bool) (float64, int) {
	rect = rect.Intersect(img.Bounds())
	n, hit := 0, 0
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		for x := rect.Min.X; x < rect.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			n++
			if is(uint8(r>>8), uint8(g>>8), uint8(b>>8)) {
				hit++
			}
		}
	}
	if n == 0 {
		return 0, 0
	}
	return float64(hit) / float64(n), n
}

// checkLogo: the logo is in the header, on the screen, and its pixels are the logo's
// colour (the image shows, not a broken-image box). It takes a screenshot unless the
// one at path is of the page as it is now.
func checkLogo(t *testing.T, p *browser.Page, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		p.Screenshot(path)
	}
	rect := rectOf(p, "logo")
	if rect.Dx() < 20 || rect.Dy() < 20 {
		t.Errorf("the logo is %v on the screen: not shown", rect)
		return
	}
	near := func(a, b uint8) bool { d := int(a) - int(b); return d < 30 && d > -30 }
	got, n := share(screenshot(t, path), rect.Inset(2), func(r, g, b uint8) bool {
		return near(r, logoColour.R) && near(g, logoColour.G) && near(b, logoColour.B)
	})
	t.Logf("%s: the logo at %v, %.0f%% of %d pixels its colour", path, rect, 100*got, n)
	if got < 0.8 {
		t.Errorf("the logo at %v is %.0f%% its colour in %s, want it shown", rect, 100*got, path)
	}
}

// checkStageFilled: the stage's pixels are the picture, not black bars: at most 3% of
// them near black (a letterboxed landscape video on the portrait phone stage was 40%).
func checkStageFilled(t *testing.T, p *browser.Page, path string) {
	t.Helper()
	rect := rectOf(p, "stage")
	black, n := share(screenshot(t, path), rect.Inset(4), func(r, g, b uint8) bool { return r < 20 && g < 20 && b < 20 })
	t.Logf("%s: the stage at %v, %.1f%% of %d pixels near black", path, rect, 100*black, n)
	if black > 0.03 {
		t.Errorf("the stage at %v is %.0f%% black in %s: the video does not fill it", rect, 100*black, path)
	}
}
