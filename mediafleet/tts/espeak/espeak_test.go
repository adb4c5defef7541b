package espeak

import (
	"context"
	"testing"
	"time"
)

func TestSynthesize(t *testing.T) {
	s := &Synthesizer{Voice: "en-us+f3"}
	pcm, err := s.Synthesize(context.Background(), "Hello, thank you for calling.")
	if err != nil {
		t.Fatal(err)
	}
	if pcm.Rate != 22050 {
		t.Errorf("Rate = %d, want 22050", pcm.Rate)
	}
	if d := pcm.Duration(); d < 800*time.Millisecond || d > 4*time.Second {
		t.Errorf("Duration = %v, want a second or two of speech", d)
	}
	var peak int16
	for _, v := range pcm.Samples {
		peak = max(peak, v, -v)
	}
	if peak < 3000 {
		t.Errorf("peak amplitude = %d, want audible speech", peak)
	}
}

func TestSynthesizeRejectsEmpty(t *testing.T) {
	if _, err := (&Synthesizer{}).Synthesize(context.Background(), "  "); err == nil {
		t.Error("Synthesize(blank) = nil error, want an error")
	}
}

func TestTextIsNotAnOption(t *testing.T) {
	// A greeting that looks like a flag is spoken, not obeyed.
	pcm, err := (&Synthesizer{}).Synthesize(context.Background(), "--version")
	if err != nil {
		t.Fatal(err)
	}
	if len(pcm.Samples) == 0 {
		t.Error("no audio for a greeting starting with dashes")
	}
}
