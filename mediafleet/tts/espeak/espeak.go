// Package espeak implements tts.Synthesizer with the espeak-ng command: offline, fast and
// robotic, good enough for greetings and tests until a hosted voice is configured.
package espeak

import (
	"bytes"
	"context"
	"encoding/binary"
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
	return parseWAV(out)
}

// parseWAV reads espeak-ng's 16-bit mono WAV. espeak-ng streams, so the sizes in its
// header are placeholders: the data runs to the end of the output.
func parseWAV(b []byte) (tts.PCM, error) {
	if len(b) < 12 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return tts.PCM{}, errors.New("espeak: output is not WAV")
	}
	var rate, channels, bits int
	for off := 12; off+8 <= len(b); {
		id := string(b[off : off+4])
		size := int(binary.LittleEndian.Uint32(b[off+4 : off+8]))
		body := off + 8
		switch id {
		case "fmt ":
			if body+16 > len(b) {
				return tts.PCM{}, errors.New("espeak: short fmt chunk")
			}
			channels = int(binary.LittleEndian.Uint16(b[body+2:]))
			rate = int(binary.LittleEndian.Uint32(b[body+4:]))
			bits = int(binary.LittleEndian.Uint16(b[body+14:]))
		case "data":
			if channels != 1 || bits != 16 || rate == 0 {
				return tts.PCM{}, fmt.Errorf("espeak: WAV is %d ch %d bit %d Hz, want mono 16 bit", channels, bits, rate)
			}
			data := b[body:]
			if size < len(data) {
				data = data[:size]
			}
			pcm := make([]int16, len(data)/2)
			for i := range pcm {
				pcm[i] = int16(binary.LittleEndian.Uint16(data[2*i:]))
			}
			return tts.PCM{Rate: rate, Samples: pcm}, nil
		}
		if size < 0 || body+size > len(b) {
			break
		}
		off = body + size + size%2
	}
	return tts.PCM{}, errors.New("espeak: WAV has no data chunk")
}
