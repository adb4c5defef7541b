// Package avatars keeps the avatars customers bring: a character sheet (a base image,
// mouth shapes for the renderer's viseme groups, eyes closed for blinks, optional idle
// frames) uploaded once with POST /v1/avatars, validated here, its images kept in an
// asset store (a folder of the data directory locally, S3 on AWS) under account-scoped
// keys, and its description in the store. An avatar never changes once created, so a
// published version keeps the face it was published with; it can only be deleted, and
// not while a published version uses it.
package avatars

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/image/webp"

	"github.com/bridgeline/bridgeline/shared/apierr"
)

// The parts of a character sheet: each is one file field of the upload, named so.
const (
	PartBase        = "base"
	PartMouthClosed = "mouth_closed"
	PartMouthHalf   = "mouth_half"
	PartMouthOpen   = "mouth_open"
	PartEyesClosed  = "eyes_closed"
)

// MouthParts are the mouth shapes, one per viseme group the renderer draws, from closed
// (rest, M/B/P, and silence) through half open (most consonants, E, I) to open (A, O):
// the renderer picks one by how loud the speech is at each frame.
var MouthParts = []string{PartMouthClosed, PartMouthHalf, PartMouthOpen}

// RequiredParts must all be in a sheet.
var RequiredParts = []string{PartBase, PartMouthClosed, PartMouthHalf, PartMouthOpen, PartEyesClosed}

// MaxIdleFrames is how many idle frames (idle_1 .. idle_4) a sheet may have.
const MaxIdleFrames = 4

// IdlePart names the i-th idle frame (1-based).
func IdlePart(i int) string { return fmt.Sprintf("idle_%d", i) }

// Limits of a sheet.
const (
	MaxFileBytes    = 2 << 20 // one image file
	MaxUploadBytes  = 4 << 20 // the whole multipart request: under Lambda's 6 MB payload once base64-encoded
	MinBaseWidth    = 256
	MinBaseHeight   = 144
	MaxBaseWidth    = 1920
	MaxBaseHeight   = 1080
	MaxNameLen      = 80
	MaxPerAccount   = 20
	MinMouthPixels  = 16 // opaque pixels a mouth shape must have to be seen
	SheetField      = "sheet"
	FormatPNG       = "png"
	FormatWebP      = "webp"
	minFaceFraction = 16 // the face is at least 1/16 of the base's width and height
)

// Rect is a rectangle in the base image's pixels.
type Rect struct {
	X      int `json:"x"`
	Y      int `json:"y"`
	Width  int `json:"width"`
	Height int `json:"height"`
}

func (r Rect) image() image.Rectangle { return image.Rect(r.X, r.Y, r.X+r.Width, r.Y+r.Height) }

// Point is where an overlay's top-left corner sits on the base image, in its pixels.
type Point struct {
	X int `json:"x"`
	Y int `json:"y"`
}

// Manifest is the sheet's JSON field: the avatar's name, where the face is on the base
// image, and each overlay's anchor.
type Manifest struct {
	Name    string           `json:"name"`
	Face    *Rect            `json:"face"`
	Anchors map[string]Point `json:"anchors"`
}

// Part is one stored image of an avatar.
type Part struct {
	Name   string `json:"name"`
	Format string `json:"format"` // FormatPNG or FormatWebP
	Width  int    `json:"width"`
	Height int    `json:"height"`
	// Anchor is where the part's top-left sits on the base (0,0 for the base).
	Anchor Point `json:"anchor"`
	Bytes  int   `json:"bytes"`
}

// Sheet is a validated upload: the parts described, their files as sent, and decoded.
type Sheet struct {
	Name   string
	Face   Rect
	Parts  []Part
	Files  map[string][]byte
	Images map[string]image.Image
}

// ContentType is the type a part's file is served with.
func ContentType(format string) string {
	if format == FormatWebP {
		return "image/webp"
	}
	return "image/png"
}

// sniff tells a PNG or WebP file by its first bytes (a file's name or declared type says
// nothing reliable).
func sniff(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return FormatPNG
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return FormatWebP
	}
	return ""
}

// knownPart: a required part or an idle frame within the bound.
func knownPart(name string) bool {
	if slices.Contains(RequiredParts, name) {
		return true
	}
	for i := 1; i <= MaxIdleFrames; i++ {
		if name == IdlePart(i) {
			return true
		}
	}
	return false
}

// overlayParts lists a sheet's overlays in drawing order: mouths, eyes, idle frames.
func overlayParts(files map[string][]byte) []string {
	out := append([]string{}, MouthParts...)
	out = append(out, PartEyesClosed)
	for i := 1; i <= MaxIdleFrames; i++ {
		if _, ok := files[IdlePart(i)]; ok {
			out = append(out, IdlePart(i))
		}
	}
	return out
}

