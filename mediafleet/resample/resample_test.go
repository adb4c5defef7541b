package resample

import (
	"math"
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
