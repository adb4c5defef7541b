package avatar

import (
	"image"
	"image/color"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/persona"
)

const w, h = 640, 360

func TestCatalogue(t *testing.T) {
	want := map[string]string{"ava_maya": "Maya", "ava_theo": "Theo", "ava_iris": "Iris"}
	got := Catalogue()
	if len(got) != len(want) {
		t.Fatalf("Catalogue() has %d avatars, want %d", len(got), len(want))
	}
	backdrops := map[color.RGBA]bool{}
	for _, a := range got {
		if want[a.ID] != a.Name {
			t.Errorf("avatar %s named %q, want %q", a.ID, a.Name, want[a.ID])
		}
		if backdrops[a.Backdrop] {
			t.Errorf("avatar %s shares its backdrop colour", a.ID)
		}
		backdrops[a.Backdrop] = true
		if l, ok := Lookup(a.ID); !ok || l.ID != a.ID {
			t.Errorf("Lookup(%s) = %v, %v", a.ID, l.ID, ok)
		}
	}
	if _, ok := Lookup("ava_nobody"); ok {
		t.Error("Lookup(ava_nobody) found an avatar")
	}
}

// TestScenesDrawTheCataloguesColours: the pixels of each avatar's hair (top of the head)
// and top (a shoulder) are the colours of its catalogue entry, whose words GET /v1/avatars
// says (persona's TestAvatarDescriptionsMatchTheirDrawing checks words against colours).
func TestScenesDrawTheCataloguesColours(t *testing.T) {
	dst := NewFrame(w, h)
	for _, entry := range persona.Avatars {
		t.Run(entry.ID, func(t *testing.T) {
			a, ok := Lookup(entry.ID)
			if !ok {
				t.Fatalf("Lookup(%s) found nothing", entry.ID)
			}
			s := NewScene(a, persona.DefaultFraming, w, h)
			s.Draw(dst, 0, 0)
			p := s.Placement()
			for _, c := range []struct {
				what   string
				x, y   float64
				colour persona.Colour
			}{
				{"hair", p.CX, p.CY - 0.95*p.U, entry.Hair},
				{"top", p.CX - 1.5*p.U, p.CY + 2.5*p.U, entry.Top},
				{"backdrop", 2, 2, entry.Backdrop},
			} {
				got := at(dst, int(c.x), int(c.y))
				if want := toYCC(rgba(c.colour)); !near(got, want, 2) {
					t.Errorf("%s at (%.0f, %.0f) = %v, want %v (%s #%06x)", c.what, c.x, c.y, got, want, c.colour.Name, c.colour.RGB)
				}
			}
		})
	}
}

func near(a, b ycc, tol int) bool {
	d := func(x, y uint8) int { return max(int(x)-int(y), int(y)-int(x)) }
	return d(a.y, b.y) <= tol && d(a.cb, b.cb) <= tol && d(a.cr, b.cr) <= tol
}

func at(img *image.YCbCr, x, y int) ycc {
	c := img.YCbCrAt(x, y)
	return ycc{c.Y, c.Cb, c.Cr}
}

// skinBox returns the bounding box of pixels in the avatar's skin colour.
func skinBox(img *image.YCbCr, a Avatar) image.Rectangle {
	skin := toYCC(a.Skin)
	box := image.Rectangle{Min: image.Pt(w, h)}
	for y := 0; y < h; y += 2 {
		for x := 0; x < w; x += 2 {
			if near(at(img, x, y), skin, 2) {
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return box
}

func TestFramingPlacesAvatar(t *testing.T) {
	a, _ := Lookup("ava_theo")
	dst := NewFrame(w, h)
	heights := map[string]int{}
	for _, shot := range []string{"close_up", "medium", "wide"} {
		for _, pos := range []string{"left", "center", "right"} {
			NewScene(a, persona.Framing{Shot: shot, Position: pos}, w, h).Draw(dst, 0, 0)
			box := skinBox(dst, a)
			cx := (box.Min.X + box.Max.X) / 2
			third := map[string]int{"left": 0, "center": 1, "right": 2}[pos]
			if cx*3/w != third {
				t.Errorf("%s/%s: face centred at x=%d, want it in the %s third", shot, pos, cx, pos)
			}
			if pos == "center" {
				heights[shot] = box.Dy()
			}
			if !near(at(dst, 2, 2), toYCC(a.Backdrop), 2) {
				t.Errorf("%s/%s: corner is not the backdrop colour", shot, pos)
			}
		}
	}
	if !(heights["close_up"] > heights["medium"] && heights["medium"] > heights["wide"]) {
		t.Errorf("face heights close_up/medium/wide = %v, want decreasing", heights)
	}
}

func TestUnknownFramingFallsBackToMediumCenter(t *testing.T) {
	if got, want := Place(persona.Framing{Shot: "extreme", Position: ""}, w, h), Place(persona.Framing{Shot: "medium", Position: "center"}, w, h); got != want {
		t.Errorf("Place(unknown) = %+v, want %+v", got, want)
	}
}

// countIn counts pixels of colour c inside r.
func countIn(img *image.YCbCr, r image.Rectangle, c ycc) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if near(at(img, x, y), c, 3) {
				n++
			}
		}
	}
	return n
}

