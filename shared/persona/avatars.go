package persona

import (
	"fmt"
	"slices"
)

// Colour is a colour of the avatar catalogue: the word a description uses for it (empty
// for colours no description names) and the RGB the persona worker draws.
type Colour struct {
	Name string
	RGB  uint32 // 0xrrggbb
}

// Channels are the colour's red, green and blue.
func (c Colour) Channels() (r, g, b uint8) {
	return uint8(c.RGB >> 16), uint8(c.RGB >> 8), uint8(c.RGB)
}

// The colours descriptions name. A description's word and the drawing come from the
// same value, and persona's tests check that each word fits its RGB (teal is a blue
// green, blond a light yellow, and so on).
var (
	Dark   = Colour{"dark", 0x1c1c24}
	Auburn = Colour{"auburn", 0x7a2e18}
	Blond  = Colour{"blond", 0xd8b04c}
	Teal   = Colour{"teal", 0x1f8a8a}
	Coral  = Colour{"coral", 0xe8735a}
	Navy   = Colour{"navy", 0x2c3e6b}
)

// Hair styles the avatar scene draws.
const (
	HairLong  = "long"
	HairShort = "short"
	HairBob   = "bob"
)

// hairLength is the word a description uses for a hair style.
var hairLength = map[string]string{HairLong: "long", HairShort: "short", HairBob: "short"}

// Avatar is an entry of the built-in catalogue: what GET /v1/avatars says about it and
// what the persona worker draws (mediafleet/avatar), from the same fields.
type Avatar struct {
	ID   string
	Name string
	// Manner opens the description: how the persona comes across.
	Manner    string
	HairStyle string // HairLong, HairShort or HairBob
	Hair      Colour
	Top       Colour
	Garment   string // what the Top colour is: "top", "jacket"
	// Drawn only, never described.
	Backdrop, Skin, Eyes, Lips Colour
	// Voice is the id of the voice (LocalVoices) the avatar speaks with when a version
	// names none.
	Voice string
}

// Description is the avatar's description in GET /v1/avatars, made from the fields the
// worker draws: "Warm and calm, short dark hair, teal top."
func (a Avatar) Description() string {
	return fmt.Sprintf("%s, %s %s hair, %s %s.", a.Manner, hairLength[a.HairStyle], a.Hair.Name, a.Top.Name, a.Garment)
}

// Avatars is the built-in catalogue, in display order. The first is the one a worker
// draws for an id it does not know (a newer catalogue on the control plane than in the
// fleet).
var Avatars = []Avatar{
	{
		ID: "ava_iris", Name: "Iris", Manner: "Warm and calm", HairStyle: HairBob, Hair: Dark, Top: Teal, Garment: "top",
		Backdrop: Colour{RGB: 0xf3dcc2}, Skin: Colour{RGB: 0xd19a6a}, Eyes: Colour{RGB: 0x2f4f2f}, Lips: Colour{RGB: 0xa0454a},
		Voice: "flite-slt",
	},
	{
		ID: "ava_maya", Name: "Maya", Manner: "Friendly and upbeat", HairStyle: HairLong, Hair: Auburn, Top: Coral, Garment: "top",
		Backdrop: Colour{RGB: 0xc9c3e6}, Skin: Colour{RGB: 0xa86b43}, Eyes: Colour{RGB: 0x4a2c17}, Lips: Colour{RGB: 0x8a3b3b},
		Voice: "flite-slt-bright",
	},
	{
		ID: "ava_theo", Name: "Theo", Manner: "Steady and clear", HairStyle: HairShort, Hair: Blond, Top: Navy, Garment: "jacket",
		Backdrop: Colour{RGB: 0xcfe3cf}, Skin: Colour{RGB: 0xf1c9a0}, Eyes: Colour{RGB: 0x3d6e9e}, Lips: Colour{RGB: 0xb86a5e},
		Voice: "flite-rms",
	},
}

// AvatarByID finds an avatar of the catalogue.
func AvatarByID(id string) (Avatar, bool) {
	i := slices.IndexFunc(Avatars, func(a Avatar) bool { return a.ID == id })
	if i < 0 {
		return Avatar{}, false
	}
	return Avatars[i], true
}

// AvatarVoices is each avatar's default voice (Avatar.Voice), used when a version names
// none.
var AvatarVoices = avatarVoices()

func avatarVoices() map[string]string {
	m := make(map[string]string, len(Avatars))
	for _, a := range Avatars {
		m[a.ID] = a.Voice
	}
	return m
}
