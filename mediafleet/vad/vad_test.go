package vad

import (
	"math"
	"math/rand"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest"
)

var _ speech.VAD = (*Detector)(nil)

const threshold = 0.5

var (
	modelOnce sync.Once
	model     *Model
	modelErr  error
)

// loadModel loads the model once for the whole test binary, as the worker does.
func loadModel(tb testing.TB) *Model {
	tb.Helper()
	modelOnce.Do(func() { model, modelErr = Load(ConfigFromEnv(os.Getenv)) })
	if modelErr != nil {
		tb.Fatalf("Load: %v (run make deps)", modelErr)
	}
	return model
}

func detector(tb testing.TB) *Detector {
	tb.Helper()
	d, err := loadModel(tb).NewDetector()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := d.Close(); err != nil {
			tb.Error(err)
		}
	})
	return d
}

// probs scores pcm window by window.
func probs(tb testing.TB, d *Detector, pcm []int16) []float32 {
	tb.Helper()
	var out []float32
	for i := 0; i+Window <= len(pcm); i += Window {
		p, err := d.Prob(pcm[i : i+Window])
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func ms(samples int) time.Duration { return time.Duration(samples) * time.Second / Rate }

func TestDetectsSpeechOnset(t *testing.T) {
	for _, tc := range []struct {
		name, voice, text string
		opus              bool // through the codec a call puts it through
	}{
		{"slt question", "slt", "What time does the store open tomorrow?", false},
		{"awb greeting", "awb", "Hello, I would like to book a table for two.", false},
		{"rms short", "rms", "Yes please.", false},
		{"kal16 number", "kal16", "My number is four five six.", false},
		{"awb through opus", "awb", "Hello, I would like to book a table for two.", true},
		{"slt through opus", "slt", "What time does the store open tomorrow?", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			speech := speechtest.Flite(t, tc.voice, tc.text)
			if tc.opus {
				speech = speechtest.ThroughOpus(t, speech)
			}
			lead := Rate // a second of silence before the speech
			pcm := speechtest.Concat(speechtest.Silence(lead), speech, speechtest.Silence(Rate))
			onset := speechtest.Onset(pcm)
			d := detector(t)
			first := -1
			for i, p := range probs(t, d, pcm) {
				if p >= threshold {
					first = i
					break
				}
			}
			if first < 0 {
				t.Fatalf("speech never detected")
			}
			detected := (first + 1) * Window // the decision is known at the window's end
			lag := ms(detected - onset)
			t.Logf("onset %v, detected at %v: lag %v", ms(onset), ms(detected), lag)
			if detected <= onset-Window {
				t.Errorf("detected at %v, a window before the speech at %v", ms(detected), ms(onset))
			}
			if lag > 100*time.Millisecond {
				t.Errorf("lag %v, want <= 100ms", lag)
			}
		})
	}
}

func TestIgnoresNonSpeech(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	n := 3 * Rate
	gen := func(f func(i int) float64) []int16 {
		out := make([]int16, n)
		for i := range out {
			out[i] = int16(math.Max(-32768, math.Min(32767, f(i))))
		}
		return out
	}
	for _, tc := range []struct {
		name string
		pcm  []int16
	}{
		{"digital silence", speechtest.Silence(n)},
		{"room noise", gen(func(int) float64 { return rng.NormFloat64() * 30 })},
		{"white noise", gen(func(int) float64 { return rng.NormFloat64() * 3000 })},
		{"440 Hz tone", gen(func(i int) float64 { return 8000 * math.Sin(2*math.Pi*440*float64(i)/Rate) })},
		{"dial tone", gen(func(i int) float64 {
			return 5000*math.Sin(2*math.Pi*350*float64(i)/Rate) + 5000*math.Sin(2*math.Pi*440*float64(i)/Rate)
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var highest float32
			for _, p := range probs(t, detector(t), tc.pcm) {
				highest = max(highest, p)
			}
			t.Logf("highest probability %.3f", highest)
			if highest >= threshold {
				t.Errorf("highest probability %.3f, want < %.2f", highest, threshold)
			}
		})
	}
}

// TestResetAndSharing: detectors sharing the model, run at once, score the same audio
// the same; Reset makes a used detector score like a fresh one.
func TestResetAndSharing(t *testing.T) {
	pcm := speechtest.Concat(speechtest.Silence(Rate/2), speechtest.Flite(t, "slt", "Can you hear me now?"), speechtest.Silence(Rate/2))
	want := probs(t, detector(t), pcm)

	used := detector(t)
	probs(t, used, speechtest.Flite(t, "rms", "Something else first."))
	used.Reset()
	if got := probs(t, used, pcm); !equal(got, want) {
		t.Errorf("after Reset: %v, want %v", got, want)
	}

	const n = 4
	got := make([][]float32, n)
	dets := make([]*Detector, n)
	for i := range dets {
		dets[i] = detector(t)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j+Window <= len(pcm); j += Window {
				p, err := dets[i].Prob(pcm[j : j+Window])
				if err != nil {
					t.Error(err)
					return
				}
				got[i] = append(got[i], p)
			}
		}()
	}
	wg.Wait()
	for i := range got {
		if !equal(got[i], want) {
			t.Errorf("concurrent detector %d: %v, want %v", i, got[i], want)
		}
	}
}

func TestWrongWindow(t *testing.T) {
	if _, err := detector(t).Prob(make([]int16, 480)); err == nil {
		t.Error("Prob(480 samples) succeeded, want an error")
	}
}

func equal(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-5 {
			return false
		}
	}
	return true
}

