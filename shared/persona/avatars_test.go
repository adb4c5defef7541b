package persona

import (
	"math"
	"strings"
	"testing"
)

// hsl is a colour's hue (degrees), saturation and lightness (0..1).
func hsl(c Colour) (h, s, l float64) {
	r8, g8, b8 := c.Channels()
	r, g, b := float64(r8)/255, float64(g8)/255, float64(b8)/255
	mx, mn := math.Max(r, math.Max(g, b)), math.Min(r, math.Min(g, b))
	l = (mx + mn) / 2
	d := mx - mn
	if d == 0 {
		return 0, 0, l
	}
	s = d / (1 - math.Abs(2*l-1))
	switch mx {
	case r:
		h = 60 * math.Mod((g-b)/d+6, 6)
	case g:
		h = 60 * ((b-r)/d + 2)
	default:
		h = 60 * ((r-g)/d + 4)
	}
	return h, s, l
}

// colourWords says what each colour word a description may use means, as ranges of hue,
// saturation and lightness: what a reader pictures. A word missing here fails the test,
// so a new colour in the catalogue comes with what it must look like.
var colourWords = map[string]func(h, s, l float64) bool{
	"dark":   func(h, s, l float64) bool { return l <= 0.2 },
	"auburn": func(h, s, l float64) bool { return h <= 30 && s >= 0.4 && l > 0.2 && l <= 0.45 },
	"blond":  func(h, s, l float64) bool { return h >= 35 && h <= 60 && s >= 0.3 && l >= 0.45 },
	"teal":   func(h, s, l float64) bool { return h >= 165 && h <= 200 && s >= 0.3 && l > 0.2 && l <= 0.6 },
	"coral":  func(h, s, l float64) bool { return h <= 25 && s >= 0.5 && l > 0.5 && l <= 0.8 },
	"navy":   func(h, s, l float64) bool { return h >= 200 && h <= 250 && s >= 0.3 && l > 0.2 && l <= 0.35 },
}

// TestAvatarDescriptionsMatchTheirDrawing: each avatar's description (GET /v1/avatars)
// names its hair and top colours, and each of those words fits the RGB the worker draws
// (and fits no other word), so the catalogue cannot again describe a teal top and draw a
// coral one.
func TestAvatarDescriptionsMatchTheirDrawing(t *testing.T) {
	for _, a := range Avatars {
		t.Run(a.ID, func(t *testing.T) {
			d := a.Description()
			for _, part := range []struct {
				what   string
				colour Colour
				phrase string
			}{
				{"hair", a.Hair, a.Hair.Name + " hair"},
				{a.Garment, a.Top, a.Top.Name + " " + a.Garment},
			} {
				if a.Garment == "" || part.colour.Name == "" || !strings.Contains(d, part.phrase) {
					t.Errorf("description %q does not say %q", d, part.phrase)
				}
				h, s, l := hsl(part.colour)
				fits, known := colourWords[part.colour.Name]
				if !known {
					t.Errorf("%s colour word %q has no meaning in colourWords", part.what, part.colour.Name)
					continue
				}
				if !fits(h, s, l) {
					t.Errorf("%s is described %q but drawn #%06x (hue %.0f, saturation %.2f, lightness %.2f)", part.what, part.colour.Name, part.colour.RGB, h, s, l)
				}
				for word, other := range colourWords {
					if word != part.colour.Name && other(h, s, l) {
						t.Errorf("%s #%06x, described %q, also fits %q", part.what, part.colour.RGB, part.colour.Name, word)
					}
				}
			}
			if !strings.Contains(d, hairLength[a.HairStyle]+" "+a.Hair.Name+" hair") || hairLength[a.HairStyle] == "" {
				t.Errorf("description %q does not give the length of hair style %q", d, a.HairStyle)
			}
		})
	}
}

// The words' ranges tell the catalogue's old mistakes apart: Iris described teal and
// drawn coral, Maya described auburn and drawn near-black brown, Theo described blond and
// drawn auburn.
func TestColourWordsRejectTheOldDrawings(t *testing.T) {
	for _, c := range []struct {
		name string
		word string
		rgb  uint32
	}{
		{"iris top drawn coral", "teal", 0xd0574b},
		{"maya top drawn teal", "coral", 0x1f8a8a},
		{"maya hair drawn dark brown", "auburn", 0x2b1a10},
		{"theo hair drawn auburn", "blond", 0x7a3b1d},
	} {
		t.Run(c.name, func(t *testing.T) {
			if colourWords[c.word](hsl(Colour{RGB: c.rgb})) {
				t.Errorf("#%06x fits %q", c.rgb, c.word)
			}
		})
	}
}

func TestAvatarCatalogue(t *testing.T) {
	seen := map[string]bool{}
	backdrops := map[uint32]bool{}
	for _, a := range Avatars {
		if seen[a.ID] || backdrops[a.Backdrop.RGB] {
			t.Errorf("avatar %s: id or backdrop #%06x repeated", a.ID, a.Backdrop.RGB)
		}
		seen[a.ID], backdrops[a.Backdrop.RGB] = true, true
		if got, ok := AvatarByID(a.ID); !ok || got.Name != a.Name {
			t.Errorf("AvatarByID(%s) = %q, %v", a.ID, got.Name, ok)
		}
		if AvatarVoices[a.ID] != a.Voice {
			t.Errorf("AvatarVoices[%s] = %q, want %q", a.ID, AvatarVoices[a.ID], a.Voice)
		}
		if _, ok := hairLength[a.HairStyle]; !ok {
			t.Errorf("avatar %s: hair style %q is not one the scene draws", a.ID, a.HairStyle)
		}
	}
	if _, ok := AvatarByID("ava_nobody"); ok {
		t.Error("AvatarByID(ava_nobody) found an avatar")
	}
	if got, want := Avatars[0].Description(), "Warm and calm, short dark hair, teal top."; got != want {
		t.Errorf("Iris's description = %q, want %q", got, want)
	}
}
