package persona

import (
	"fmt"
	"slices"
	"strings"
)

// HostedVoicePrefix starts the id of a hosted voice: "hosted-alloy" speaks with the voice
// "alloy" of the OpenAI-compatible speech API the fleet's TTS_BASE_URL names.
const HostedVoicePrefix = "hosted-"

// maxHostedVoiceLen bounds a hosted voice's name (TTS_VOICES).
const maxHostedVoiceLen = 64

// ParseHostedVoices reads TTS_VOICES: the comma-separated names of the hosted speech API's
// voices the deployment offers ("alloy,nova"). The control plane cannot ask the fleet's
// TTS server which voices it has (Lambdas never reach the media fleet's providers), so
// the operator lists them beside TTS_BASE_URL. Blank entries are skipped; a name is
// letters, digits, '_', '-' and '.', at most 64 characters.
func ParseHostedVoices(list string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		if len(n) > maxHostedVoiceLen || strings.IndexFunc(n, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
		}) >= 0 {
			return nil, fmt.Errorf("TTS_VOICES: %q is not a voice name (letters, digits, _ - . and at most %d characters)", n, maxHostedVoiceLen)
		}
		seen[n] = true
		out = append(out, n)
	}
	return out, nil
}

// HostedVoice is the catalogue entry of the hosted voice named name.
func HostedVoice(name string) Voice {
	return Voice{ID: HostedVoicePrefix + name, Engine: EngineHosted, EngineVoice: name, Name: name,
		Description: "The hosted speech API's voice " + name + " (TTS_BASE_URL)."}
}

// DeploymentVoices is the catalogue a deployment offers: LocalVoices, then one hosted voice
// per name of hosted (ParseHostedVoices of TTS_VOICES).
func DeploymentVoices(hosted []string) []Voice {
	out := append([]Voice(nil), LocalVoices...)
	for _, n := range hosted {
		out = append(out, HostedVoice(n))
	}
	return out
}

// AvatarsVoicing lists, sorted, the avatars whose default voice is id.
func AvatarsVoicing(id string) []string {
	out := []string{}
	for avatar, v := range AvatarVoices {
		if v == id {
			out = append(out, avatar)
		}
	}
	slices.Sort(out)
	return out
}
