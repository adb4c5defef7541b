package sphinx

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/mediafleet/resample"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/mediafleet/tts/espeak"
)

var sentences = []string{
	"Hello, thank you for calling Acme. How can I help you today?",
	"Good morning, welcome to the store. Please hold.",
	"What time is my pizza order?",
}

func speak(t *testing.T, text string) []int16 {
	t.Helper()
	pcm, err := (&espeak.Synthesizer{}).Synthesize(context.Background(), text)
	if err != nil {
		t.Fatal(err)
	}
	out, err := resample.Mono(pcm.Samples, pcm.Rate, Rate)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestChoose(t *testing.T) {
	for _, s := range sentences {
		got, err := Choose(context.Background(), speak(t, s), sentences)
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.Join(Words(s), " "); got != want {
			t.Errorf("Choose(speech of %q) = %q, want %q", s, got, want)
		}
	}
	tone := make([]int16, Rate*2)
	for i := range tone {
		tone[i] = int16(6000 * math.Sin(2*math.Pi*440*float64(i)/Rate))
	}
	if got, err := Choose(context.Background(), tone, sentences); err != nil || got != "" {
		t.Errorf("Choose(tone) = %q, %v; want nothing recognised", got, err)
	}
}

func TestChooseRejectsUnknownWords(t *testing.T) {
	if _, err := Choose(context.Background(), make([]int16, Rate), []string{"hello zzyzxqq"}); err == nil {
		t.Error("Choose with a word outside the dictionary = nil error")
	}
}

func TestHeardMostHalf(t *testing.T) {
	for _, c := range []struct {
		got, want  string
		heard, of  int
		most, half bool
	}{
		{"what time do you open tomorrow", "What time do you open tomorrow?", 6, 6, true, true},
		{"what kind do you into are roped", "What time do you open tomorrow?", 3, 6, false, true},
		{"what kind do", "What time do you open tomorrow?", 2, 6, false, false},
		{"", "What time?", 0, 2, false, false},
		{"anything", "", 0, 0, false, false},
	} {
		heard, of := Heard(c.got, c.want)
		if heard != c.heard || of != c.of || Most(c.got, c.want) != c.most || Half(c.got, c.want) != c.half {
			t.Errorf("Heard(%q, %q) = %d of %d, Most %v, Half %v; want %d of %d, %v, %v", c.got, c.want,
				heard, of, Most(c.got, c.want), Half(c.got, c.want), c.heard, c.of, c.most, c.half)
		}
	}
}

// TestChooseOverAPhoneLine: the greeting as a SIP phone heard it (flite, through
// livekit-sip, PCMU at 8 kHz; testdata/greeting-heard.wav, 3.8 s) is recognised whatever
// window around it a test cuts, as e2e/sip's tests cut windows from sound levels.
func TestChooseOverAPhoneLine(t *testing.T) {
	b, err := os.ReadFile("testdata/greeting-heard.wav")
	if err != nil {
		t.Fatal(err)
	}
	heard, err := tts.DecodeWAV(b)
	if err != nil {
		t.Fatal(err)
	}
	set := []string{
		"Hello, thank you for calling. How can I help you?",
		"We open at nine in the morning.",
		"Thank you for asking. Our shop is on the corner of the main street, next to the bakery.",
	}
	const ms = 8 // samples per millisecond at 8 kHz
	for _, w := range [][2]int{{0, 3500}, {0, 3600}, {40, 3500}, {80, 3660}, {80, 3800}, {120, 3600}} {
		from, to := w[0], w[1]
		pcm, err := resample.Mono(heard.Samples[from*ms:to*ms], heard.Rate, Rate)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Choose(context.Background(), pcm, set)
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.Join(Words(set[0]), " "); got != want {
			t.Errorf("Choose(the heard greeting from %d ms to %d ms) = %q, want %q", from, to, got, want)
		}
	}
}