func TestMouthFollowsSpeech(t *testing.T) {
	for _, a := range Catalogue() {
		s := NewScene(a, persona.Framing{Shot: "close_up", Position: "center"}, w, h)
		p := s.Placement()
		mouth := image.Rect(int(p.CX-0.25*p.U), int(p.CY+0.3*p.U), int(p.CX+0.25*p.U), int(p.CY+0.7*p.U))
		dst := NewFrame(w, h)
		var open []int
		for _, m := range []float64{0, 0.5, 1} {
			s.Draw(dst, 0, m)
			open = append(open, countIn(dst, mouth, s.dark)+countIn(dst, mouth, s.lips))
		}
		if !(open[0] < open[1] && open[1] < open[2]) {
			t.Errorf("%s: mouth pixels at 0/0.5/1 = %v, want growing with loudness", a.ID, open)
		}
	}
}

func TestBlinks(t *testing.T) {
	var shut time.Duration = -1
	for ts := time.Duration(0); ts < 10*time.Second; ts += 10 * time.Millisecond {
		if Blink(ts) > 0.8 {
			shut = ts
			break
		}
	}
	if shut < 0 {
		t.Fatal("no blink in 10 s")
	}
	blinks := 0
	for ts, was := time.Duration(0), false; ts < 30*time.Second; ts += 10 * time.Millisecond {
		is := Blink(ts) > 0.5
		if is && !was {
			blinks++
		}
		was = is
	}
	if blinks < 5 || blinks > 10 {
		t.Errorf("%d blinks in 30 s, want one every 3 to 5 s", blinks)
	}

	a, _ := Lookup("ava_maya")
	s := NewScene(a, persona.Framing{Shot: "close_up", Position: "center"}, w, h)
	p := s.Placement()
	eyes := image.Rect(int(p.CX-0.5*p.U), int(p.CY-0.2*p.U), int(p.CX+0.5*p.U), int(p.CY+0.1*p.U))
	dst := NewFrame(w, h)
	s.Draw(dst, 0, 0)
	open := countIn(dst, eyes, s.white)
	s.Draw(dst, shut, 0)
	closed := countIn(dst, eyes, s.white)
	if closed*4 > open {
		t.Errorf("eye white pixels open/shut = %d/%d, want the lids to hide most of it", open, closed)
	}
}

func TestConnectingScreen(t *testing.T) {
	brand := persona.Brand{Name: "Acme Plumbing", Color: "#ff6a00"}
	c := NewConnecting(brand, nil, w, h)
	a, b := NewFrame(w, h), NewFrame(w, h)
	c.Draw(a, 0)
	c.Draw(b, 300*time.Millisecond)
	bg, _ := ParseColor(brand.Color)
	if !near(at(a, 4, 4), toYCC(bg), 2) || !near(at(a, w-5, h-5), toYCC(bg), 2) {
		t.Errorf("corners = %v %v, want the brand colour %v", at(a, 4, 4), at(a, w-5, h-5), toYCC(bg))
	}
	// The name is drawn in the upper middle of the frame.
	if n := countIn(a, image.Rect(w/8, h/4, w*7/8, h/2), c.bright); n < 500 {
		t.Errorf("%d pixels of text colour where the name goes, want the brand name", n)
	}
	diff := 0
	for i := range a.Y {
		if a.Y[i] != b.Y[i] {
			diff++
		}
	}
	if diff == 0 {
		t.Error("connecting screen does not animate")
	}
}

func TestParseColor(t *testing.T) {
	for in, ok := range map[string]bool{"#00ff7f": true, "#ABCDEF": true, "00ff7f": false, "#fff": false, "#gg0000": false, "": false} {
		if _, got := ParseColor(in); got != ok {
			t.Errorf("ParseColor(%q) ok = %v, want %v", in, got, ok)
		}
	}
	// A bad colour still gives a usable screen in the default colour.
	c := NewConnecting(persona.Brand{Name: "X", Color: "red"}, nil, w, h)
	dst := NewFrame(w, h)
	c.Draw(dst, 0)
	if !near(at(dst, 1, 1), toYCC(DefaultBrandColor), 2) {
		t.Errorf("corner = %v, want the default brand colour", at(dst, 1, 1))
	}
}

func BenchmarkSceneDraw(b *testing.B) {
	a, _ := Lookup("ava_iris")
	s := NewScene(a, persona.Framing{Shot: "medium", Position: "center"}, w, h)
	dst := NewFrame(w, h)
	for i := 0; b.Loop(); i++ {
		s.Draw(dst, time.Duration(i)*66*time.Millisecond, float64(i%10)/10)
	}
}

func BenchmarkConnectingDraw(b *testing.B) {
	c := NewConnecting(persona.Brand{Name: "Acme", Color: "#336699"}, nil, w, h)
	dst := NewFrame(w, h)
	for i := 0; b.Loop(); i++ {
		c.Draw(dst, time.Duration(i)*66*time.Millisecond)
	}
}
