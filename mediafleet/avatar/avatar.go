// Package avatar draws what a video caller sees from a persona worker: the branded
// connecting screen and the built-in avatars, placed by the assistant version's framing,
// blinking, with the mouth opening as the speech gets louder. Everything is drawn from
// shapes and colours defined here (no image assets), straight into I420 frames ready for
// the VP8 encoder.
package avatar

import (
	"image"
	"image/color"
	"math"
	"time"

	"github.com/bridgeline/bridgeline/shared/persona"
)

// Hair styles of the built-in avatars (persona.Avatar.HairStyle).
const (
	HairLong  = persona.HairLong
	HairShort = persona.HairShort
	HairBob   = persona.HairBob
)

// Avatar is one built-in persona look, ready to draw: the colours of its catalogue entry
// (persona.Avatars) as RGBA.
type Avatar struct {
	ID       string
	Name     string
	Backdrop color.RGBA
	Skin     color.RGBA
	Hair     color.RGBA
	Shirt    color.RGBA
	Eyes     color.RGBA
	Lips     color.RGBA
	Style    string
}

// fromCatalogue is the drawing of a catalogue entry: every colour and the hair style come
// from it, so what GET /v1/avatars describes is what is drawn.
func fromCatalogue(a persona.Avatar) Avatar {
	return Avatar{
		ID: a.ID, Name: a.Name, Style: a.HairStyle,
		Backdrop: rgba(a.Backdrop), Skin: rgba(a.Skin), Hair: rgba(a.Hair), Shirt: rgba(a.Top),
		Eyes: rgba(a.Eyes), Lips: rgba(a.Lips),
	}
}

func rgba(c persona.Colour) color.RGBA {
	r, g, b := c.Channels()
	return color.RGBA{r, g, b, 0xff}
}

func rgb(v uint32) color.RGBA { return rgba(persona.Colour{RGB: v}) }

// Catalogue lists the built-in avatars, in the catalogue's order (persona.Avatars).
func Catalogue() []Avatar {
	out := make([]Avatar, 0, len(persona.Avatars))
	for _, a := range persona.Avatars {
		out = append(out, fromCatalogue(a))
	}
	return out
}

// Lookup finds a built-in avatar by id.
func Lookup(id string) (Avatar, bool) {
	a, ok := persona.AvatarByID(id)
	if !ok {
		return Avatar{}, false
	}
	return fromCatalogue(a), true
}

// Default is the avatar used when a job names one this worker does not know (a newer
// catalogue on the control plane than in the fleet): the catalogue's first.
func Default() Avatar { return fromCatalogue(persona.Avatars[0]) }

// Placement is where framing puts the head: its centre and its vertical radius, in pixels.
type Placement struct {
	CX, CY, U float64
}

// Place resolves framing for a w x h frame. Unknown values fall back to the API's
// defaults (persona.DefaultFraming: medium, center).
func Place(f persona.Framing, w, h int) Placement {
	fw, fh := float64(w), float64(h)
	p := Placement{CX: fw / 2, CY: 0.38 * fh, U: 0.19 * fh}
	switch f.Shot {
	case persona.ShotCloseUp:
		p.CY, p.U = 0.50*fh, 0.36*fh
	case persona.ShotWide:
		p.CY, p.U = 0.42*fh, 0.11*fh
	}
	switch f.Position {
	case persona.PositionLeft:
		p.CX = 0.28 * fw
	case persona.PositionRight:
		p.CX = 0.72 * fw
	}
	return p
}

// Scene draws one avatar with one framing. The still parts are drawn once; each frame
// copies them and adds the eyes and mouth.
type Scene struct {
	a     Avatar
	p     Placement
	base  *image.YCbCr
	skin  ycc
	eyes  ycc
	lips  ycc
	white ycc
	dark  ycc
	brow  ycc
}

// NewScene prepares avatar a framed by f in a w x h frame.
func NewScene(a Avatar, f persona.Framing, w, h int) *Scene {
	s := &Scene{
		a: a, p: Place(f, w, h), base: NewFrame(w, h),
		skin: toYCC(a.Skin), eyes: toYCC(a.Eyes), lips: toYCC(a.Lips),
		white: toYCC(rgb(0xf7f5f0)), dark: toYCC(rgb(0x3a1618)), brow: toYCC(shade(a.Hair, 0.8)),
	}
	s.drawStill(canvas{s.base})
	return s
}

// Placement is where this scene's head sits.
func (s *Scene) Placement() Placement { return s.p }

func shade(c color.RGBA, k float64) color.RGBA {
	f := func(v uint8) uint8 { return uint8(math.Max(0, math.Min(255, float64(v)*k))) }
	return color.RGBA{f(c.R), f(c.G), f(c.B), 0xff}
}

