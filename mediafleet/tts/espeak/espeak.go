// Package espeak implements tts.Synthesizer with the espeak-ng command: offline, fast and
// robotic, good enough for greetings and tests until a hosted voice is configured.
package espeak

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/bridgeline/bridgeline/mediafleet/tts"
)

// Synthesizer runs espeak-ng once per utterance. The zero value speaks en-us at 160 wpm.
type Synthesizer struct {
	Voice string // espeak-ng voice, e.g. "en-us+f3"
	WPM   int    // speaking rate, words per minute
	Bin   string // executable; default "espeak-ng"
}

var _ tts.Synthesizer = (*Synthesizer)(nil)

// Synthesize speaks text. The text goes to espeak-ng on stdin, so it can never be taken
// for an option.
func (s *Synthesizer) Synthesize(ctx context.Context, text string) (tts.PCM, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return tts.PCM{}, errors.New("espeak: empty text")
	}
	voice, wpm, bin := s.Voice, s.WPM, s.Bin
	if voice == "" {
		voice = "en-us"
	}
	if wpm <= 0 {
		wpm = 160
	}
	if bin == "" {
		bin = "espeak-ng"
	}
	cmd := exec.CommandContext(ctx, bin, "--stdout", "-v", voice, "-s", strconv.Itoa(wpm))
	cmd.Stdin = strings.NewReader(text)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return tts.PCM{}, fmt.Errorf("espeak-ng: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	// espeak-ng streams, so the sizes in its header are placeholders: the data runs to
	// the end of the output, which DecodeWAV allows.
	pcm, err := tts.DecodeWAV(out)
	if err != nil {
		return tts.PCM{}, fmt.Errorf("espeak-ng: %w", err)
	}
	return pcm, nil
}