// BenchmarkWindow is the cost of one 32 ms decision, beside the baseline of converting
// the window to float (the part that is not the model).
func BenchmarkWindow(b *testing.B) {
	pcm := speechtest.Flite(b, "slt", "Benchmarking the voice activity detector with a sentence.")
	windows := len(pcm) / Window
	b.Run("silero", func(b *testing.B) {
		d := detector(b)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			w := i % windows
			if _, err := d.Prob(pcm[w*Window : (w+1)*Window]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/32000*100, "%realtime")
	})
	b.Run("silero-on-silence", func(b *testing.B) {
		d := detector(b)
		d.gate = 0
		silence := speechtest.Silence(Window)
		for b.Loop() {
			if _, err := d.Prob(silence); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/32000*100, "%realtime")
	})
	b.Run("gated-silence", func(b *testing.B) {
		d := detector(b)
		silence := speechtest.Silence(Window)
		for b.Loop() {
			if _, err := d.Prob(silence); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/32000*100, "%realtime")
	})
	b.Run("baseline-convert", func(b *testing.B) {
		buf := make([]float32, Window)
		for i := 0; i < b.N; i++ {
			w := i % windows
			for j, s := range pcm[w*Window : (w+1)*Window] {
				buf[j] = float32(s) / 32768
			}
		}
	})
}

