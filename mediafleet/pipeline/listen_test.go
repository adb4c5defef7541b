package pipeline

import (
	"testing"
	"time"
)

// TestTimelineFillsSilence: packets that follow each other hand on their audio alone;
// packets that stop while the caller talks are late, not silence: nothing is filled in
// before stallAfter, so the late audio joins the words before it, and a longer stall is
// silence; a DTX gap (one packet every 400 ms while the caller is quiet, after the
// encoder's quiet frames) is filled with silence in real time once nothing has come for
// fillAfter, and the rest of it when the next packet shows how long it was; a late
// packet adds nothing.
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
	voice, hush := make([]int16, frame), make([]int16, frame)
	for i := range voice {
		voice[i], hush[i] = 1000, 50 // 0.03 and 0.0015 of full scale
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
		// A stall while the caller talks: nothing comes for 500 ms, then the packets.
		{"a tick 60 ms past the last voice", func() { tl.tick(ms(170)) }, nil},
		{"a tick 480 ms past it", func() { tl.tick(ms(590)) }, nil},
		{"the next, 500 ms late but contiguous", func() { tl.packet(3*ticks20ms, ms(610), voice) }, []int{frame}},
		{"the one after, at once", func() { tl.packet(4*ticks20ms, ms(611), voice) }, []int{frame}},
		// Audio that really stops in the middle of a word is silence after stallAfter.
		{"a tick 1980 ms past the last voice", func() { tl.tick(ms(2611)) }, nil},
		{"a tick 2 s past it", func() { tl.tick(ms(2651)) }, []int{-32320}}, // 2020 ms: 2651 - (611 + 20)
		{"the voice again", func() { tl.packet(5*ticks20ms+101*ticks20ms, ms(2660), voice) }, []int{frame}},
		// The caller stops talking: the encoder sends 200 ms of quiet frames, then DTX:
		// nothing comes for 400 ms.
		{"quiet frames", func() {
			for i := range 10 {
				tl.packet(uint32(107+i)*ticks20ms, ms(2680+20*i), hush)
			}
		}, []int{frame, frame, frame, frame, frame, frame, frame, frame, frame, frame}},
		{"a tick 60 ms past the last audio", func() { tl.tick(ms(2940)) }, []int{-960}},                                     // 60 ms: 2940 - (2860 + 20)
		{"a tick 20 ms later", func() { tl.tick(ms(2960)) }, []int{-320}},                                                   // up to 80 ms
		{"the DTX packet 400 ms on", func() { tl.packet(117*ticks20ms+19*ticks20ms, ms(3260), hush) }, []int{-4800, frame}}, // the 380 ms gap (400 - 20 of audio) less the 80 ms filled
		{"a reordered, older packet", func() { tl.packet(ticks20ms, ms(3265), voice) }, []int{frame}},
		{"the next after the DTX packet", func() { tl.packet(137*ticks20ms, ms(3280), voice) }, []int{frame}},
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
	// Where nothing came for stallAfter while the caller talked: one stall, 2020 ms.
	if st := tl.stats; st.stalls != 1 || st.stalled != 32320 {
		t.Errorf("stats: %d stalls of %d samples, want 1 of 32320", st.stalls, st.stalled)
	}
}

// TestAudioStatsCountLossBySequence: a jump in sequence numbers is packets lost, one
// behind the highest is late; sequence numbers wrap.
func TestAudioStatsCountLossBySequence(t *testing.T) {
	var st audioStats
	for _, seq := range []uint16{65533, 65534, 65535, 0, 3, 2, 4, 5} {
		st.count(seq)
	}
	if st.packets != 8 || st.lost != 2 || st.late != 1 {
		t.Errorf("%d packets, %d lost, %d late; want 8, 2 and 1", st.packets, st.lost, st.late)
	}
}
