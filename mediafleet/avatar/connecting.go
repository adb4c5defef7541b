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
// its logo (when it has one) centred above its name, and a ring of dots with one bright
// dot going round once a second.
type Connecting struct {
	base   *image.YCbCr
	bright ycc
	dim    ycc
	cx, cy float64
	ring   float64
	dot    float64
}

// NewConnecting prepares the connecting screen for brand in a w x h frame; logo is the
// account's decoded logo (DecodeLogo), nil for none.
func NewConnecting(brand persona.Brand, logo image.Image, w, h int) *Connecting {
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
	name := strings.TrimSpace(brand.Name)
	if logo != nil {
		newPatch(logo, LogoBox(logo.Bounds(), name != "", w, h), w, h).blend(c.base)
	}
	if name != "" {
		drawText(cv, name, boldFont(), fh/8, 0.9*float64(w), 0.40*fh, toYCC(fg))
	}
	drawText(cv, "Connecting", regularFont(), fh/20, 0.9*float64(w), 0.86*fh, c.dim)
	return c
}

// LogoBox is where a logo of size src goes on a w x h connecting screen: scaled to fit
// (keeping its shape) a band half the frame wide, centred, above the name's line (or,
// with no name, a taller band above the ring of dots).
func LogoBox(src image.Rectangle, withName bool, w, h int) image.Rectangle {
	fw, fh := float64(w), float64(h)
	top, bottom := 0.07*fh, 0.29*fh
	if !withName {
		top, bottom = 0.10*fh, 0.48*fh
	}
	bw, bh := 0.5*fw, bottom-top
	if src.Dx() <= 0 || src.Dy() <= 0 {
		return image.Rectangle{}
	}
	scale := math.Min(bw/float64(src.Dx()), bh/float64(src.Dy()))
	lw, lh := max(1, int(math.Round(scale*float64(src.Dx())))), max(1, int(math.Round(scale*float64(src.Dy()))))
	x0 := (w - lw) / 2
	y0 := int(math.Round(top + (bh-float64(lh))/2))
	return image.Rect(x0, y0, x0+lw, y0+lh)
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