// TestV6: the v6 model (PERSONA_VAD_MODEL=.cache/models/silero_vad_v6.onnx) takes the
// same inputs and also finds speech promptly.
func TestV6(t *testing.T) {
	m, err := Load(Config{ModelPath: strings.Replace(DefaultModelPath(), "silero_vad_v5", "silero_vad_v6", 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d, err := m.NewDetector()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	pcm := speechtest.Concat(speechtest.Silence(Rate), speechtest.Flite(t, "awb", "Hello, I would like to book a table for two."), speechtest.Silence(Rate))
	onset := speechtest.Onset(pcm)
	first := -1
	for i, p := range probs(t, d, pcm) {
		if p >= threshold {
			first = i
			break
		}
	}
	lag := ms((first+1)*Window - onset)
	t.Logf("v6: onset %v, lag %v", ms(onset), lag)
	if first < 0 || lag > 100*time.Millisecond || lag < -32*time.Millisecond {
		t.Errorf("v6 detected window %d, lag %v; want within 100ms of onset", first, lag)
	}
}

// TestDefaultsInRepository: with nothing configured, the repository's .cache copies are
// found from a package folder (make deps puts them there).
func TestDefaultsInRepository(t *testing.T) {
	for _, p := range []string{DefaultLibPath(), DefaultModelPath()} {
		if !strings.Contains(p, ".cache") {
			t.Errorf("default %s is not the repository's .cache copy", p)
		}
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	if _, err := Load(Config{ModelPath: "no/such/model.onnx"}); err == nil {
		t.Error("Load of a missing model succeeded")
	}
}

// TestLevelGate: with the level gate, the model is not run on a long digital silence,
// and speech after the silence is found on the same window as without the gate, or
// sooner (barge-in's onset is kept), with no speech found in the silence.
func TestLevelGate(t *testing.T) {
	off, err := Load(Config{Gate: "off"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = off.Close() })
	ungated, err := off.NewDetector()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ungated.Close() })
	gated := detector(t)
	if gated.gate == 0 {
		t.Fatal("the default detector has no level gate")
	}

	first := speechtest.ThroughOpus(t, speechtest.Flite(t, "slt", "What time does the store open tomorrow?"))
	second := speechtest.ThroughOpus(t, speechtest.Flite(t, "awb", "Hello, I would like to book a table for two."))
	third := speechtest.Flite(t, "rms", "Yes please.")
	var pcm []int16
	var starts, quiet []int // where each utterance's sound starts; its silence before
	for _, seg := range []struct {
		silence int
		speech  []int16
	}{{Rate, first}, {3 * Rate, second}, {GateSettle * Window * 3 / 2, third}} {
		quiet = append(quiet, len(pcm))
		pcm = speechtest.Concat(pcm, speechtest.Silence(seg.silence))
		starts = append(starts, len(pcm)+speechtest.Onset(seg.speech))
		pcm = speechtest.Concat(pcm, seg.speech)
	}
	pcm = speechtest.Concat(pcm, speechtest.Silence(Rate))
	want := probs(t, ungated, pcm)
	got := probs(t, gated, pcm)
	if ungated.runs != len(want) {
		t.Fatalf("without the gate the model ran %d times for %d windows", ungated.runs, len(want))
	}
	skipped := len(got) - gated.runs
	t.Logf("%d windows, the model ran %d with the gate", len(got), gated.runs)
	if least := len(got) / 4; skipped < least {
		t.Errorf("the gate saved %d runs, want at least %d", skipped, least)
	}
	onset := func(p []float32, from int) int {
		for i := from / Window; i < len(p); i++ {
			if p[i] >= threshold {
				return i
			}
		}
		return -1
	}
	for k, start := range starts {
		from := quiet[k] + 5*Window // the speech before has faded
		g, w := onset(got, from), onset(want, from)
		t.Logf("utterance %d at %v: found at window end %v with the gate, %v without", k, ms(start), ms((g+1)*Window), ms((w+1)*Window))
		switch {
		case g < 0:
			t.Errorf("utterance %d: not found with the gate", k)
		case (g+1)*Window <= start-Window:
			t.Errorf("utterance %d at %v: speech found at %v, in the silence before it", k, ms(start), ms((g+1)*Window))
		case w >= 0 && g > w:
			t.Errorf("utterance %d: found at window %d with the gate, %d without", k, g, w)
		}
	}
}

func TestGateLevel(t *testing.T) {
	for _, tc := range []struct {
		in   string
		rms  float64 // 0: off
		fail bool
	}{
		{"", 32.768, false},
		{"-60", 32.768, false},
		{" -40 ", 327.68, false},
		{"off", 0, false},
		{"6", 0, true},
		{"loud", 0, true},
		{"NaN", 0, true},
	} {
		ms, err := gateLevel(tc.in)
		if tc.fail {
			if err == nil {
				t.Errorf("gateLevel(%q) = %v, want an error", tc.in, ms)
			}
			continue
		}
		if err != nil || math.Abs(math.Sqrt(ms)-tc.rms) > 0.01 {
			t.Errorf("gateLevel(%q) = RMS %.2f, %v; want %.2f", tc.in, math.Sqrt(ms), err, tc.rms)
		}
	}
}
