package speech_test

import (
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
)

func TestHeard(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		fraction float64
		want     string
	}{
		{"all", "Our shop opens at nine.", 1, "Our shop opens at nine."},
		{"none", "Our shop opens at nine.", 0, ""},
		{"past half, at a word boundary", "Our shop opens at nine.", 0.6, "Our shop opens"},
		{"a little", "Our shop opens at nine.", 0.1, "Our"},
		{"almost nothing", "Our shop opens at nine.", 0.02, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := speech.Heard(tt.text, tt.fraction); got != tt.want {
				t.Errorf("Heard(%q, %.2f) = %q, want %q", tt.text, tt.fraction, got, tt.want)
			}
		})
	}
}

// played is a Playback that played as its Progress says.
type played struct{ p speech.Progress }

func (p played) Started() <-chan struct{}  { return nil }
func (p played) Done() <-chan struct{}     { return nil }
func (p played) Progress() speech.Progress { return p.p }
func (p played) Cut()                      {}

func TestHeardWords(t *testing.T) {
	t0 := time.Unix(100, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	first := speech.Said{Text: "We open at nine.", Playback: played{speech.Progress{Played: 50, Total: 50, Start: at(0), End: at(1000)}}}
	second := speech.Said{Text: "Dr. Rose closes at six.", Playback: played{speech.Progress{Played: 30, Total: 50, Start: at(1100), End: at(1700), Cut: true}}}
	third := speech.Said{Text: "Goodbye.", Playback: played{speech.Progress{Total: 20, Cut: true}}}
	tests := []struct {
		name        string
		pieces      []speech.Said
		want        speech.Words
		played, cut bool
	}{
		{"all of one", []speech.Said{first}, speech.Words{Speaker: speech.Assistant, Text: "We open at nine.", Start: at(0), End: at(1000)}, true, false},
		{"cut in the second, the third never played", []speech.Said{first, second, third},
			speech.Words{Speaker: speech.Assistant, Text: "We open at nine. Dr. Rose closes", Start: at(0), End: at(1700)}, true, true},
		{"nothing played", []speech.Said{third}, speech.Words{Speaker: speech.Assistant}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, p, c := speech.HeardWords(tt.pieces)
			if w != tt.want || p != tt.played || c != tt.cut {
				t.Errorf("HeardWords = %+v played %v cut %v, want %+v %v %v", w, p, c, tt.want, tt.played, tt.cut)
			}
		})
	}
}
