package denoise

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bridgeline/bridgeline/mediafleet/speechtest"
)

const rate = speechtest.Rate

// TestSuppressesStationaryNoise: steady noise alone (an air conditioner's hiss) comes out
// at least 15 dB lower once the preprocessor has learnt it (after 1 s), while a voice
// over the same noise keeps its level within 3 dB.
func TestSuppressesStationaryNoise(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	noise := make([]int16, 4*rate)
	for i := range noise {
		noise[i] = int16(r.NormFloat64() * 600)
	}
	s, err := New(rate, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := process(s, noise, 320)
	in, got := speechtest.RMS(noise[2*rate:]), speechtest.RMS(out[2*rate:])
	if db := dB(got / in); db > -15 {
		t.Errorf("noise alone: %.0f in, %.0f out (%.1f dB), want at least 15 dB down", in, got, db)
	}

	voice := speechtest.Flite(t, "awb", "What time does the store open tomorrow morning?")
	mixed := speechtest.Concat(noise[:rate], speechtest.MixAt(voice, noise[rate:], 15))
	out = process(s, mixed, 320)
	// The voice's level: the mix's and the output's over the voice, against the voice alone.
	in, got = speechtest.RMS(voice), speechtest.RMS(out[rate:])
	if db := dB(got / in); db < -3 || db > 3 {
		t.Errorf("voice in noise: %.0f alone, %.0f after suppression (%.1f dB), want within 3 dB", in, got, db)
	}
}

// TestPiecesOfAnyLength: audio handed in pieces that are not frames comes back sample for
// sample in the same pieces, one frame late, the same as in whole frames, with no gap.
func TestPiecesOfAnyLength(t *testing.T) {
	voice := speechtest.Flite(t, "slt", "Is the pharmacy open on Sunday?")
	whole, err := New(rate, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close()
	framed := process(whole, voice, whole.Delay())

	odd, err := New(rate, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer odd.Close()
	var out []int16
	for i, sizes := 0, []int{1, 77, 320, 500, 13, 960, 241}; i < len(voice); {
		n := min(sizes[len(out)%len(sizes)], len(voice)-i)
		got := odd.Process(voice[i : i+n])
		if len(got) != n {
			t.Fatalf("Process of %d samples gave %d", n, len(got))
		}
		out = append(out, got...)
		i += n
	}
	if len(out) != len(framed) {
		t.Fatalf("%d samples out of odd pieces, %d out of frames", len(out), len(framed))
	}
	for i := range out {
		if out[i] != framed[i] {
			t.Fatalf("sample %d is %d, want %d as from whole frames", i, out[i], framed[i])
		}
	}
	if d := odd.Delay(); d != rate*FrameDuration/1000 {
		t.Errorf("Delay() = %d, want a frame", d)
	}
	for i := range odd.Delay() {
		if out[i] != 0 {
			t.Fatalf("sample %d of the first frame is %d, want the silence before the stream", i, out[i])
		}
	}
}

func TestNewRefuses(t *testing.T) {
	for _, c := range []struct{ rate, suppress int }{{4000, 0}, {96000, 0}, {rate, 10}} {
		if s, err := New(c.rate, c.suppress); err == nil {
			s.Close()
			t.Errorf("New(%d, %d) = nil error", c.rate, c.suppress)
		}
	}
}

func process(s *Suppressor, pcm []int16, piece int) []int16 {
	var out []int16
	for i := 0; i < len(pcm); i += piece {
		out = append(out, s.Process(pcm[i:min(i+piece, len(pcm))])...)
	}
	return out
}

func dB(ratio float64) float64 { return 20 * math.Log10(ratio) }

// TestQuietLinePassesAsItCame: on a quiet line (a flite voice between digital silences)
// the suppressor is never engaged and hands the audio back as it came, a frame late;
// once a steady noise comes in it engages within 3.5 s,
// and when the noise stops it lets go again.
func TestQuietLinePassesAsItCame(t *testing.T) {
	s, err := New(rate, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	voice := speechtest.Flite(t, "rms", "Can you tell me where my order is?")
	clean := speechtest.Concat(speechtest.Silence(rate), voice, speechtest.Silence(rate))
	out := process(s, clean, 320)
	d := s.Delay()
	for i := d; i < len(out); i++ {
		if out[i] != clean[i-d] {
			t.Fatalf("quiet line: sample %d is %d, want %d as it came", i, out[i], clean[i-d])
		}
	}
	if s.Engaged() {
		t.Fatal("engaged on a quiet line")
	}
	r := rand.New(rand.NewPCG(3, 3))
	hiss := make([]int16, 5*rate)
	for i := range hiss {
		hiss[i] = int16(r.NormFloat64() * 300)
	}
	for i := 0; i < len(hiss); i += 320 {
		s.Process(hiss[i : i+320])
		if s.Engaged() && i > 7*rate/2 {
			t.Fatalf("engaged only %d ms into the noise, want within 3.5 s", i*1000/rate)
		}
		if s.Engaged() {
			break
		}
	}
	if !s.Engaged() {
		t.Fatal("not engaged after 5 s of noise at RMS 300")
	}
	process(s, speechtest.Silence(rate/10), 320)
	if s.Engaged() {
		t.Error("still engaged after the noise stopped")
	}
}
