// Package tts is the text-to-speech seam of the persona pipeline: the pipeline asks a
// Synthesizer for speech and plays the PCM it returns. espeak-ng (package tts/espeak)
// implements it offline; a hosted provider implements the same interface.
package tts

import (
	"context"
	"time"
)

// PCM is mono 16-bit audio.
type PCM struct {
	Rate    int // samples per second
	Samples []int16
}

// Duration is how long the audio plays.
func (p PCM) Duration() time.Duration {
	if p.Rate == 0 {
		return 0
	}
	return time.Duration(len(p.Samples)) * time.Second / time.Duration(p.Rate)
}

// Synthesizer turns text into speech with one voice.
type Synthesizer interface {
	Synthesize(ctx context.Context, text string) (PCM, error)
}

// Voices picks the Synthesizer for a voice id of the catalogue (persona.VoiceFor: the
// version's voice, else its avatar's default).
type Voices func(voice string) Synthesizer