func (s *Scene) drawStill(c canvas) {
	a, p := s.a, s.p
	cx, cy, u := p.CX, p.CY, p.U
	hair := toYCC(a.Hair)
	c.clear(toYCC(a.Backdrop))

	// Hair that falls behind the head and shoulders.
	switch a.Style {
	case HairLong:
		c.fill(rrect{cx - 0.98*u, cy - 0.6*u, cx + 0.98*u, cy + 1.75*u, 0.5 * u}, hair)
	case HairBob:
		c.fill(clipped{ellipse{cx, cy + 0.05*u, 0.97 * u, 1.04 * u}, cx - 2*u, cy - 2*u, cx + 2*u, cy + 0.78*u}, hair)
	}
	// Shoulders, neck and neckline.
	c.fill(rrect{cx - 1.9*u, cy + 1.2*u, cx + 1.9*u, cy + 6*u, 0.8 * u}, toYCC(a.Shirt))
	c.fill(rrect{cx - 0.3*u, cy + 0.55*u, cx + 0.3*u, cy + 1.3*u, 0.1 * u}, toYCC(shade(a.Skin, 0.9)))
	c.fill(clipped{ellipse{cx, cy + 1.2*u, 0.34 * u, 0.32 * u}, cx - u, cy + 1.2*u, cx + u, cy + 2*u}, toYCC(shade(a.Skin, 0.9)))
	if a.Style == HairLong {
		// Strands over the shoulders, in front of the shirt.
		for _, sx := range []float64{-1, 1} {
			c.fill(rrect{cx + sx*0.98*u - 0.22*u, cy + 0.4*u, cx + sx*0.98*u + 0.22*u, cy + 2.1*u, 0.2 * u}, hair)
		}
	}
	// Ears and head.
	for _, sx := range []float64{-1, 1} {
		c.fill(ellipse{cx + sx*0.76*u, cy + 0.05*u, 0.12 * u, 0.2 * u}, toYCC(shade(a.Skin, 0.93)))
	}
	c.fill(ellipse{cx, cy, 0.78 * u, u}, s.skin)
	// Hair on top.
	switch a.Style {
	case HairLong:
		c.fill(clipped{ellipse{cx, cy - 0.3*u, 0.84 * u, 0.78 * u}, cx - 2*u, cy - 2*u, cx + 2*u, cy - 0.42*u}, hair)
	case HairShort:
		c.fill(clipped{ellipse{cx, cy - 0.28*u, 0.82 * u, 0.8 * u}, cx - 2*u, cy - 2*u, cx + 2*u, cy - 0.5*u}, hair)
		for _, sx := range []float64{-1, 1} {
			c.fill(rrect{cx + sx*0.72*u - 0.07*u, cy - 0.55*u, cx + sx*0.72*u + 0.07*u, cy - 0.05*u, 0.05 * u}, hair)
		}
	case HairBob:
		c.fill(clipped{ellipse{cx, cy - 0.25*u, 0.86 * u, 0.82 * u}, cx - 2*u, cy - 2*u, cx + 2*u, cy - 0.36*u}, hair)
	}
	// Brows, nose, cheeks.
	for _, sx := range []float64{-1, 1} {
		ex := cx + sx*0.3*u
		c.fill(rrect{ex - 0.15*u, cy - 0.27*u, ex + 0.15*u, cy - 0.21*u, 0.03 * u}, s.brow)
		c.fill(ellipse{cx + sx*0.45*u, cy + 0.3*u, 0.12 * u, 0.07 * u}, toYCC(blend(a.Skin, rgb(0xe06070), 0.18)))
	}
	c.fill(ellipse{cx, cy + 0.2*u, 0.08 * u, 0.06 * u}, toYCC(shade(a.Skin, 0.82)))
}

func blend(a, b color.RGBA, k float64) color.RGBA {
	m := func(x, y uint8) uint8 { return uint8(float64(x)*(1-k) + float64(y)*k) }
	return color.RGBA{m(a.R, b.R), m(a.G, b.G), m(a.B, b.B), 0xff}
}

// Draw renders the avatar at time t since it appeared, with the mouth open by mouth
// (0 closed .. 1 wide open), into dst (a frame of the scene's size).
func (s *Scene) Draw(dst *image.YCbCr, t time.Duration, mouth float64) {
	copyFrame(dst, s.base)
	c := canvas{dst}
	cx, cy, u := s.p.CX, s.p.CY, s.p.U
	closed := Blink(t)
	for _, sx := range []float64{-1, 1} {
		ex, ey := cx+sx*0.3*u, cy-0.05*u
		c.fill(ellipse{ex, ey, 0.15 * u, 0.1 * u}, s.white)
		c.fill(ellipse{ex, ey, 0.075 * u, 0.075 * u}, s.eyes)
		c.fill(ellipse{ex, ey, 0.035 * u, 0.035 * u}, toYCC(rgb(0x111111)))
		c.fill(ellipse{ex + 0.03*u, ey - 0.03*u, 0.015 * u, 0.015 * u}, s.white)
		if closed > 0 {
			// The lid comes down from the top of the eye.
			lid := ellipse{ex, ey, 0.17 * u, 0.12 * u}
			c.fill(clipped{lid, ex - u, ey - u, ex + u, ey - 0.12*u + 0.24*u*closed}, s.skin)
		}
	}
	mouth = math.Max(0, math.Min(1, mouth))
	my := cy + 0.5*u
	c.fill(ellipse{cx, my, 0.2 * u, 0.045*u + 0.11*u*mouth}, s.lips)
	if mouth > 0.05 {
		inner := ellipse{cx, my, 0.15 * u, 0.1 * u * mouth}
		c.fill(inner, s.dark)
		if mouth > 0.3 {
			c.fill(clipped{inner, cx - u, my - u, cx + u, my - 0.06*u*mouth}, s.white)
		}
	} else {
		c.fill(rrect{cx - 0.16*u, my - 0.008*u, cx + 0.16*u, my + 0.008*u, 0.004 * u}, s.dark)
	}
}

// Blink returns how closed the eyes are at t (0 open, 1 shut): a 160 ms blink every 3 to
// 5 seconds, on a fixed pseudo-random schedule.
func Blink(t time.Duration) float64 {
	const period = 4 * time.Second
	k := int64(t / period)
	jitter := math.Abs(math.Sin(float64(k)*12.9898+78.233)) * 43758.5453
	jitter -= math.Floor(jitter)
	start := time.Duration(k)*period + time.Duration((0.5+2.5*jitter)*float64(time.Second))
	d := t - start
	const blink = 160 * time.Millisecond
	if d < 0 || d >= blink {
		return 0
	}
	x := float64(d) / float64(blink) // 0..1, shut at the middle
	return 1 - math.Abs(2*x-1)
}
