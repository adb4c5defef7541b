package avatar

import (
	"image"
	"image/color"
	stddraw "image/draw"
	"math"
	"time"

	xdraw "golang.org/x/image/draw"

	"github.com/bridgeline/bridgeline/shared/avatars"
)

// Renderer is what the painter draws the avatar with: a built-in Scene or a customer's
// SheetScene.
type Renderer interface {
	// Draw renders the avatar at time t since it appeared, with the mouth open by mouth
	// (0 closed .. 1 wide open), into dst (a frame of the renderer's size).
	Draw(dst *image.YCbCr, t time.Duration, mouth float64)
	// Still sums up what Draw(t, mouth) shows: two equal Stills draw the same frame,
	// so the painter sends a still picture only at the idle rate.
	Still(t time.Duration, mouth float64) Still
}

// Still is what one frame of an avatar shows.
type Still struct {
	Blink, Mouth float64
	Idle         int
}

// Still of the built-in scene: the blink and the mouth, drawn continuously.
func (s *Scene) Still(t time.Duration, mouth float64) Still {
	return Still{Blink: Blink(t), Mouth: mouth}
}

// The viseme groups of a character sheet, picked by how open the mouth is (the speech's
// loudness, as the built-ins' mouths follow it): closed below MouthHalfAt, half open
// below MouthOpenAt, open above.
const (
	MouthHalfAt = 0.15
	MouthOpenAt = 0.5
	// EyesClosedAt is how shut Blink must say the eyes are for the eyes_closed frame.
	EyesClosedAt = 0.3
)

// MouthPart is the sheet's mouth shape for an opening of mouth.
func MouthPart(mouth float64) string {
	switch {
	case mouth >= MouthOpenAt:
		return avatars.PartMouthOpen
	case mouth >= MouthHalfAt:
		return avatars.PartMouthHalf
	}
	return avatars.PartMouthClosed
}

// Idle frames: every IdleEvery one of the sheet's idle frames shows for IdleFor, in
// turn, so a silent character still moves a little.
const (
	IdleEvery = 5 * time.Second
	IdleFor   = 1200 * time.Millisecond
)

// IdleFrame is which idle frame shows at t (1-based), 0 for none, for a sheet of n.
func IdleFrame(t time.Duration, n int) int {
	if n == 0 || t < IdleEvery {
		return 0
	}
	k := int(t / IdleEvery)
	if t-time.Duration(k)*IdleEvery >= IdleFor {
		return 0
	}
	return (k-1)%n + 1
}

// patch is an overlay scaled into the frame, in I420 terms: luma and alpha per pixel,
// chroma per 2x2 block, over the frame rectangle at.
type patch struct {
	at        image.Rectangle
	y, a      []uint8
	cb, cr    []uint8 // per pixel; sampled at even positions
	chromaMin uint8   // alpha a block needs to take the patch's chroma
}

// SheetScene draws a customer's character sheet: the base (with an idle frame over it
// now and then) scaled to fit the frame, the mouth shape of the moment and, at a blink,
// the eyes closed.
type SheetScene struct {
	w, h   int
	bases  []*image.YCbCr // [0] the base; [i] the base with idle_i over it
	mouths map[string]*patch
	eyes   *patch
}

// NewSheetScene prepares a sheet (its parts described by a, decoded in imgs) for a
// w x h frame. The base is scaled to fit the frame whole, centred; the bands left over
// take the colour of its top-left pixel.
func NewSheetScene(a avatars.Avatar, imgs map[string]image.Image, w, h int) *SheetScene {
	base := imgs[avatars.PartBase]
	bb := base.Bounds()
	k := math.Min(float64(w)/float64(bb.Dx()), float64(h)/float64(bb.Dy()))
	ox := (float64(w) - k*float64(bb.Dx())) / 2
	oy := (float64(h) - k*float64(bb.Dy())) / 2
	place := func(p avatars.Part) image.Rectangle {
		return image.Rect(int(math.Round(ox+k*float64(p.Anchor.X))), int(math.Round(oy+k*float64(p.Anchor.Y))),
			int(math.Round(ox+k*float64(p.Anchor.X+p.Width))), int(math.Round(oy+k*float64(p.Anchor.Y+p.Height))))
	}
	baseAt := image.Rect(int(math.Round(ox)), int(math.Round(oy)), int(math.Round(ox+k*float64(bb.Dx()))), int(math.Round(oy+k*float64(bb.Dy()))))

	rgba := image.NewRGBA(image.Rect(0, 0, w, h))
	band := color.RGBAModel.Convert(base.At(bb.Min.X, bb.Min.Y))
	stddraw.Draw(rgba, rgba.Bounds(), image.NewUniform(band), image.Point{}, stddraw.Src)
	xdraw.CatmullRom.Scale(rgba, baseAt, base, bb, xdraw.Src, nil)
	s := &SheetScene{w: w, h: h, bases: []*image.YCbCr{toI420(rgba)}, mouths: map[string]*patch{}}
	for i := 1; i <= avatars.MaxIdleFrames; i++ {
		p, ok := a.Part(avatars.IdlePart(i))
		img := imgs[p.Name]
		if !ok || img == nil {
			break
		}
		withIdle := image.NewRGBA(rgba.Bounds())
		copy(withIdle.Pix, rgba.Pix)
		xdraw.CatmullRom.Scale(withIdle, place(p), img, img.Bounds(), xdraw.Over, nil)
		s.bases = append(s.bases, toI420(withIdle))
	}
	for _, name := range avatars.MouthParts {
		if p, ok := a.Part(name); ok && imgs[name] != nil {
			s.mouths[name] = newPatch(imgs[name], place(p), w, h)
		}
	}
	if p, ok := a.Part(avatars.PartEyesClosed); ok && imgs[p.Name] != nil {
		s.eyes = newPatch(imgs[p.Name], place(p), w, h)
	}
	return s
}

