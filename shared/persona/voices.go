package persona

import "strings"

// Voice is one voice a persona can speak with. GET /v1/voices lists the catalogue; a
// draft's optional `voice` must name one of them.
type Voice struct {
	ID          string `json:"id"`
	Engine      string `json:"engine"` // flite | espeak-ng | hosted
	Name        string `json:"name"`
	Language    string `json:"language"`
	Gender      string `json:"gender"` // female | male
	Description string `json:"description"`
	// EngineVoice is the engine's own name for the voice (flite -voice, espeak-ng -v, or
	// the hosted API's voice).
	EngineVoice string `json:"-"`
	// PitchHz, when set, moves the voice's mean pitch (flite's int_f0_target_mean).
	PitchHz float64 `json:"-"`
}

// Text-to-speech engines.
const (
	EngineFlite  = "flite"
	EngineEspeak = "espeak-ng"
	EngineHosted = "hosted"
)

// LocalVoices are the voices every deployment has: the flite and espeak-ng voices the
// worker image installs. Hosted voices are added by the deployment's TTS configuration.
var LocalVoices = []Voice{
	{ID: "flite-slt", Engine: EngineFlite, EngineVoice: "slt", Name: "Sarah", Language: "en-US", Gender: "female", Description: "Clear and calm US English (flite slt)."},
	{ID: "flite-slt-bright", Engine: EngineFlite, EngineVoice: "slt", PitchHz: 200, Name: "Sally", Language: "en-US", Gender: "female", Description: "The slt voice pitched higher: brighter and upbeat (flite)."},
	{ID: "flite-rms", Engine: EngineFlite, EngineVoice: "rms", Name: "Robert", Language: "en-US", Gender: "male", Description: "Steady US English (flite rms)."},
	{ID: "flite-awb", Engine: EngineFlite, EngineVoice: "awb", Name: "Alan", Language: "en-GB", Gender: "male", Description: "Scottish English (flite awb)."},
	{ID: "flite-kal16", Engine: EngineFlite, EngineVoice: "kal16", Name: "Kal", Language: "en-US", Gender: "male", Description: "Fast, robotic US English (flite kal16)."},
	{ID: "espeak-en-us-f3", Engine: EngineEspeak, EngineVoice: "en-us+f3", Name: "Eve", Language: "en-US", Gender: "female", Description: "Synthetic US English (espeak-ng)."},
	{ID: "espeak-en-us-m3", Engine: EngineEspeak, EngineVoice: "en-us+m3", Name: "Max", Language: "en-US", Gender: "male", Description: "Synthetic US English (espeak-ng)."},
	// Spanish: the first is the default of a Spanish version that names no voice.
	{ID: "espeak-es-f3", Engine: EngineEspeak, EngineVoice: "es+f3", Name: "Lucía", Language: "es-ES", Gender: "female", Description: "Synthetic Castilian Spanish (espeak-ng)."},
	{ID: "espeak-es-m3", Engine: EngineEspeak, EngineVoice: "es+m3", Name: "Mateo", Language: "es-ES", Gender: "male", Description: "Synthetic Castilian Spanish (espeak-ng)."},
	{ID: "espeak-es-419-f3", Engine: EngineEspeak, EngineVoice: "es-419+f3", Name: "Sofía", Language: "es-419", Gender: "female", Description: "Synthetic Latin American Spanish (espeak-ng)."},
	// German, French, Portuguese and Italian: each language's default voice (a version
	// in it still needs a recogniser that hears it: STT_LANGUAGES).
	{ID: "espeak-de-f3", Engine: EngineEspeak, EngineVoice: "de+f3", Name: "Greta", Language: "de-DE", Gender: "female", Description: "Synthetic German (espeak-ng)."},
	{ID: "espeak-fr-f3", Engine: EngineEspeak, EngineVoice: "fr-fr+f3", Name: "Camille", Language: "fr-FR", Gender: "female", Description: "Synthetic French (espeak-ng)."},
	{ID: "espeak-pt-br-f3", Engine: EngineEspeak, EngineVoice: "pt-br+f3", Name: "Ana", Language: "pt-BR", Gender: "female", Description: "Synthetic Brazilian Portuguese (espeak-ng)."},
	{ID: "espeak-it-f3", Engine: EngineEspeak, EngineVoice: "it+f3", Name: "Giulia", Language: "it-IT", Gender: "female", Description: "Synthetic Italian (espeak-ng)."},
}

// SimCallerVoice is the flite voice the simulated platform's party speaks with: distinct
// from every avatar's default, and one the local recogniser hears well.
const SimCallerVoice = "awb"

// LocalVoice finds a voice of LocalVoices.
func LocalVoice(id string) (Voice, bool) {
	for _, v := range LocalVoices {
		if v.ID == id {
			return v, true
		}
	}
	return Voice{}, false
}

// VoiceFor is the voice id a version speaks with: its own, else its avatar's default
// when that speaks the version's language, else the language's default voice
// (LanguageVoice), else flite-slt. Publish refuses a version whose voice does not speak
// its language, and one of a language no local voice speaks that names no voice.
func VoiceFor(v Version) string {
	if v.Voice != "" {
		return v.Voice
	}
	if id, ok := AvatarVoices[v.AvatarID]; ok {
		if av, ok := LocalVoice(id); ok && av.Speaks(v.Language) {
			return id
		}
	}
	if id, ok := LanguageVoice(v.Language); ok {
		return id
	}
	return "flite-slt"
}

// LanguageVoice is the default voice of a language ("" is DefaultLanguage): the first
// local voice of LocalVoices that speaks it, preferring one of the same region
// ("es-419" takes espeak-es-419-f3, "es" and "es-MX" espeak-es-f3).
func LanguageVoice(language string) (string, bool) {
	first := ""
	for _, v := range LocalVoices {
		if !v.Speaks(language) {
			continue
		}
		if strings.EqualFold(v.Language, language) {
			return v.ID, true
		}
		if first == "" {
			first = v.ID
		}
	}
	return first, first != ""
}
