package avatar

import (
	"image"
	"image/color"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

	"github.com/bridgeline/bridgeline/shared/persona"
)

// DefaultBrandColor is used when a job's brand colour is missing or not #rrggbb.
var DefaultBrandColor = rgb(0x1b2a4a)

// ParseColor reads "#rrggbb"; ok is false for anything else.
func ParseColor(s string) (color.RGBA, bool) {
	s = strings.TrimSpace(s)
	if len(s) != 7 || s[0] != '#' {
		return color.RGBA{}, false
	}
	v, err := strconv.ParseUint(s[1:], 16, 32)
	if err != nil {
		return color.RGBA{}, false
	}
	return rgb(uint32(v)), true
}

// spinnerDots is how many dots the connecting animation runs round.
const spinnerDots = 8

// Connecting draws the branded connecting screen: the account's colour filling the frame,
// its name, and a ring of dots with one bright dot going round once a second.
type Connecting struct {
	base   *image.YCbCr
	bright ycc
	dim    ycc
	cx, cy float64
	ring   float64
	dot    float64
}

// NewConnecting prepares the connecting screen for brand in a w x h frame.
func NewConnecting(brand persona.Brand, w, h int) *Connecting {
	bg, ok := ParseColor(brand.Color)
	if !ok {
		bg = DefaultBrandColor
	}
	fg := rgb(0xffffff)
	if luminance(bg) > 0.6 {
		fg = rgb(0x15151a)
	}
	c := &Connecting{
		base: NewFrame(w, h), bright: toYCC(fg), dim: toYCC(blend(bg, fg, 0.35)),
		cx: float64(w) / 2, cy: 0.66 * float64(h), ring: 0.075 * float64(h), dot: 0.014 * float64(h),
	}
	cv := canvas{c.base}
	cv.clear(toYCC(bg))
	fh := float64(h)
	if name := strings.TrimSpace(brand.Name); name != "" {
		drawText(cv, name, boldFont(), fh/8, 0.9*float64(w), 0.40*fh, toYCC(fg))
	}
	drawText(cv, "Connecting", regularFont(), fh/20, 0.9*float64(w), 0.86*fh, c.dim)
	return c
}

func luminance(c color.RGBA) float64 {
	return (0.2126*float64(c.R) + 0.7152*float64(c.G) + 0.0722*float64(c.B)) / 255
}

// Draw renders the screen at time t since it first showed into dst.
func (c *Connecting) Draw(dst *image.YCbCr, t time.Duration) {
	copyFrame(dst, c.base)
	cv := canvas{dst}
	lead := int(t/(time.Second/spinnerDots)) % spinnerDots
	for i := range spinnerDots {
		a := 2*math.Pi*float64(i)/spinnerDots - math.Pi/2
		col := c.dim
		r := c.dot
		if i == lead {
			col, r = c.bright, 1.35*c.dot
		}
		cv.fill(ellipse{c.cx + c.ring*math.Cos(a), c.cy + c.ring*math.Sin(a), r, r}, col)
	}
}

var (
	fontsOnce         sync.Once
	boldTT, regularTT *opentype.Font
)

func loadFonts() {
	var err error
	if boldTT, err = opentype.Parse(gobold.TTF); err != nil {
		panic(err) // the font is compiled in; failing to parse it is a build defect
	}
	if regularTT, err = opentype.Parse(goregular.TTF); err != nil {
		panic(err)
	}
}

func boldFont() *opentype.Font    { fontsOnce.Do(loadFonts); return boldTT }
func regularFont() *opentype.Font { fontsOnce.Do(loadFonts); return regularTT }

// drawText centres text horizontally with its baseline at y, shrinking the size until it
// fits maxWidth.
func drawText(cv canvas, text string, f *opentype.Font, size, maxWidth, y float64, col ycc) {
	var face font.Face
	var width fixed.Int26_6
	for ; size >= 8; size *= 0.9 {
		var err error
		face, err = opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
		if err != nil {
			return
		}
		width = font.MeasureString(face, text)
		if float64(width.Ceil()) <= maxWidth {
			break
		}
		face.Close()
		face = nil
	}
	if face == nil {
		return
	}
	defer face.Close()
	r := cv.img.Rect
	mask := image.NewAlpha(r)
	d := font.Drawer{
		Dst:  mask,
		Src:  image.Opaque,
		Face: face,
		Dot:  fixed.P(int((float64(r.Dx())-float64(width.Ceil()))/2), int(y)),
	}
	d.DrawString(text)
	cv.blendMask(mask, image.Point{}, col)
}