// newPatch scales an overlay onto the frame rectangle at (clipped to the frame).
func newPatch(img image.Image, at image.Rectangle, w, h int) *patch {
	scaled := image.NewNRGBA(image.Rect(0, 0, at.Dx(), at.Dy()))
	xdraw.CatmullRom.Scale(scaled, scaled.Bounds(), img, img.Bounds(), xdraw.Src, nil)
	clip := at.Intersect(image.Rect(0, 0, w, h))
	p := &patch{at: clip, chromaMin: 128}
	n := clip.Dx() * clip.Dy()
	p.y, p.a, p.cb, p.cr = make([]uint8, n), make([]uint8, n), make([]uint8, n), make([]uint8, n)
	i := 0
	for y := clip.Min.Y; y < clip.Max.Y; y++ {
		for x := clip.Min.X; x < clip.Max.X; x++ {
			c := scaled.NRGBAAt(x-at.Min.X, y-at.Min.Y)
			p.y[i], p.cb[i], p.cr[i] = color.RGBToYCbCr(c.R, c.G, c.B)
			p.a[i] = c.A
			i++
		}
	}
	return p
}

// blend paints the patch over dst.
func (p *patch) blend(dst *image.YCbCr) {
	i := 0
	for y := p.at.Min.Y; y < p.at.Max.Y; y++ {
		row := dst.YOffset(p.at.Min.X, y)
		for x := p.at.Min.X; x < p.at.Max.X; x, i, row = x+1, i+1, row+1 {
			a := int(p.a[i])
			if a == 0 {
				continue
			}
			dst.Y[row] = uint8((int(dst.Y[row])*(255-a) + int(p.y[i])*a + 127) / 255)
			if x%2 == 0 && y%2 == 0 && p.a[i] >= p.chromaMin {
				ci := dst.COffset(x, y)
				dst.Cb[ci], dst.Cr[ci] = p.cb[i], p.cr[i]
			}
		}
	}
}

// toI420 converts an RGBA frame, chroma taken as the mean of each 2x2 block.
func toI420(src *image.RGBA) *image.YCbCr {
	r := src.Bounds()
	dst := NewFrame(r.Dx(), r.Dy())
	for y := 0; y < r.Dy(); y++ {
		for x := 0; x < r.Dx(); x++ {
			c := src.RGBAAt(x, y)
			dst.Y[dst.YOffset(x, y)], _, _ = color.RGBToYCbCr(c.R, c.G, c.B)
		}
	}
	for y := 0; y < r.Dy(); y += 2 {
		for x := 0; x < r.Dx(); x += 2 {
			var cb, cr, n int
			for _, d := range [4][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
				if x+d[0] >= r.Dx() || y+d[1] >= r.Dy() {
					continue
				}
				c := src.RGBAAt(x+d[0], y+d[1])
				_, b, rr := color.RGBToYCbCr(c.R, c.G, c.B)
				cb, cr, n = cb+int(b), cr+int(rr), n+1
			}
			i := dst.COffset(x, y)
			dst.Cb[i], dst.Cr[i] = uint8(cb/n), uint8(cr/n)
		}
	}
	return dst
}

// Still: which base, mouth shape and eyes the frame shows.
func (s *SheetScene) Still(t time.Duration, mouth float64) Still {
	st := Still{Idle: IdleFrame(t, len(s.bases)-1)}
	switch MouthPart(mouth) {
	case avatars.PartMouthHalf:
		st.Mouth = 1
	case avatars.PartMouthOpen:
		st.Mouth = 2
	}
	if Blink(t) >= EyesClosedAt {
		st.Blink = 1
	}
	return st
}

// Draw renders the sheet at t with the mouth open by mouth.
func (s *SheetScene) Draw(dst *image.YCbCr, t time.Duration, mouth float64) {
	st := s.Still(t, mouth)
	copyFrame(dst, s.bases[st.Idle])
	if m := s.mouths[MouthPart(mouth)]; m != nil {
		m.blend(dst)
	}
	if st.Blink == 1 && s.eyes != nil {
		s.eyes.blend(dst)
	}
}

// Size is the frame size the scene draws.
func (s *SheetScene) Size() (int, int) { return s.w, s.h }
