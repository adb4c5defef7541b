package conversation

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// probVAD scores a window by its first sample, in thousandths.
type probVAD struct{}

func (probVAD) WindowSize() int                 { return 512 }
func (probVAD) Prob(w []int16) (float32, error) { return float32(w[0]) / 1000, nil }
func (probVAD) Reset()                          {}
func (probVAD) Close() error                    { return nil }

// TestListener: the first stage alone. Each window is scored by the probability in its
// samples; the listener says where turns start (with the padding before them), goes on
// and end.
func TestListener(t *testing.T) {
	const win = 32 * time.Millisecond
	tests := []struct {
		name  string
		probs []int // per window, in thousandths
		want  string
	}{
		{"silence says nothing", []int{0, 100, 490}, ""},
		{"an onset opens a turn with up to 256 ms of padding before it",
			[]int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 600},
			"start@320ms+8pad"},
		{"speech goes on down to 0.35, and 400 ms of silence ends it",
			append([]int{600, 360}, repeat(0, 13)...),
			"start@0s+0pad on(1024) on(1024) on(1024) on(1024) on(1024) on(1024) on(1024) on(1024) on(1024) on(1024) on(1024) on(1024) on(1024) on(1024) end@480ms(last 64ms)"},
		{"a pause shorter than the end of turn keeps it open",
			append(append([]int{600}, repeat(0, 12)...), 600),
			"start@0s+0pad on(512) on(512) on(512) on(512) on(512) on(512) on(512) on(512) on(512) on(512) on(512) on(512) on(7168)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := listener{vad: probVAD{}, threshold: 0.5, endOfTurn: samples(400 * time.Millisecond),
				maxTurn: samples(time.Second), padding: samples(256 * time.Millisecond), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			t0 := time.Unix(0, 0)
			var got []string
			for i, p := range tt.probs {
				w := make([]int16, 512)
				w[0] = int16(p)
				for _, m := range l.hear(w, t0.Add(time.Duration(i+1)*win)) {
					got = append(got, describe(m, t0))
				}
			}
			if g := strings.Join(got, " "); g != tt.want {
				t.Errorf("got  %s\nwant %s", g, tt.want)
			}
		})
	}
}

// TestListenerHoldsTheFloorPastTheMaximumTurn: a turn cut at the maximum turn ends, and
// the speech that goes on is no new turn until the caller pauses.
func TestListenerHoldsTheFloorPastTheMaximumTurn(t *testing.T) {
	l := listener{vad: probVAD{}, threshold: 0.5, endOfTurn: samples(400 * time.Millisecond),
		maxTurn: samples(time.Second), padding: 0, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	t0 := time.Unix(0, 0)
	var ends, starts int
	for i, p := range append(append(repeat(600, 40), 0), 600) {
		w := make([]int16, 512)
		w[0] = int16(p)
		for _, m := range l.hear(w, t0.Add(time.Duration(i+1)*32*time.Millisecond)) {
			switch m.(type) {
			case turnEnded:
				ends++
				if i != 31 {
					t.Errorf("turn ended at window %d, want at 1 s, window 31", i)
				}
			case speechStarted:
				starts++
				if starts == 2 && i != 41 {
					t.Errorf("second turn started at window %d, want after the pause, window 41", i)
				}
			}
		}
	}
	if ends != 1 || starts != 2 {
		t.Errorf("%d turns ended and %d started, want 1 cut at the maximum and a new one after the pause", ends, starts)
	}
}

func repeat(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func describe(m heard, t0 time.Time) string {
	switch m := m.(type) {
	case speechStarted:
		return fmt.Sprintf("start@%v+%dpad", m.onset.Sub(t0), len(m.audio)-1)
	case speechGoesOn:
		return fmt.Sprintf("on(%d)", m.spoken)
	case turnEnded:
		return fmt.Sprintf("end@%v(last %v)", m.at.Sub(t0), m.lastSpeech.Sub(t0))
	}
	return "?"
}
