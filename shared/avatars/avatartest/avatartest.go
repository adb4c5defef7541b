// Package avatartest makes character sheets for tests: generated PNGs with one distinct
// colour per part, so that a rendered frame tells which part is showing.
package avatartest

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
)

// The colours of Sheet's parts.
var (
	Backdrop    = color.RGBA{0x20, 0x40, 0xa0, 0xff} // base, outside the face
	Skin        = color.RGBA{0xe0, 0xb0, 0x80, 0xff} // base, the face
	MouthClosed = color.RGBA{0xc0, 0x10, 0x10, 0xff}
	MouthHalf   = color.RGBA{0x10, 0xb0, 0x10, 0xff}
	MouthOpen   = color.RGBA{0xf0, 0xe0, 0x10, 0xff}
	EyesClosed  = color.RGBA{0xd0, 0x10, 0xd0, 0xff}
	Idle        = color.RGBA{0x10, 0xd0, 0xd0, 0xff}
)

// The geometry of Sheet, in the base's pixels.
const (
	BaseW, BaseH   = 640, 360
	FaceX, FaceY   = 220, 40
	FaceW, FaceH   = 200, 260
	MouthX, MouthY = 280, 220
	MouthW, MouthH = 80, 40
	EyesX, EyesY   = 250, 120
	EyesW, EyesH   = 140, 30
	IdleX, IdleY   = 20, 20
	IdleW, IdleH   = 40, 40
)

// Solid is a w x h image of one colour.
func Solid(w, h int, c color.RGBA) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	return img
}

// Base is the backdrop with the face drawn on it.
func Base() *image.NRGBA {
	img := Solid(BaseW, BaseH, Backdrop)
	for y := FaceY; y < FaceY+FaceH; y++ {
		for x := FaceX; x < FaceX+FaceW; x++ {
			img.SetNRGBA(x, y, color.NRGBA(Skin))
		}
	}
	return img
}

// Overlay is a w x h image of colour c with a transparent border of 2 pixels, as a
// designer's exported shape has.
func Overlay(w, h int, c color.RGBA) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 2; y < h-2; y++ {
		for x := 2; x < w-2; x++ {
			img.SetNRGBA(x, y, color.NRGBA(c))
		}
	}
	return img
}

// PNG encodes img.
func PNG(img image.Image) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// Manifest is the sheet JSON field, as a map a test may change.
func Manifest() map[string]any {
	return map[string]any{
		"name": "Test mascot",
		"face": map[string]int{"x": FaceX, "y": FaceY, "width": FaceW, "height": FaceH},
		"anchors": map[string]any{
			"mouth_closed": map[string]int{"x": MouthX, "y": MouthY},
			"mouth_half":   map[string]int{"x": MouthX, "y": MouthY},
			"mouth_open":   map[string]int{"x": MouthX, "y": MouthY},
			"eyes_closed":  map[string]int{"x": EyesX, "y": EyesY},
			"idle_1":       map[string]int{"x": IdleX, "y": IdleY},
		},
	}
}

// Files are the sheet's files by part name.
func Files() map[string][]byte {
	return map[string][]byte{
		"base":         PNG(Base()),
		"mouth_closed": PNG(Overlay(MouthW, MouthH, MouthClosed)),
		"mouth_half":   PNG(Overlay(MouthW, MouthH, MouthHalf)),
		"mouth_open":   PNG(Overlay(MouthW, MouthH, MouthOpen)),
		"eyes_closed":  PNG(Overlay(EyesW, EyesH, EyesClosed)),
		"idle_1":       PNG(Overlay(IdleW, IdleH, Idle)),
	}
}

// JSON encodes a manifest.
func JSON(m map[string]any) []byte {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}
