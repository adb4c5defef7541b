package flite

import (
	"context"
	"math"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/bridgeline/bridgeline/mediafleet/speechtest"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest/sphinx"
)

var sentences = []string{
	"Hello, thank you for calling. How can I help you today?",
	"Your table for two is booked for seven tonight.",
	"The store opens at nine in the morning.",
}

func synth(t testing.TB, s *Synthesizer, text string) []int16 {
	t.Helper()
	pcm, err := s.Synthesize(context.Background(), text)
	if err != nil {
		t.Fatal(err)
	}
	if pcm.Rate != 16000 {
		t.Fatalf("rate %d, want 16000", pcm.Rate)
	}
	return pcm.Samples
}

// TestSameAsFliteCommand: the library speaks exactly what the flite command speaks, for
// every voice and with a moved pitch.
func TestSameAsFliteCommand(t *testing.T) {
	for _, tc := range []struct {
		name  string
		voice string
		pitch float64
	}{
		{"slt", "slt", 0},
		{"slt at 200 Hz", "slt", 200},
		{"rms", "rms", 0},
		{"awb", "awb", 0},
		{"kal16", "kal16", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.voice, tc.pitch)
			if err != nil {
				t.Fatal(err)
			}
			text := sentences[0]
			got := synth(t, s, text)
			var want []int16
			if tc.pitch > 0 {
				want = fliteCommand(t, tc.voice, text, "--setf", "int_f0_target_mean=200")
			} else {
				want = speechtest.Flite(t, tc.voice, text)
			}
			if !equal(got, want) {
				t.Errorf("%d samples differ from the flite command's %d", len(got), len(want))
			}
		})
	}
}

func TestPitchMoves(t *testing.T) {
	plain, _ := New("slt", 0)
	bright, _ := New("slt", 200)
	a, b := synth(t, plain, sentences[1]), synth(t, bright, sentences[1])
	fa, fb := speechtest.MeanF0(a), speechtest.MeanF0(b)
	t.Logf("mean pitch: slt %.0f Hz, slt at 200 Hz %.0f Hz", fa, fb)
	if fb < fa+20 {
		t.Errorf("pitched voice at %.0f Hz, plain at %.0f Hz: want it at least 20 Hz higher", fb, fa)
	}
	// The pitch is the utterance's: the shared voice still speaks at its own pitch.
	if again := speechtest.MeanF0(synth(t, plain, sentences[1])); math.Abs(again-fa) > 3 {
		t.Errorf("after a pitched utterance the plain voice speaks at %.0f Hz, before at %.0f Hz", again, fa)
	}
}

func TestRecognisable(t *testing.T) {
	for _, v := range Voices {
		t.Run(v, func(t *testing.T) {
			s, err := New(v, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, text := range sentences {
				got, err := sphinx.Choose(context.Background(), synth(t, s, text), sentences)
				if err != nil {
					t.Fatal(err)
				}
				if want := strings.Join(sphinx.Words(text), " "); got != want {
					t.Errorf("heard %q, want %q", got, want)
				}
			}
		})
	}
}

// TestConcurrent: calls speaking at once (several voices, one voice twice) get what each
// would get alone.
func TestConcurrent(t *testing.T) {
	type job struct {
		voice string
		text  string
		want  []int16
	}
	var jobs []job
	for _, v := range []string{"slt", "slt", "rms", "awb", "kal16"} {
		s, err := New(v, 0)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, job{v, sentences[len(jobs)%3], synth(t, s, sentences[len(jobs)%3])})
	}
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, _ := New(j.voice, 0)
			for range 5 {
				pcm, err := s.Synthesize(context.Background(), j.text)
				if err != nil {
					t.Error(err)
					return
				}
				if !equal(pcm.Samples, j.want) {
					t.Errorf("%s: concurrent synthesis differs", j.voice)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestRejects(t *testing.T) {
	if _, err := New("nosuchvoice", 0); err == nil {
		t.Error("New(nosuchvoice) succeeded")
	}
	s, _ := New("slt", 0)
	for _, text := range []string{"", "   ", "a\x00b"} {
		if _, err := s.Synthesize(context.Background(), text); err == nil {
			t.Errorf("Synthesize(%q) succeeded", text)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Synthesize(ctx, "hello"); err == nil {
		t.Error("Synthesize with a cancelled context succeeded")
	}
}

// BenchmarkFirstAudio is the time to the first audio of a short sentence (flite gives the
// whole sentence at once), beside the flite command that a subprocess engine would run.
func BenchmarkFirstAudio(b *testing.B) {
	const text = "Sure, I can help with that."
	if err := Preload(); err != nil {
		b.Fatal(err)
	}
	for _, v := range []string{"slt", "rms", "awb", "kal16"} {
		s, _ := New(v, 0)
		b.Run("libflite-"+v, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				synth(b, s, text)
			}
		})
	}
	b.Run("baseline-flite-command-slt", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if out, err := exec.Command("flite", "-voice", "slt", "-o", "/dev/null", "-t", text).CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
}

func fliteCommand(t testing.TB, voice, text string, extra ...string) []int16 {
	t.Helper()
	dir := t.TempDir()
	args := append([]string{"-voice", voice}, extra...)
	args = append(args, "-o", dir+"/out.wav", "-t", text)
	if out, err := exec.Command("flite", args...).CombinedOutput(); err != nil {
		t.Fatalf("flite: %v: %s", err, out)
	}
	return speechtest.ReadWAV(t, dir+"/out.wav")
}

// equal: the same speech. Not sample for sample: flite's clustergen voices (slt, rms,
// awb) excite unvoiced sounds with noise from the C library's rand(), so two syntheses
// differ in fine structure there. The same length and the same loudness contour (10 ms
// frames within 1.5 dB on average) is the same speech.
func equal(a, b []int16) bool {
	if len(a) != len(b) {
		return false
	}
	const frame = 160
	var sum float64
	var n int
	for i := 0; i+frame <= len(a); i += frame {
		la, lb := speechtest.RMS(a[i:i+frame]), speechtest.RMS(b[i:i+frame])
		if la < 30 && lb < 30 {
			continue // silence
		}
		sum += math.Abs(20 * math.Log10((la+1)/(lb+1)))
		n++
	}
	return n == 0 || sum/float64(n) <= 1.5
}
