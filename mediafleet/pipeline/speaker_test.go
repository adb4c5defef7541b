package pipeline

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/pion/webrtc/v4/pkg/media"
)

func tone(d time.Duration, amp float64) []int16 {
	pcm := make([]int16, int(d.Seconds()*outRate))
	for i := range pcm {
		pcm[i] = int16(amp * 32767 * math.Sin(2*math.Pi*220*float64(i)/outRate))
	}
	return pcm
}

func TestSpeakerPlaysQueuedSpeechAndMovesTheMouth(t *testing.T) {
	var mu sync.Mutex
	var sent int
	s, err := newSpeaker(func(m media.Sample) error {
		mu.Lock()
		sent++
		mu.Unlock()
		if m.Duration != frameDur || len(m.Data) == 0 {
			t.Errorf("sample of %v with %d bytes, want 20 ms of Opus", m.Duration, len(m.Data))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.run(ctx) }()
	defer func() { cancel(); <-done }()

	u := s.say(tone(300*time.Millisecond, 0.5))
	if !s.speaking() {
		t.Error("speaking() = false with speech queued")
	}
	peak := 0.0
	for open := true; open; {
		select {
		case <-u.done:
			open = false
		case <-time.After(10 * time.Millisecond):
			peak = max(peak, s.Mouth())
		}
	}
	select {
	case <-u.started:
	default:
		t.Error("played, but its start was not told")
	}
	if p := s.progress(u); p.Start.IsZero() || p.End.Sub(p.Start) < 260*time.Millisecond || p.Played != p.Total || p.Cut {
		t.Errorf("progress %+v: played %v, want all of it, about 300 ms", p, p.End.Sub(p.Start))
	}
	if peak < 0.6 {
		t.Errorf("mouth peaked at %.2f during loud speech, want it wide open", peak)
	}
	eventuallyTrue(t, time.Second, func() bool { return s.Mouth() < 0.05 })
	if s.speaking() {
		t.Error("speaking() = true after the speech played")
	}
	mu.Lock()
	if sent < 15 {
		t.Errorf("%d frames sent, want a steady 20 ms stream", sent)
	}
	mu.Unlock()
}

func TestSpeakerCut(t *testing.T) {
	s, err := newSpeaker(func(media.Sample) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.run(ctx) }()
	defer func() { cancel(); <-done }()

	long := s.say(tone(5*time.Second, 0.5))
	next := s.say(tone(100*time.Millisecond, 0.5))
	<-long.started
	s.cut(long)
	select {
	case <-long.done:
	case <-time.After(time.Second):
		t.Fatal("cut utterance not done")
	}
	select {
	case <-next.done: // the queue moved on
	case <-time.After(2 * time.Second):
		t.Fatal("the utterance after a cut one never played")
	}
}

func TestOpenness(t *testing.T) {
	if got := openness(make([]int16, frameLen)); got != 0 {
		t.Errorf("openness(silence) = %v, want 0", got)
	}
	quiet, loud := openness(tone(20*time.Millisecond, 0.01)), openness(tone(20*time.Millisecond, 0.5))
	if !(quiet < 0.5 && loud > 0.9) {
		t.Errorf("openness quiet/loud = %.2f/%.2f, want low and near 1", quiet, loud)
	}
}

func eventuallyTrue(t *testing.T, within time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
	}
}

func TestSpeakerPausesResumesAndCuts(t *testing.T) {
	var mu sync.Mutex
	sent := 0
	s, err := newSpeaker(func(media.Sample) error { mu.Lock(); sent++; mu.Unlock(); return nil })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.run(ctx) }()
	defer func() { cancel(); <-done }()

	u := s.say(tone(time.Second, 0.5)) // 50 frames
	time.Sleep(200 * time.Millisecond)
	s.pause()
	time.Sleep(40 * time.Millisecond) // a frame in flight may still go
	at := s.progress(u)
	time.Sleep(200 * time.Millisecond)
	if still := s.progress(u); still.Played != at.Played || at.Played == 0 || at.Played >= at.Total {
		t.Fatalf("paused at %d/%d frames, %d after 200 ms more: want it held part way", at.Played, at.Total, still.Played)
	}
	mu.Lock()
	before := sent
	mu.Unlock()
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	if sent-before < 3 {
		t.Errorf("%d frames sent in 100 ms while paused: silence must keep going out", sent-before)
	}
	mu.Unlock()

	s.resume()
	time.Sleep(200 * time.Millisecond)
	resumed := s.progress(u)
	if resumed.Played <= at.Played {
		t.Fatalf("resumed: %d frames played, still %d", resumed.Played, at.Played)
	}
	s.cut(u)
	<-u.done
	p := s.progress(u)
	if !p.Cut || p.Played >= p.Total || p.End.Before(p.Start) || s.speaking() {
		t.Errorf("after cut: %+v speaking %v, want cut part way and the queue empty", p, s.speaking())
	}
	if f := p.Fraction(); f <= 0 || f >= 1 {
		t.Errorf("fraction %.2f, want between 0 and 1", f)
	}
}

func TestTrimSilence(t *testing.T) {
	ms := func(d int) int { return outRate * d / 1000 }
	cat := func(parts ...[]int16) []int16 {
		var out []int16
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	quiet := func(d time.Duration) []int16 { return make([]int16, int(d.Seconds()*outRate)) }
	hiss := func(d time.Duration) []int16 { return tone(d, 0.001) } // under trimRMS
	tests := []struct {
		name             string
		pcm              []int16
		wantLen          int
		wantLeadSilentMS int // samples before the first loud one, in ms
	}{
		{"flite's leading pause and trailing silence", cat(quiet(200*time.Millisecond), tone(500*time.Millisecond, 0.3), quiet(190*time.Millisecond)),
			ms(10) + ms(500) + ms(120), 10},
		{"hiss counts as silence", cat(hiss(250*time.Millisecond), tone(300*time.Millisecond, 0.3), hiss(50*time.Millisecond)),
			ms(10) + ms(300) + ms(50), 10},
		{"no silence to trim", tone(300*time.Millisecond, 0.3), ms(300), 0},
		{"a short lead is kept whole", cat(quiet(5*time.Millisecond), tone(300*time.Millisecond, 0.3)), ms(5) + ms(300), 5},
		{"all silence is left as it is", quiet(300 * time.Millisecond), ms(300), -1},
		{"empty", nil, 0, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := trimSilence(tc.pcm)
			if len(got) != tc.wantLen {
				t.Errorf("trimmed to %d samples (%.1f ms), want %d (%.1f ms)", len(got), float64(len(got))*1000/outRate, tc.wantLen, float64(tc.wantLen)*1000/outRate)
			}
			lead := -1
			for i, v := range got {
				if v > 100 || v < -100 {
					lead = i
					break
				}
			}
			// The tone starts at a zero crossing: its first loud sample is a few samples in.
			if tc.wantLeadSilentMS < 0 {
				if lead >= 0 {
					t.Errorf("found sound at sample %d, want none", lead)
				}
				return
			}
			if lead < ms(tc.wantLeadSilentMS) || lead > ms(tc.wantLeadSilentMS)+ms(1) {
				t.Errorf("first sound at %.2f ms, want %d ms of silence kept before it", float64(lead)*1000/outRate, tc.wantLeadSilentMS)
			}
		})
	}
}
