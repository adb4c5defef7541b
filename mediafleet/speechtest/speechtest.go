// Package speechtest makes test speech for the speech engines' tests: sentences spoken by
// the flite command (pocketsphinx recognises flite's voices well, espeak-ng's badly), and
// the sample where speech starts. Its sphinx package checks what was heard.
package speechtest

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/bridgeline/bridgeline/mediafleet/opus"
	"github.com/bridgeline/bridgeline/mediafleet/resample"

	"github.com/bridgeline/bridgeline/mediafleet/tts"
)

// Rate is the sample rate of everything this package returns.
const Rate = 16000

// Flite speaks text with a flite voice (slt, rms, awb, kal16) at 16 kHz mono.
func Flite(t testing.TB, voice, text string) []int16 {
	t.Helper()
	out := filepath.Join(t.TempDir(), "speech.wav")
	// -t takes the text as an argument after the options, so it is never an option.
	cmd := exec.Command("flite", "-voice", voice, "-o", out, "-t", text)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("flite: %v: %s", err, b)
	}
	return ReadWAV(t, out)
}

// ReadWAV reads a 16 kHz mono 16-bit WAV file.
func ReadWAV(t testing.TB, path string) []int16 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pcm, rate := parseWAV(t, b)
	if rate != Rate {
		t.Fatalf("%s is %d Hz, want %d", path, rate, Rate)
	}
	return pcm
}

func parseWAV(t testing.TB, b []byte) ([]int16, int) {
	t.Helper()
	p, err := tts.DecodeWAV(b)
	if err != nil {
		t.Fatalf("speechtest: %v", err)
	}
	return p.Samples, p.Rate
}

// Onset is the first sample of the first 10 ms frame whose level is within 30 dB of the
// loudest frame: where a listener hears the speech start.
func Onset(pcm []int16) int {
	const frame = Rate / 100
	peak := 0.0
	levels := make([]float64, 0, len(pcm)/frame)
	for i := 0; i+frame <= len(pcm); i += frame {
		l := RMS(pcm[i : i+frame])
		levels = append(levels, l)
		peak = math.Max(peak, l)
	}
	for i, l := range levels {
		if l > 0 && l >= peak/31.6 {
			return i * frame
		}
	}
	return -1
}

// RMS is the root mean square level of pcm.
func RMS(pcm []int16) float64 {
	if len(pcm) == 0 {
		return 0
	}
	var sum float64
	for _, s := range pcm {
		sum += float64(s) * float64(s)
	}
	return math.Sqrt(sum / float64(len(pcm)))
}

// Silence is n samples of digital silence.
func Silence(n int) []int16 { return make([]int16, n) }

// Concat joins pieces of audio.
func Concat(parts ...[]int16) []int16 {
	var out []int16
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// MeanF0 estimates the mean pitch of voiced 30 ms frames by autocorrelation.
func MeanF0(pcm []int16) float64 {
	const rate, frame = Rate, 480
	var sum float64
	var n int
	for i := 0; i+frame <= len(pcm); i += frame / 2 {
		x := pcm[i : i+frame]
		if RMS(x) < 1000 {
			continue
		}
		best, bestLag := 0.0, 0
		var e0 float64
		for _, s := range x {
			e0 += float64(s) * float64(s)
		}
		for lag := rate / 400; lag <= rate/70; lag++ {
			var c float64
			for j := 0; j+lag < frame; j++ {
				c += float64(x[j]) * float64(x[j+lag])
			}
			if c > best {
				best, bestLag = c, lag
			}
		}
		if bestLag > 0 && best > 0.5*e0 {
			sum += float64(rate) / float64(bestLag)
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// ThroughOpus is the way a caller's speech reaches the worker: 48 kHz Opus at 32 kbit/s
// in 20 ms frames, decoded and resampled to 16 kHz.
func ThroughOpus(tb testing.TB, pcm []int16) []int16 {
	tb.Helper()
	up, err := resample.Mono(pcm, Rate, 48000)
	if err != nil {
		tb.Fatal(err)
	}
	enc, err := opus.NewEncoder(48000, 1)
	if err != nil {
		tb.Fatal(err)
	}
	defer enc.Close()
	if err := enc.SetBitrate(32000); err != nil {
		tb.Fatal(err)
	}
	dec, err := opus.NewDecoder(48000, 1)
	if err != nil {
		tb.Fatal(err)
	}
	defer dec.Close()
	const frame = 960
	pkt := make([]byte, 4000)
	out := make([]int16, dec.MaxFrame())
	var heard []int16
	for i := 0; i+frame <= len(up); i += frame {
		n, err := enc.Encode(up[i:i+frame], pkt)
		if err != nil {
			tb.Fatal(err)
		}
		m, err := dec.Decode(pkt[:n], out)
		if err != nil {
			tb.Fatal(err)
		}
		heard = append(heard, out[:m]...)
	}
	down, err := resample.Mono(heard, 48000, Rate)
	if err != nil {
		tb.Fatal(err)
	}
	return down
}
