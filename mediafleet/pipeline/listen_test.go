package pipeline

import (
	"testing"
	"time"
)

// TestTimelineFillsSilence: packets that follow each other hand on their audio alone; a
// DTX gap (one packet every 400 ms while the caller is quiet) is filled with silence in
// real time once nothing has come for a while, and the rest of it when the next packet
// shows how long it was; a late packet adds nothing.
func TestTimelineFillsSilence(t *testing.T) {
	const frame = 320 // 20 ms at 16 kHz
	var got []int     // lengths of what was handed on; negative for silence
	tl := &timeline{emit: func(pcm []int16) {
		silent := true
		for _, v := range pcm {
			if v != 0 {
				silent = false
			}
		}
		if silent {
			got = append(got, -len(pcm))
		} else {
			got = append(got, len(pcm))
		}
	}}
	voice := make([]int16, frame)
	for i := range voice {
		voice[i] = 1000
	}
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	const ticks20ms = 960 // RTP timestamp per 20 ms at 48 kHz

	steps := []struct {
		name string
		do   func()
		want []int
	}{
		{"first packet", func() { tl.packet(0, ms(0), voice) }, []int{frame}},
		{"the next, on time", func() { tl.packet(ticks20ms, ms(20), voice) }, []int{frame}},
		{"a tick within the jitter allowance", func() { tl.tick(ms(90)) }, nil},
		{"the next, 50 ms late but contiguous", func() { tl.packet(2*ticks20ms, ms(90), voice) }, []int{frame}},
		// DTX: the caller stops talking; nothing comes for 400 ms.
		{"a tick 60 ms past the last audio", func() { tl.tick(ms(170)) }, []int{-960}},                                    // 60 ms: 170 - (90 + 20)
		{"a tick 20 ms later", func() { tl.tick(ms(190)) }, []int{-320}},                                                  // up to 80 ms
		{"the DTX packet 400 ms on", func() { tl.packet(2*ticks20ms+20*ticks20ms, ms(490), voice) }, []int{-4800, frame}}, // the 380 ms gap (400 - 20 of audio) less the 80 ms filled
		{"a reordered, older packet", func() { tl.packet(ticks20ms, ms(495), voice) }, []int{frame}},
		{"the next after the DTX packet", func() { tl.packet(23*ticks20ms, ms(510), voice) }, []int{frame}},
	}
	for _, s := range steps {
		got = nil
		s.do()
		if len(got) != len(s.want) {
			t.Errorf("%s: handed on %v, want %v", s.name, got, s.want)
			continue
		}
		for i := range got {
			if got[i] != s.want[i] {
				t.Errorf("%s: handed on %v, want %v", s.name, got, s.want)
				break
			}
		}
	}
}
