package resample

import (
	"math"
	"slices"
	"testing"
)

func TestMono(t *testing.T) {
	in := make([]int16, 22050) // 1 s of 300 Hz at 22050 Hz
	for i := range in {
		in[i] = int16(10000 * math.Sin(2*math.Pi*300*float64(i)/22050))
	}
	out, err := Mono(in, 22050, 48000)
	if err != nil {
		t.Fatal(err)
	}
	if d := len(out) - 48000; d < -50 || d > 50 {
		t.Errorf("len(out) = %d, want about 48000", len(out))
	}
	crossings := 0
	for i := 1000; i < 47000; i++ {
		if (out[i-1] < 0) != (out[i] < 0) {
			crossings++
		}
	}
	// 300 Hz over 46000/48000 s: about 575 crossings.
	if crossings < 560 || crossings > 590 {
		t.Errorf("zero crossings = %d, want about 575 (the tone keeps its pitch)", crossings)
	}
}

// TestMonoIsDeterministic: the same clip resamples to the same samples every time (no
// random dither), so a test's caller says exactly the same audio in every run.
func TestMonoIsDeterministic(t *testing.T) {
	in := make([]int16, 16000)
	for i := range in {
		in[i] = int16(3000*math.Sin(2*math.Pi*220*float64(i)/16000) + 700*math.Sin(2*math.Pi*1330*float64(i)/16000))
	}
	first, err := Mono(in, 16000, 48000)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		again, err := Mono(in, 16000, 48000)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(first, again) {
			t.Fatal("the same clip resampled to different samples")
		}
	}
}
