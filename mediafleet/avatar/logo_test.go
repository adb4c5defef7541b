package avatar

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"testing"

	"github.com/bridgeline/bridgeline/shared/persona"
)

// logoColor is far from the brand colour and from the text colours.
var logoColor = color.RGBA{0x10, 0xc0, 0x40, 0xff}

// twoToneLogo is a w x h logo: its right half logoColor, its left half transparent.
func twoToneLogo(t *testing.T, lw, lh int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, lw, lh))
	for y := range lh {
		for x := lw / 2; x < lw; x++ {
			img.Set(x, y, logoColor)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func decodeLogo(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := DecodeLogo(b)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// The logo is scaled to fit (keeping its shape), centred across the frame, above the
// name; its transparent part shows the brand colour, and a screen without it is as
// before.
func TestConnectingScreenLogo(t *testing.T) {
	brand := persona.Brand{Name: "Acme Plumbing", Color: "#ff6a00"}
	bgc, _ := ParseColor(brand.Color)
	bg, fg := toYCC(bgc), toYCC(logoColor)
	logo := decodeLogo(t, twoToneLogo(t, 400, 200))

	box := LogoBox(logo.Bounds(), true, w, h)
	if d := box.Dx() - 2*box.Dy(); d < -2 || d > 2 {
		t.Errorf("logo box %v, want the logo's 2:1 shape", box)
	}
	if c := box.Min.X + box.Dx()/2; c < w/2-1 || c > w/2+1 || box.Dx() > w/2 || box.Min.Y < 0 {
		t.Errorf("logo box %v, want it centred across the %dx%d frame, at most half its width", box, w, h)
	}
	// The name's letters start below 0.40h less its cap height (an eighth of the frame
	// tall, bold): the logo ends above them.
	if float64(box.Max.Y) > 0.40*h-0.1*h {
		t.Errorf("logo box %v reaches the name's line", box)
	}

	with, without := NewFrame(w, h), NewFrame(w, h)
	NewConnecting(brand, logo, w, h).Draw(with, 0)
	NewConnecting(brand, nil, w, h).Draw(without, 0)
	right := image.Rect(box.Min.X+box.Dx()/2+4, box.Min.Y+4, box.Max.X-4, box.Max.Y-4)
	left := image.Rect(box.Min.X+4, box.Min.Y+4, box.Min.X+box.Dx()/2-4, box.Max.Y-4)
	if n, all := countIn(with, right, fg), right.Dx()*right.Dy(); n < all*9/10 {
		t.Errorf("%d of %d pixels in the logo's opaque half are its colour %v", n, all, fg)
	}
	if n, all := countIn(with, left, bg), left.Dx()*left.Dy(); n < all*9/10 {
		t.Errorf("%d of %d pixels in the logo's transparent half show the brand colour", n, all)
	}
	if n := countIn(without, right, fg); n != 0 {
		t.Errorf("%d logo-coloured pixels on a screen without a logo", n)
	}
	if n := countIn(without, box, bg); n != box.Dx()*box.Dy() {
		t.Errorf("a screen without a logo has %d of %d brand-colour pixels where the logo would go", n, box.Dx()*box.Dy())
	}
	// The name is still drawn, below the logo.
	c := NewConnecting(brand, logo, w, h)
	if n := countIn(with, image.Rect(w/8, box.Max.Y, w*7/8, h/2), c.bright); n < 500 {
		t.Errorf("%d pixels of text colour below the logo, want the brand name", n)
	}
}

// With no name the logo takes a taller band, still centred above the ring of dots.
func TestConnectingScreenLogoWithoutName(t *testing.T) {
	logo := decodeLogo(t, twoToneLogo(t, 64, 64))
	named, alone := LogoBox(logo.Bounds(), true, w, h), LogoBox(logo.Bounds(), false, w, h)
	if alone.Dy() <= named.Dy() || float64(alone.Max.Y) > 0.66*h-0.075*h-0.02*h {
		t.Errorf("logo box alone %v (with a name %v): want it larger, above the dots", alone, named)
	}
	dst := NewFrame(w, h)
	NewConnecting(persona.Brand{Color: "#336699"}, logo, w, h).Draw(dst, 0)
	right := image.Rect(alone.Min.X+alone.Dx()/2+4, alone.Min.Y+4, alone.Max.X-4, alone.Max.Y-4)
	if n, all := countIn(dst, right, toYCC(logoColor)), right.Dx()*right.Dy(); n < all*9/10 {
		t.Errorf("%d of %d pixels of the logo's colour", n, all)
	}
}

// A logo is taken as PNG, JPEG or WebP, as its upload was, and nothing else.
func TestDecodeLogo(t *testing.T) {
	src := image.NewRGBA(image.Rect(0, 0, 48, 32))
	for i := range src.Pix {
		src.Pix[i] = []uint8{logoColor.R, logoColor.G, logoColor.B, 0xff}[i%4]
	}
	var jp bytes.Buffer
	if err := jpeg.Encode(&jp, src, nil); err != nil {
		t.Fatal(err)
	}
	webp, err := os.ReadFile("../../shared/avatars/testdata/mouth_half.webp") // 80x40, green
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		data []byte
		size image.Point
	}{
		"png":  {twoToneLogo(t, 40, 20), image.Pt(40, 20)},
		"jpeg": {jp.Bytes(), image.Pt(48, 32)},
		"webp": {webp, image.Pt(80, 40)},
	} {
		img, err := DecodeLogo(tc.data)
		if err != nil || img.Bounds().Size() != tc.size {
			t.Errorf("%s: DecodeLogo = %v, %v; want a %v image", name, img, err, tc.size)
		}
	}
	huge := image.NewGray(image.Rect(0, 0, 2000, 20))
	var big bytes.Buffer
	if err := png.Encode(&big, huge); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"garbage": []byte("not an image at all"),
		"svg":     []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`),
		"wide":    big.Bytes(),
		"cut":     twoToneLogo(t, 40, 20)[:60],
	} {
		if _, err := DecodeLogo(data); err == nil {
			t.Errorf("%s: DecodeLogo took it", name)
		}
	}
}

// A cached logo is the account's only while the job names the same file.
func TestLogoCache(t *testing.T) {
	var c LogoCache
	img := image.NewGray(image.Rect(0, 0, 1, 1))
	c.Put("acct_a", "sha1", img)
	if got, ok := c.Get("acct_a", "sha1"); !ok || got != img {
		t.Error("the logo put is not there")
	}
	if _, ok := c.Get("acct_a", "sha2"); ok {
		t.Error("a changed logo is served from the cache")
	}
	if _, ok := c.Get("acct_b", "sha1"); ok {
		t.Error("another account's logo is served")
	}
	for i := range logoCacheSize {
		c.Put(string(rune('A'+i)), "x", img)
	}
	if _, ok := c.Get("acct_a", "sha1"); ok {
		t.Error("the oldest logo is kept past the bound")
	}
}
