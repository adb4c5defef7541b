package pipeline

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/webrtc/v4/pkg/media"

	"github.com/bridgeline/bridgeline/mediafleet/avatar"
	"github.com/bridgeline/bridgeline/mediafleet/vp8"
)

// screen is what the video track shows.
type screen int32

const (
	showConnecting screen = iota
	showAvatar
)

// painter draws, encodes and sends the video track: the connecting screen until the call
// is verified, then the avatar with its mouth following the speaker.
type painter struct {
	w, h, fps int
	// idleFPS is the rate the avatar is sent at while nothing on it changes (no blink, the
	// mouth still): a still frame is neither drawn nor encoded again until 1/idleFPS
	// after the last one sent. At fps or more, every frame is drawn.
	idleFPS    int
	enc        *vp8.Encoder
	out        sampleWriter
	connecting *avatar.Connecting
	scene      avatar.Renderer
	mouth      func() float64
	firstFrame func(at time.Time, s screen) // called once per screen, after its first frame went out

	show     atomic.Int32
	avatarAt atomic.Int64 // unix nanos when the avatar was switched on
	keyframe atomic.Bool  // a receiver asked for one (PLI/FIR), or the screen changed

	mu      sync.Mutex
	waiters []chan time.Time // told when the next keyframe went out
}

// nextKeyframe forces a keyframe and returns a channel that receives the time it went
// out.
func (p *painter) nextKeyframe() <-chan time.Time {
	ch := make(chan time.Time, 1)
	p.mu.Lock()
	p.waiters = append(p.waiters, ch)
	p.mu.Unlock()
	p.keyframe.Store(true)
	return ch
}

func (p *painter) keyframeSent(at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ch := range p.waiters {
		ch <- at
	}
	p.waiters = nil
}

// showAvatar switches to the avatar from the next frame on.
func (p *painter) showAvatar(now time.Time) {
	p.avatarAt.Store(now.UnixNano())
	p.show.Store(int32(showAvatar))
	p.keyframe.Store(true)
}

// run sends frames at the configured rate until ctx ends.
func (p *painter) run(ctx context.Context) {
	defer p.enc.Close()
	interval := time.Second / time.Duration(p.fps)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	frame := avatar.NewFrame(p.w, p.h)
	start := time.Now()
	var sent [2]bool
	stillEvery := interval
	if p.idleFPS > 0 && p.idleFPS < p.fps {
		stillEvery = time.Second / time.Duration(p.idleFPS)
	}
	// The avatar frame last sent: what it showed and when.
	var last struct {
		ok    bool
		still avatar.Still
		at    time.Time
	}
	for i := 0; ; i++ {
		now := time.Now()
		s := screen(p.show.Load())
		draw := true
		if s == showAvatar {
			t := now.Sub(time.Unix(0, p.avatarAt.Load()))
			mouth := quantizeMouth(p.mouth())
			still := p.scene.Still(t, mouth)
			// The same picture as the last frame sent: skip it, unless a keyframe is due
			// or the still rate asks for one (receivers and the SFU's stream tracker take
			// a track that sends nothing for long as stopped).
			if last.ok && still == last.still && !p.keyframe.Load() &&
				now.Sub(last.at) < stillEvery-interval/2 {
				draw = false
			} else {
				p.scene.Draw(frame, t, mouth)
				last.ok, last.still, last.at = true, still, now
			}
		} else {
			p.connecting.Draw(frame, now.Sub(start))
		}
		if !draw {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			continue
		}
		key := p.keyframe.Swap(false) || i == 0
		data, isKey, err := p.enc.Encode(frame, now.Sub(start), key)
		// Timestamp: the RTP time follows the wall clock across skipped still frames.
		if err == nil && len(data) > 0 && p.out(media.Sample{Data: data, Duration: interval, Timestamp: now}) == nil {
			if isKey {
				p.keyframeSent(now)
			}
			if !sent[s] {
				sent[s] = true
				if p.firstFrame != nil {
					p.firstFrame(now, s)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// quantizeMouth rounds the speaker's mouth opening to the 1/64 steps the avatar can show
// apart, so that a still mouth compares equal from frame to frame.
func quantizeMouth(m float64) float64 {
	return math.Round(max(0, min(1, m))*64) / 64
}
