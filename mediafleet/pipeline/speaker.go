package pipeline

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/webrtc/v4/pkg/media"

	"github.com/bridgeline/bridgeline/mediafleet/opus"
	"github.com/bridgeline/bridgeline/mediafleet/speech"
)

// Audio out runs at Opus's native rate in 20 ms frames.
const (
	outRate     = 48000
	frameDur    = 20 * time.Millisecond
	frameLen    = outRate * int(frameDur/time.Millisecond) / 1000 // 960
	mouthFloorD = -48.0                                           // dBFS at which the mouth is shut
	mouthRangeD = 30.0                                            // dB from shut to wide open
)

// sampleWriter writes one encoded sample to a published track.
type sampleWriter func(s media.Sample) error

// utterance is one queued piece of speech. next, startedAt, lastAt and cut are guarded
// by the speaker's mutex once queued.
type utterance struct {
	frames    [][]int16
	next      int           // frames sent so far
	started   chan struct{} // closed when the first frame went out
	done      chan struct{} // closed when the last frame went out, it was cut, or the call ended
	startedAt time.Time     // first frame sent
	lastAt    time.Time     // latest frame sent
	cut       bool          // dropped before its end (barge-in)
}

// speaker paces audio out of the track: every 20 ms it sends the next frame of the queued
// speech, or silence, and updates the loudness that drives the avatar's mouth. Sending
// silence keeps the stream's timing steady for the caller's jitter buffer.
type speaker struct {
	enc    *opus.Encoder
	out    sampleWriter
	mu     sync.Mutex
	queue  []*utterance
	paused bool          // barge-in: silence goes out, the queue waits where it is
	mouth  atomic.Uint64 // float64 bits, 0..1
	// tap, when set, is handed every frame sent, speech or silence, with the time it was
	// sent (the call's recording). Set before run.
	tap func(pcm []int16, at time.Time)
}

func newSpeaker(out sampleWriter) (*speaker, error) {
	enc, err := opus.NewEncoder(outRate, 1)
	if err != nil {
		return nil, err
	}
	if err := enc.SetBitrate(32000); err != nil {
		enc.Close()
		return nil, err
	}
	return &speaker{enc: enc, out: out}, nil
}

// Silence kept at the ends of synthesised speech (trimSilence).
const (
	// keepLead is left before the first sound: the onset's soft start, which the level
	// test can miss, is not clipped.
	keepLead = 10 * time.Millisecond
	// keepTail is left after the last sound: the pause between one sentence and the next
	// queued after it.
	keepTail = 120 * time.Millisecond
	// trimRMS is the level (of full scale) of a 5 ms window below which it is silence:
	// under the quietest consonant the synthesizers make, above their digital silence.
	trimRMS = 0.003
)

// trimSilence drops the silence synthesizers put around speech beyond keepLead before
// it and keepTail after it. flite opens every utterance with its initial pause segment,
// 150-275 ms of silence: played as it is, the caller waits that long for the first sound
// after the first frame is sent. Audio with no sound in it is returned as it is.
func trimSilence(pcm []int16) []int16 {
	win := outRate / 200 // 5 ms
	first, last := -1, -1
	for i := 0; i+win <= len(pcm); i += win {
		if rms(pcm[i:i+win]) > trimRMS {
			if first < 0 {
				first = i
			}
			last = i + win
		}
	}
	if first < 0 {
		return pcm
	}
	from := max(0, first-outRate*int(keepLead/time.Millisecond)/1000)
	to := min(len(pcm), last+outRate*int(keepTail/time.Millisecond)/1000)
	return pcm[from:to]
}

// say queues pcm (48 kHz mono), its silence trimmed (trimSilence), and returns the
// utterance; wait on its done channel.
func (s *speaker) say(pcm []int16) *utterance {
	pcm = trimSilence(pcm)
	u := &utterance{started: make(chan struct{}), done: make(chan struct{})}
	for i := 0; i < len(pcm); i += frameLen {
		f := make([]int16, frameLen)
		copy(f, pcm[i:min(i+frameLen, len(pcm))])
		u.frames = append(u.frames, f)
	}
	s.mu.Lock()
	s.queue = append(s.queue, u)
	s.mu.Unlock()
	return u
}

// cut drops u from the queue (barge-in, hang-up); the rest of it is never played.
func (s *speaker) cut(u *utterance) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, q := range s.queue {
		if q == u {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			u.cut = true
			close(u.done)
			return
		}
	}
}

// cutAll drops everything queued.
func (s *speaker) cutAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.queue {
		u.cut = true
		close(u.done)
	}
	s.queue = nil
}

// pause stops the speech at the next frame: silence goes out and the queue keeps its
// place, so resume carries on where it stopped (a cough) and cut drops the rest
// (barge-in). A frame already handed to the track still plays: at most 20 ms.
func (s *speaker) pause() {
	s.mu.Lock()
	s.paused = true
	s.mu.Unlock()
}

// resume undoes pause.
func (s *speaker) resume() {
	s.mu.Lock()
	s.paused = false
	s.mu.Unlock()
}

// speaking reports whether speech is queued or playing.
func (s *speaker) speaking() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue) > 0
}

// progress is how much of u has been sent.
func (s *speaker) progress(u *utterance) speech.Progress {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := speech.Progress{Played: u.next, Total: len(u.frames), Start: u.startedAt, Cut: u.cut}
	if u.next > 0 {
		p.End = u.lastAt.Add(frameDur)
	}
	return p
}

// Mouth is how open the mouth should be now, 0..1.
func (s *speaker) Mouth() float64 { return math.Float64frombits(s.mouth.Load()) }

// next pops the next frame to send, or nil for silence.
func (s *speaker) next(now time.Time) []int16 {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.queue) > 0 && !s.paused {
		u := s.queue[0]
		if u.next < len(u.frames) {
			f := u.frames[u.next]
			if u.next == 0 {
				u.startedAt = now
				close(u.started)
			}
			u.next++
			u.lastAt = now
			return f
		}
		s.queue = s.queue[1:]
		close(u.done)
	}
	return nil
}

// run sends a frame every 20 ms until ctx ends.
func (s *speaker) run(ctx context.Context) {
	defer s.enc.Close()
	silence := make([]int16, frameLen)
	pkt := make([]byte, opus.MaxPacket)
	tick := time.NewTicker(frameDur)
	defer tick.Stop()
	level := 0.0
	for {
		now := time.Now()
		f := s.next(now)
		if f == nil {
			f = silence
		}
		if s.tap != nil {
			s.tap(f, now)
		}
		level = smooth(level, openness(f))
		s.mouth.Store(math.Float64bits(level))
		if n, err := s.enc.Encode(f, pkt); err == nil {
			_ = s.out(media.Sample{Data: append([]byte(nil), pkt[:n]...), Duration: frameDur})
		}
		select {
		case <-ctx.Done():
			s.mu.Lock()
			// The call is over: what did not play is dropped, but nobody talked over it.
			for _, u := range s.queue {
				close(u.done)
			}
			s.queue = nil
			s.mu.Unlock()
			return
		case <-tick.C:
		}
	}
}

// openness maps a frame's loudness to mouth opening.
func openness(f []int16) float64 {
	level := rms(f)
	if level <= 0 {
		return 0
	}
	db := 20 * math.Log10(level)
	return math.Max(0, math.Min(1, (db-mouthFloorD)/mouthRangeD))
}

// smooth opens the mouth quickly and lets it close a little slower, as lips do.
func smooth(prev, target float64) float64 {
	if target > prev {
		return prev + 0.7*(target-prev)
	}
	return prev + 0.35*(target-prev)
}
