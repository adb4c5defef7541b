// Package sphinx is a test oracle: it recognises speech offline with CMU PocketSphinx
// (the pocketsphinx_continuous command and its US English model) against a closed set of
// sentences, so that tests check that what a caller heard is the words that were meant
// to be said. The worker's own recogniser is mediafleet/stt.
package sphinx

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"unicode"

	"github.com/bridgeline/bridgeline/mediafleet/tts"
)

// Rate is the sample rate the model expects.
const Rate = 16000

// DictPath is the pronunciation dictionary of the Debian pocketsphinx-en-us package.
var DictPath = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict"

// Words normalises text to the recogniser's vocabulary: lower case, letters and
// apostrophes.
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '\''
	})
}

// Heard counts how many of want's words are among got's, both normalised by Words, and
// how many words want has.
func Heard(got, want string) (heard, of int) {
	have := map[string]bool{}
	for _, w := range Words(got) {
		have[w] = true
	}
	ws := Words(want)
	for _, w := range ws {
		if have[w] {
			heard++
		}
	}
	return heard, len(ws)
}

// Most reports whether more than half of want's words are among got's: the rule for
// speech a test feeds the recogniser itself (a flite voice, frame by frame).
func Most(got, want string) bool {
	n, of := Heard(got, want)
	return 2*n > of
}

// Half reports whether at least half of want's words, and at least one, are among
// got's: the rule for speech that reaches the recogniser through a browser's fake
// microphone, which Chromium feeds from a WAV in real time with gaps when the machine is
// busy, so pocketsphinx hears it differently from run to run. Tests using it also check
// that the same recognised words reach the model, the captions and the record.
func Half(got, want string) bool {
	n, of := Heard(got, want)
	return n > 0 && 2*n >= of
}

var (
	dictOnce sync.Once
	dict     map[string]bool
	dictErr  error
)

func known(word string) (bool, error) {
	dictOnce.Do(func() {
		f, err := os.Open(DictPath)
		if err != nil {
			dictErr = fmt.Errorf("sphinx: dictionary: %w", err)
			return
		}
		defer f.Close()
		dict = map[string]bool{}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if w, _, ok := strings.Cut(sc.Text(), " "); ok {
				dict[w] = true
			}
		}
		dictErr = sc.Err()
	})
	return dict[word], dictErr
}

// Choose recognises pcm (16 kHz mono) against a closed set of sentences and returns the
// one heard, normalised by Words, or "" when the audio matches none (silence, a tone,
// other words), as it is or dithered (see dither). Every word of every sentence must be
// in the dictionary.
func Choose(ctx context.Context, pcm []int16, sentences []string) (string, error) {
	var alts []string
	for _, s := range sentences {
		ws := Words(s)
		if len(ws) == 0 {
			continue
		}
		for _, w := range ws {
			ok, err := known(w)
			if err != nil {
				return "", err
			}
			if !ok {
				return "", fmt.Errorf("sphinx: %q is not in the dictionary", w)
			}
		}
		alts = append(alts, strings.Join(ws, " "))
	}
	if len(alts) == 0 {
		return "", fmt.Errorf("sphinx: no sentences")
	}
	grammar := "#JSGF V1.0;\ngrammar choices;\npublic <s> = " + strings.Join(alts, "\n | ") + ";\n"
	dir, err := os.MkdirTemp("", "sphinx")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	gram := filepath.Join(dir, "choices.gram")
	if err := os.WriteFile(gram, []byte(grammar), 0o600); err != nil {
		return "", err
	}
	args := append([]string{"-jsgf", gram}, wideBeams...)
	got, err := run(ctx, dir, pcm, args...)
	if got != "" || err != nil {
		return got, err
	}
	return run(ctx, dir, dither(pcm), args...)
}

// wideBeams keep every path of the closed grammar alive to its end. With the command's
// default beams, a sentence heard over a phone line (8 kHz, G.711) was recognised or
// missed ("") depending on where its window began and ended by 20 ms, because the
// right path was pruned at a pause; with these it is found at every window, and a
// tone, noise and sentences outside the set still match none.
var wideBeams = []string{"-beam", "1e-80", "-pbeam", "1e-80", "-wbeam", "1e-60"}

func run(ctx context.Context, dir string, pcm []int16, args ...string) (string, error) {
	wav := filepath.Join(dir, "audio.wav")
	if err := os.WriteFile(wav, tts.EncodeWAV(tts.PCM{Rate: Rate, Samples: pcm}), 0o600); err != nil {
		return "", err
	}
	args = append([]string{"-infile", wav, "-logfn", os.DevNull}, args...)
	cmd := exec.CommandContext(ctx, "pocketsphinx_continuous", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("pocketsphinx: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return strings.Join(strings.Fields(string(out)), " "), nil
}

// dither adds a least significant bit of triangular noise (-1, 0 or +1) from a fixed
// seed: Choose's second hearing. pocketsphinx's front end sets the noise floor it
// removes from the quietest frames, and a phone recording's digital silence (exact
// zeros) has none, after which a phone's greeting matched nothing; a sim caller's
// clean audio, on the other hand, lost its greeting with the noise added. The
// resampler used to add this noise to everything, with a seed that changed every
// run; now the oracle hears the audio as it is and, when that matches no sentence,
// dithered, the same way every run.
func dither(pcm []int16) []int16 {
	rng := rand.New(rand.NewPCG(1, 1))
	out := make([]int16, len(pcm))
	for i, v := range pcm {
		d := int32(v) + int32(rng.IntN(2)) - int32(rng.IntN(2))
		out[i] = int16(min(max(d, -32768), 32767))
	}
	return out
}
