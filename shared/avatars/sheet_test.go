package avatars_test

import (
	"bytes"
	"image/color"
	"image/jpeg"
	"os"
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/avatars"
	"github.com/bridgeline/bridgeline/shared/avatars/avatartest"
)

func TestValidateGoodSheet(t *testing.T) {
	s, err := avatars.Validate(avatartest.JSON(avatartest.Manifest()), avatartest.Files())
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "Test mascot" || len(s.Parts) != 6 || len(s.Images) != 6 {
		t.Fatalf("sheet %q with %d parts, %d images; want Test mascot, 6, 6", s.Name, len(s.Parts), len(s.Images))
	}
	for _, p := range s.Parts {
		if p.Format != avatars.FormatPNG || p.Bytes != len(avatartest.Files()[p.Name]) {
			t.Errorf("part %+v", p)
		}
	}
	if p, _ := (avatars.Avatar{Parts: s.Parts}).Part("mouth_open"); p.Anchor != (avatars.Point{X: avatartest.MouthX, Y: avatartest.MouthY}) {
		t.Errorf("mouth_open anchor %+v", p.Anchor)
	}
}

// What a designer gets wrong, each answered with the part named and the fix.
func TestValidateBadSheets(t *testing.T) {
	jpg := func() []byte {
		var b bytes.Buffer
		jpeg.Encode(&b, avatartest.Base(), nil)
		return b.Bytes()
	}
	anchor := func(m map[string]any, part string, x, y int) {
		m["anchors"].(map[string]any)[part] = map[string]int{"x": x, "y": y}
	}
	cases := []struct {
		name      string
		edit      func(m map[string]any, f map[string][]byte)
		code      string
		param     string
		mentioned string
	}{
		{"missing mouth shape", func(m map[string]any, f map[string][]byte) {
			delete(f, "mouth_half")
			delete(m["anchors"].(map[string]any), "mouth_half")
		}, apierr.CodeParameterMissing, "mouth_half", "mouth_half is required"},
		{"missing eyes", func(m map[string]any, f map[string][]byte) {
			delete(f, "eyes_closed")
			delete(m["anchors"].(map[string]any), "eyes_closed")
		}, apierr.CodeParameterMissing, "eyes_closed", "blink"},
		{"missing base", func(m map[string]any, f map[string][]byte) { delete(f, "base") }, apierr.CodeParameterMissing, "base", "base is required"},
		{"no sheet field", nil, apierr.CodeParameterMissing, "sheet", "sheet is required"},
		{"sheet not JSON", func(m map[string]any, f map[string][]byte) { m["face"] = "middle" }, apierr.CodeParameterInvalid, "sheet", "JSON"},
		{"no face", func(m map[string]any, f map[string][]byte) { delete(m, "face") }, apierr.CodeParameterMissing, "sheet.face", "rectangle"},
		{"no name", func(m map[string]any, f map[string][]byte) { m["name"] = " " }, apierr.CodeParameterMissing, "sheet.name", ""},
		{"long name", func(m map[string]any, f map[string][]byte) { m["name"] = strings.Repeat("x", 81) }, apierr.CodeParameterInvalid, "sheet.name", "80"},
		{"jpeg base", func(m map[string]any, f map[string][]byte) { f["base"] = jpg() }, apierr.CodeParameterInvalid, "base", "neither PNG nor WebP"},
		{"truncated png", func(m map[string]any, f map[string][]byte) { f["mouth_open"] = f["mouth_open"][:60] }, apierr.CodeParameterInvalid, "mouth_open", "not a readable PNG"},
		{"base too small", func(m map[string]any, f map[string][]byte) {
			f["base"] = avatartest.PNG(avatartest.Solid(200, 100, avatartest.Backdrop))
		}, apierr.CodeParameterInvalid, "base", "200x100"},
		{"base too large", func(m map[string]any, f map[string][]byte) {
			f["base"] = avatartest.PNG(avatartest.Solid(2000, 1000, avatartest.Backdrop))
		}, apierr.CodeParameterInvalid, "base", "no part may be larger than 1920x1080"},
		{"file too large", func(m map[string]any, f map[string][]byte) {
			f["idle_1"] = append(f["idle_1"], make([]byte, avatars.MaxFileBytes)...)
		}, apierr.CodeParameterInvalid, "idle_1", "2 MiB"},
		{"transparent base", func(m map[string]any, f map[string][]byte) {
			f["base"] = avatartest.PNG(avatartest.Overlay(640, 360, avatartest.Backdrop))
		}, apierr.CodeParameterInvalid, "base", "flatten"},
		{"mouth outside the face", func(m map[string]any, f map[string][]byte) { anchor(m, "mouth_open", 10, 10) },
			apierr.CodeParameterInvalid, "mouth_open", "outside the face"},
		{"mouth outside the base", func(m map[string]any, f map[string][]byte) { anchor(m, "mouth_closed", 600, 340) },
			apierr.CodeParameterInvalid, "mouth_closed", "outside the 640x360 base"},
		{"eyes outside the face", func(m map[string]any, f map[string][]byte) { anchor(m, "eyes_closed", 450, 100) },
			apierr.CodeParameterInvalid, "eyes_closed", "outside the face"},
		{"mouths of different sizes", func(m map[string]any, f map[string][]byte) {
			f["mouth_half"] = avatartest.PNG(avatartest.Overlay(60, 40, avatartest.MouthHalf))
		}, apierr.CodeParameterInvalid, "mouth_half", "same size"},
		{"empty mouth", func(m map[string]any, f map[string][]byte) {
			f["mouth_open"] = avatartest.PNG(avatartest.Overlay(avatartest.MouthW, avatartest.MouthH, color.RGBA{}))
		}, apierr.CodeParameterInvalid, "mouth_open", "transparent"},
		{"missing anchor", func(m map[string]any, f map[string][]byte) { delete(m["anchors"].(map[string]any), "mouth_open") },
			apierr.CodeParameterMissing, "sheet.anchors.mouth_open", "top-left"},
		{"anchor without file", func(m map[string]any, f map[string][]byte) { anchor(m, "idle_2", 0, 0) },
			apierr.CodeParameterInvalid, "sheet.anchors.idle_2", "no file idle_2"},
		{"unknown part", func(m map[string]any, f map[string][]byte) { f["mouth_wide"] = f["mouth_open"] },
			apierr.CodeParameterUnknown, "mouth_wide", "not a part"},
		{"too many idle frames", func(m map[string]any, f map[string][]byte) { f["idle_5"] = f["idle_1"] },
			apierr.CodeParameterUnknown, "idle_5", "at most 4 idle frames"},
		{"face outside the base", func(m map[string]any, f map[string][]byte) {
			m["face"] = map[string]int{"x": 500, "y": 40, "width": 200, "height": 260}
		}, apierr.CodeParameterInvalid, "sheet.face", "inside the 640x360 base"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, f := avatartest.Manifest(), avatartest.Files()
			manifest := []byte(nil)
			if c.edit != nil {
				c.edit(m, f)
				manifest = avatartest.JSON(m)
			}
			_, err := avatars.Validate(manifest, f)
			e, ok := apierr.As(err)
			if !ok {
				t.Fatalf("err = %v; want an API error", err)
			}
			if e.Code != c.code || e.Param != c.param || !strings.Contains(e.Message, c.mentioned) {
				t.Errorf("got %s param %q: %s\nwant %s param %q mentioning %q", e.Code, e.Param, e.Message, c.code, c.param, c.mentioned)
			}
		})
	}
}

// A WebP part (lossless, made with a stock encoder) is taken like a PNG one.
func TestValidateWebP(t *testing.T) {
	webp, err := os.ReadFile("testdata/mouth_half.webp")
	if err != nil {
		t.Fatal(err)
	}
	f := avatartest.Files()
	f["mouth_half"] = webp
	s, err := avatars.Validate(avatartest.JSON(avatartest.Manifest()), f)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := (avatars.Avatar{Parts: s.Parts}).Part("mouth_half")
	if p.Format != avatars.FormatWebP || p.Width != 80 || p.Height != 40 {
		t.Errorf("webp part %+v", p)
	}
	r, g, b, _ := s.Images["mouth_half"].At(40, 20).RGBA()
	if g>>8 < 0x90 || r>>8 > 0x40 || b>>8 > 0x40 {
		t.Errorf("webp pixel %x %x %x; want the green it was made with", r>>8, g>>8, b>>8)
	}
}
