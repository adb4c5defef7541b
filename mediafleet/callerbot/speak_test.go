package callerbot

import (
	"context"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/tts"
)

func TestTrimSilence(t *testing.T) {
	loud := make([]int16, 480) // 10 ms at 48 kHz
	for i := range loud {
		loud[i] = 8000
		if i%2 == 1 {
			loud[i] = -8000
		}
	}
	quiet := make([]int16, 480)
	for i := range quiet {
		quiet[i] = 20 // below the trim level, above digital silence
	}
	cat := func(parts ...[]int16) []int16 {
		var out []int16
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	for _, c := range []struct {
		name string
		in   []int16
		want int
	}{
		{"silence", cat(quiet, quiet), 0},
		{"both ends", cat(quiet, quiet, loud, quiet, loud, quiet), 3 * 480},
		{"nothing to trim", cat(loud, loud), 2 * 480},
		{"empty", nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := TrimSilence(c.in, 48000); len(got) != c.want {
				t.Errorf("kept %d samples, want %d", len(got), c.want)
			}
		})
	}
}

// Flite speaks; SpokenWAV wraps it with the silences asked for.
func TestFliteAndSpokenWAV(t *testing.T) {
	ctx := context.Background()
	pcm, err := Flite(ctx, "awb", "-hello there")
	if err != nil {
		t.Fatal(err)
	}
	if pcm.Rate != 16000 || pcm.Duration() < 300*time.Millisecond {
		t.Fatalf("flite = %d Hz, %v", pcm.Rate, pcm.Duration())
	}
	if _, err := Flite(ctx, "awb", "  "); err == nil {
		t.Error("flite of no text succeeded")
	}
	b, err := SpokenWAV(ctx, "awb", "hello there", time.Second, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	w, err := tts.DecodeWAV(b)
	if err != nil {
		t.Fatal(err)
	}
	if w.Rate != 48000 {
		t.Fatalf("WAV at %d Hz, want 48000", w.Rate)
	}
	speech := TrimSilence(w.Samples, 48000)
	lead := len(w.Samples)
	for i := range w.Samples {
		if &w.Samples[i] == &speech[0] {
			lead = i
			break
		}
	}
	if got := time.Duration(lead) * time.Second / 48000; got < time.Second || got > time.Second+20*time.Millisecond {
		t.Errorf("speech starts after %v of silence, want 1 s", got)
	}
}
