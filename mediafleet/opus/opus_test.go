package opus

import (
	"math"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	enc, err := NewEncoder(48000, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	dec, err := NewDecoder(16000, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()

	// 0.5 s of a 440 Hz tone in 20 ms frames, decoded at 16 kHz.
	frame := make([]int16, 960)
	pkt := make([]byte, MaxPacket)
	out := make([]int16, dec.MaxFrame())
	var decoded []int16
	for i := range 25 {
		for j := range frame {
			n := i*960 + j
			frame[j] = int16(8000 * math.Sin(2*math.Pi*440*float64(n)/48000))
		}
		n, err := enc.Encode(frame, pkt)
		if err != nil {
			t.Fatal(err)
		}
		got, err := dec.Decode(pkt[:n], out)
		if err != nil {
			t.Fatal(err)
		}
		if got != 320 {
			t.Fatalf("Decode = %d samples, want 320 (20 ms at 16 kHz)", got)
		}
		decoded = append(decoded, out[:got]...)
	}
	// Count zero crossings in the last 0.25 s: 440 Hz gives about 220.
	tail := decoded[len(decoded)-4000:]
	crossings := 0
	for i := 1; i < len(tail); i++ {
		if (tail[i-1] < 0) != (tail[i] < 0) {
			crossings++
		}
	}
	if crossings < 200 || crossings > 240 {
		t.Errorf("zero crossings in 0.25 s = %d, want about 220 (a 440 Hz tone)", crossings)
	}
}
