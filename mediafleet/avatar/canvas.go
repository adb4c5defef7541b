package avatar

import (
	"image"
	"image/color"
	"math"
)

// canvas rasterises flat shapes straight into an I420 frame, so that no RGB frame or
// colour conversion is needed per video frame. Luma is sampled per pixel, chroma once per
// 2x2 block at its centre; edges get coverage from four luma subsamples, enough to keep
// curves from stair-stepping at 360p.
type canvas struct {
	img *image.YCbCr
}

type ycc struct{ y, cb, cr uint8 }

func toYCC(c color.RGBA) ycc {
	y, cb, cr := color.RGBToYCbCr(c.R, c.G, c.B)
	return ycc{y, cb, cr}
}

// shape reports coverage of a point: inside(x, y) for pixel-space coordinates.
type shape interface {
	bounds() (x0, y0, x1, y1 float64)
	inside(x, y float64) bool
}

type ellipse struct{ cx, cy, rx, ry float64 }

func (e ellipse) bounds() (float64, float64, float64, float64) {
	return e.cx - e.rx, e.cy - e.ry, e.cx + e.rx, e.cy + e.ry
}

func (e ellipse) inside(x, y float64) bool {
	if e.rx <= 0 || e.ry <= 0 {
		return false
	}
	dx, dy := (x-e.cx)/e.rx, (y-e.cy)/e.ry
	return dx*dx+dy*dy <= 1
}

// rrect is a rectangle with rounded corners of radius r.
type rrect struct{ x0, y0, x1, y1, r float64 }

func (q rrect) bounds() (float64, float64, float64, float64) { return q.x0, q.y0, q.x1, q.y1 }

func (q rrect) inside(x, y float64) bool {
	if x < q.x0 || x > q.x1 || y < q.y0 || y > q.y1 {
		return false
	}
	r := math.Min(q.r, math.Min((q.x1-q.x0)/2, (q.y1-q.y0)/2))
	cx := math.Max(q.x0+r, math.Min(x, q.x1-r))
	cy := math.Max(q.y0+r, math.Min(y, q.y1-r))
	dx, dy := x-cx, y-cy
	return dx*dx+dy*dy <= r*r
}

// clipped keeps the part of s inside the rectangle (used for the eyelid and hair fringe).
type clipped struct {
	s              shape
	x0, y0, x1, y1 float64
}

func (c clipped) bounds() (float64, float64, float64, float64) {
	a, b, d, e := c.s.bounds()
	return math.Max(a, c.x0), math.Max(b, c.y0), math.Min(d, c.x1), math.Min(e, c.y1)
}

func (c clipped) inside(x, y float64) bool {
	return x >= c.x0 && x <= c.x1 && y >= c.y0 && y <= c.y1 && c.s.inside(x, y)
}

// fill paints s in col.
func (c canvas) fill(s shape, col ycc) {
	r := c.img.Rect
	bx0, by0, bx1, by1 := s.bounds()
	x0 := max(r.Min.X, int(math.Floor(bx0)))
	y0 := max(r.Min.Y, int(math.Floor(by0)))
	x1 := min(r.Max.X, int(math.Ceil(bx1))+1)
	y1 := min(r.Max.Y, int(math.Ceil(by1))+1)
	if x0 >= x1 || y0 >= y1 {
		return
	}
	for y := y0; y < y1; y++ {
		row := c.img.Y[(y-r.Min.Y)*c.img.YStride:]
		for x := x0; x < x1; x++ {
			n := 0
			for _, o := range [4][2]float64{{0.25, 0.25}, {0.75, 0.25}, {0.25, 0.75}, {0.75, 0.75}} {
				if s.inside(float64(x)+o[0], float64(y)+o[1]) {
					n++
				}
			}
			if n == 0 {
				continue
			}
			i := x - r.Min.X
			row[i] = uint8((int(row[i])*(4-n) + int(col.y)*n + 2) / 4)
		}
	}
	for y := y0 &^ 1; y < y1; y += 2 {
		for x := x0 &^ 1; x < x1; x += 2 {
			if !s.inside(float64(x)+1, float64(y)+1) {
				continue
			}
			i := c.img.COffset(x, y)
			c.img.Cb[i], c.img.Cr[i] = col.cb, col.cr
		}
	}
}

// clear paints the whole frame.
func (c canvas) clear(col ycc) {
	for i := range c.img.Y {
		c.img.Y[i] = col.y
	}
	for i := range c.img.Cb {
		c.img.Cb[i], c.img.Cr[i] = col.cb, col.cr
	}
}

// blendMask paints col where mask (same size as the frame, offset by at) is opaque.
func (c canvas) blendMask(mask *image.Alpha, at image.Point, col ycc) {
	r := c.img.Rect
	mb := mask.Rect
	for y := mb.Min.Y; y < mb.Max.Y; y++ {
		fy := y + at.Y
		if fy < r.Min.Y || fy >= r.Max.Y {
			continue
		}
		for x := mb.Min.X; x < mb.Max.X; x++ {
			fx := x + at.X
			if fx < r.Min.X || fx >= r.Max.X {
				continue
			}
			a := int(mask.Pix[mask.PixOffset(x, y)])
			if a == 0 {
				continue
			}
			i := c.img.YOffset(fx, fy)
			c.img.Y[i] = uint8((int(c.img.Y[i])*(255-a) + int(col.y)*a + 127) / 255)
			if fx%2 == 0 && fy%2 == 0 && a > 96 {
				ci := c.img.COffset(fx, fy)
				c.img.Cb[ci], c.img.Cr[ci] = col.cb, col.cr
			}
		}
	}
}

func copyFrame(dst, src *image.YCbCr) {
	copy(dst.Y, src.Y)
	copy(dst.Cb, src.Cb)
	copy(dst.Cr, src.Cr)
}

// NewFrame allocates an I420 frame of the given size.
func NewFrame(w, h int) *image.YCbCr {
	return image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
}