// Validate checks an upload, the sheet's JSON field and its files by field name, and
// returns it decoded. Each error names the part (its param) and says how to fix it.
func Validate(manifest []byte, files map[string][]byte) (Sheet, error) {
	var m Manifest
	if len(bytes.TrimSpace(manifest)) == 0 {
		return Sheet{}, apierr.Param(apierr.CodeParameterMissing, SheetField,
			`sheet is required: a JSON field {"name", "face": {x, y, width, height}, "anchors": {part: {x, y}}}`)
	}
	dec := json.NewDecoder(bytes.NewReader(manifest))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Sheet{}, apierr.Invalid(SheetField, "sheet is not valid JSON of the sheet's form: "+err.Error())
	}
	name := strings.TrimSpace(m.Name)
	if name == "" {
		return Sheet{}, apierr.Missing("sheet.name")
	}
	if utf8.RuneCountInString(name) > MaxNameLen || !utf8.ValidString(name) {
		return Sheet{}, apierr.Invalid("sheet.name", fmt.Sprintf("name must be at most %d characters", MaxNameLen))
	}
	if m.Face == nil {
		return Sheet{}, apierr.Param(apierr.CodeParameterMissing, "sheet.face",
			"sheet.face is required: the rectangle {x, y, width, height} of the face on the base image, in its pixels")
	}
	for name := range files {
		if !knownPart(name) {
			return Sheet{}, apierr.Param(apierr.CodeParameterUnknown, name, fmt.Sprintf(
				"%q is not a part of a character sheet: send base, mouth_closed, mouth_half, mouth_open, eyes_closed and at most %d idle frames idle_1..idle_%d",
				name, MaxIdleFrames, MaxIdleFrames))
		}
	}
	for name := range m.Anchors {
		if !knownPart(name) || name == PartBase {
			return Sheet{}, apierr.Param(apierr.CodeParameterUnknown, "sheet.anchors."+name,
				fmt.Sprintf("%q takes no anchor: anchors are for the mouth shapes, eyes_closed and idle frames", name))
		}
		if _, ok := files[name]; !ok {
			return Sheet{}, apierr.Invalid("sheet.anchors."+name, fmt.Sprintf("an anchor for %s, but no file %s was sent", name, name))
		}
	}
	for _, p := range RequiredParts {
		if _, ok := files[p]; !ok {
			return Sheet{}, apierr.Param(apierr.CodeParameterMissing, p, missingHint(p))
		}
	}
	s := Sheet{Name: name, Face: *m.Face, Files: files, Images: map[string]image.Image{}}
	base, part, err := DecodePart(PartBase, files[PartBase])
	if err != nil {
		return Sheet{}, err
	}
	bw, bh := part.Width, part.Height
	if bw < MinBaseWidth || bh < MinBaseHeight || bw > MaxBaseWidth || bh > MaxBaseHeight {
		return Sheet{}, apierr.Invalid(PartBase, fmt.Sprintf(
			"base is %dx%d; it must be from %dx%d to %dx%d pixels (the video is 16:9: 1280x720 fits best)",
			bw, bh, MinBaseWidth, MinBaseHeight, MaxBaseWidth, MaxBaseHeight))
	}
	if x, y, ok := firstTransparent(base); ok {
		return Sheet{}, apierr.Invalid(PartBase, fmt.Sprintf(
			"base has transparent pixels (the first at %d,%d); the base is the whole picture: flatten it onto its background", x, y))
	}
	s.Images[PartBase] = base
	s.Parts = append(s.Parts, part)

	f := m.Face
	face := f.image()
	if f.Width < bw/minFaceFraction || f.Height < bh/minFaceFraction || !face.In(image.Rect(0, 0, bw, bh)) {
		return Sheet{}, apierr.Invalid("sheet.face", fmt.Sprintf(
			"face %d,%d %dx%d must lie inside the %dx%d base and be at least %dx%d pixels", f.X, f.Y, f.Width, f.Height, bw, bh,
			bw/minFaceFraction, bh/minFaceFraction))
	}

	var mouthSize image.Point
	for _, name := range overlayParts(files) {
		img, part, err := DecodePart(name, files[name])
		if err != nil {
			return Sheet{}, err
		}
		a, ok := m.Anchors[name]
		if !ok {
			if !strings.HasPrefix(name, "idle_") {
				return Sheet{}, apierr.Param(apierr.CodeParameterMissing, "sheet.anchors."+name, fmt.Sprintf(
					"sheet.anchors.%s is required: the {x, y} on the base image where the top-left of %s sits", name, name))
			}
			a = Point{} // an idle frame without an anchor covers the base from its corner
		}
		part.Anchor = a
		at := image.Rect(a.X, a.Y, a.X+part.Width, a.Y+part.Height)
		if !at.In(image.Rect(0, 0, bw, bh)) {
			return Sheet{}, apierr.Invalid(name, fmt.Sprintf(
				"%s (%dx%d at %d,%d) reaches outside the %dx%d base: make it smaller or move its anchor", name, part.Width, part.Height, a.X, a.Y, bw, bh))
		}
		switch {
		case slices.Contains(MouthParts, name):
			if mouthSize == (image.Point{}) {
				mouthSize = at.Size()
			} else if at.Size() != mouthSize {
				return Sheet{}, apierr.Invalid(name, fmt.Sprintf(
					"%s is %dx%d but %s is %dx%d: export every mouth shape at the same size, so that they swap in place",
					name, part.Width, part.Height, MouthParts[0], mouthSize.X, mouthSize.Y))
			}
			if !at.In(face) {
				return Sheet{}, apierr.Invalid(name, fmt.Sprintf(
					"%s (%dx%d at %d,%d) is outside the face (%d,%d %dx%d): move its anchor onto the face or correct sheet.face",
					name, part.Width, part.Height, a.X, a.Y, f.X, f.Y, f.Width, f.Height))
			}
			if n := opaquePixels(img); n < MinMouthPixels {
				return Sheet{}, apierr.Invalid(name, fmt.Sprintf("%s is (almost) fully transparent: draw the mouth shape on it", name))
			}
		case name == PartEyesClosed:
			if !at.In(face) {
				return Sheet{}, apierr.Invalid(name, fmt.Sprintf(
					"%s (%dx%d at %d,%d) is outside the face (%d,%d %dx%d): move its anchor onto the eyes",
					name, part.Width, part.Height, a.X, a.Y, f.X, f.Y, f.Width, f.Height))
			}
			if n := opaquePixels(img); n < MinMouthPixels {
				return Sheet{}, apierr.Invalid(name, name+" is (almost) fully transparent: draw the closed eyes on it")
			}
		}
		s.Images[name] = img
		s.Parts = append(s.Parts, part)
	}
	return s, nil
}

