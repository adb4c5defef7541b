package persona

import (
	"slices"
	"testing"
)

func TestCanonicalLanguage(t *testing.T) {
	for in, want := range map[string]string{"en": "en", "ES-mx": "es-MX", "es-419": "es-419", "zh-hant-tw": "zh-Hant-TW", "fil": "fil"} {
		if got, err := CanonicalLanguage(in); got != want || err != nil {
			t.Errorf("CanonicalLanguage(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "e", "english", "es_MX", "es-", "es-MX-", "es-M", "es-MX-x-ab", "és"} {
		if got, err := CanonicalLanguage(bad); err == nil {
			t.Errorf("CanonicalLanguage(%q) = %q, want an error", bad, got)
		}
	}
}

func TestParseLanguagesAndHears(t *testing.T) {
	if got, err := ParseLanguages(""); err != nil || !slices.Equal(got, []string{"en"}) {
		t.Errorf("ParseLanguages(\"\") = %v, %v; want [en]: pocketsphinx's", got, err)
	}
	got, err := ParseLanguages(" en-us, es ,EN-US,,es-mx")
	if err != nil || !slices.Equal(got, []string{"en-US", "es", "es-MX"}) {
		t.Errorf("ParseLanguages = %v, %v; want [en-US es es-MX]", got, err)
	}
	if _, err := ParseLanguages("en,spanish"); err == nil {
		t.Error("ParseLanguages(en,spanish) = nil error, want one")
	}
	for _, tc := range []struct {
		heard    []string
		language string
		want     bool
	}{
		{[]string{"en"}, "en", true},
		{[]string{"en"}, "en-GB", true},
		{[]string{"en"}, "", true},
		{[]string{"en"}, "es", false},
		{[]string{"en", "es"}, "es-MX", true},
		{[]string{"en-US", "es-MX"}, "es-ES", false},
		{[]string{"en-US", "es-MX"}, "es-mx", true},
		{[]string{"en-US"}, "en", false},
	} {
		if got := Hears(tc.heard, tc.language); got != tc.want {
			t.Errorf("Hears(%v, %q) = %v, want %v", tc.heard, tc.language, got, tc.want)
		}
	}
}

// TestVoiceForLanguage: a version naming no voice speaks with its avatar's default
// when that speaks its language, else with the language's default voice.
func TestVoiceForLanguage(t *testing.T) {
	avatar := Avatars[0]
	for _, tc := range []struct {
		v    Version
		want string
	}{
		{Version{AvatarID: avatar.ID}, avatar.Voice},
		{Version{AvatarID: avatar.ID, Language: "en-GB"}, avatar.Voice},
		{Version{AvatarID: avatar.ID, Language: "es"}, "espeak-es-f3"},
		{Version{AvatarID: avatar.ID, Language: "es-MX"}, "espeak-es-f3"},
		{Version{AvatarID: avatar.ID, Language: "es-419"}, "espeak-es-419-f3"},
		{Version{AvatarID: avatar.ID, Language: "es", Voice: "espeak-es-m3"}, "espeak-es-m3"},
		{Version{AvatarID: "ava_unknown", Language: "en-GB"}, "flite-awb"},
		{Version{AvatarID: avatar.ID, Language: "de-CH"}, "espeak-de-f3"},
		{Version{AvatarID: avatar.ID, Language: "fr-CA"}, "espeak-fr-f3"},
		{Version{AvatarID: avatar.ID, Language: "pt-PT"}, "espeak-pt-br-f3"},
		{Version{AvatarID: avatar.ID, Language: "it"}, "espeak-it-f3"},
	} {
		if got := VoiceFor(tc.v); got != tc.want {
			t.Errorf("VoiceFor(%+v) = %q, want %q", tc.v, got, tc.want)
		}
	}
	for _, v := range LocalVoices {
		if _, err := CanonicalLanguage(v.Language); err != nil {
			t.Errorf("voice %s: %v", v.ID, err)
		}
	}
}