func missingHint(p string) string {
	switch p {
	case PartBase:
		return "base is required: the whole picture (PNG or WebP, opaque), the character with its mouth closed and eyes open"
	case PartEyesClosed:
		return "eyes_closed is required: the eyes shut (PNG or WebP with transparency), drawn over the base at a blink"
	}
	return fmt.Sprintf("%s is required: each of mouth_closed, mouth_half and mouth_open (PNG or WebP with transparency, all the same size) is drawn over the base as the voice gets louder", p)
}

// DecodePart decodes one file after checking its size and format.
func DecodePart(name string, b []byte) (image.Image, Part, error) {
	if len(b) > MaxFileBytes {
		return nil, Part{}, apierr.Invalid(name, fmt.Sprintf("%s is %d bytes; a part may be at most %d (2 MiB): export it smaller or compress it", name, len(b), MaxFileBytes))
	}
	if len(b) == 0 {
		return nil, Part{}, apierr.Invalid(name, name+" is empty")
	}
	format := sniff(b)
	var cfg image.Config
	var err error
	switch format {
	case FormatPNG:
		cfg, err = png.DecodeConfig(bytes.NewReader(b))
	case FormatWebP:
		cfg, err = webp.DecodeConfig(bytes.NewReader(b))
	default:
		return nil, Part{}, apierr.Invalid(name, name+" is neither PNG nor WebP: export it as PNG (or WebP)")
	}
	if err != nil {
		return nil, Part{}, apierr.Invalid(name, fmt.Sprintf("%s is not a readable %s file: %v", name, strings.ToUpper(format), err))
	}
	// Checked before decoding, so a small file that claims a huge size costs nothing.
	if cfg.Width > MaxBaseWidth || cfg.Height > MaxBaseHeight || cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, Part{}, apierr.Invalid(name, fmt.Sprintf("%s is %dx%d; no part may be larger than %dx%d", name, cfg.Width, cfg.Height, MaxBaseWidth, MaxBaseHeight))
	}
	var img image.Image
	if format == FormatPNG {
		img, err = png.Decode(bytes.NewReader(b))
	} else {
		img, err = webp.Decode(bytes.NewReader(b))
	}
	if err != nil {
		return nil, Part{}, apierr.Invalid(name, fmt.Sprintf("%s is not a readable %s file: %v", name, strings.ToUpper(format), err))
	}
	r := img.Bounds()
	return img, Part{Name: name, Format: format, Width: r.Dx(), Height: r.Dy(), Bytes: len(b)}, nil
}

func firstTransparent(img image.Image) (int, int, bool) {
	if o, ok := img.(interface{ Opaque() bool }); ok && o.Opaque() {
		return 0, 0, false
	}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if _, _, _, a := img.At(x, y).RGBA(); a < 0xffff {
				return x - r.Min.X, y - r.Min.Y, true
			}
		}
	}
	return 0, 0, false
}

func opaquePixels(img image.Image) int {
	r := img.Bounds()
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if _, _, _, a := img.At(x, y).RGBA(); a >= 0x8000 {
				n++
			}
		}
	}
	return n
}
