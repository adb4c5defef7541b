package pipeline

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/bridgeline/bridgeline/mediafleet/opus"
	"github.com/bridgeline/bridgeline/mediafleet/speech"
)

// verifyFrames is how many caller audio packets must decode before the call's inbound
// media counts as verified (100 ms of 20 ms packets).
const verifyFrames = 5

// listener decodes the caller's audio: the proof that media flows in, and the input of
// the conversation.
type listener struct {
	frames   chan []int16 // 16 kHz mono; dropped when nobody keeps up
	decoded  atomic.Int64
	verified chan struct{}
	once     sync.Once
	// tap, when set, is handed all the audio handed on, as it is (the call's recording),
	// with the time its first sample was heard.
	tap func(pcm []int16, at time.Time)
}

func newListener(tap func(pcm []int16, at time.Time)) *listener {
	return &listener{frames: make(chan []int16, 256), verified: make(chan struct{}), tap: tap}
}

// read decodes track until it ends (the caller unpublished, or the room connection
// closed). Silence the caller's client did not send is filled in (see timeline), in real
// time while nothing arrives. It returns what went wrong on the way in.
func (l *listener) read(track *webrtc.TrackRemote) audioStats {
	dec, err := opus.NewDecoder(speech.Rate, 1)
	if err != nil {
		return audioStats{}
	}
	defer dec.Close()
	tl := &timeline{emit: l.emit}
	done := make(chan struct{})
	filled := make(chan struct{})
	go func() {
		defer close(filled)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				tl.tick(now)
			}
		}
	}()
	defer func() { close(done); <-filled }()
	pcm := make([]int16, dec.MaxFrame())
	var st audioStats
	for {
		pkt, _, err := track.ReadRTP()
		if err != nil {
			tl.mu.Lock()
			defer tl.mu.Unlock()
			st.stalls, st.stalled = tl.stats.stalls, tl.stats.stalled
			return st
		}
		st.count(pkt.SequenceNumber)
		if len(pkt.Payload) == 0 {
			continue
		}
		n, err := dec.Decode(pkt.Payload, pcm)
		if err != nil || n == 0 {
			continue
		}
		if l.decoded.Add(1) >= verifyFrames {
			l.once.Do(func() { close(l.verified) })
		}
		tl.packet(pkt.Timestamp, time.Now(), pcm[:n])
	}
}

// count notes a packet's sequence number against the highest so far: a jump forward
// is packets lost, one behind it a late packet (a packet resent after it was missed
// counts as both).
func (st *audioStats) count(seq uint16) {
	st.packets++
	if st.packets == 1 {
		st.highest = seq
		return
	}
	switch d := int16(seq - st.highest); {
	case d > 0:
		st.lost += int(d) - 1
		st.highest = seq
	default:
		st.late++
	}
}

// emit hands audio to the conversation, or drops it when nobody keeps up, and to the
// recording: the audio ends now (a packet as it arrives, silence filled in up to now).
func (l *listener) emit(pcm []int16) {
	if l.tap != nil {
		l.tap(pcm, time.Now().Add(-time.Duration(len(pcm))*time.Second/speech.Rate))
	}
	select {
	case l.frames <- pcm:
	default:
	}
}

// Browsers send no audio while the caller is quiet: WebRTC clients (livekit-client's
// default) use Opus DTX, which sends one packet every 400 ms in silence. The conversation
// measures silence by the audio it is handed, so without the missing silence the end of a
// browser caller's turn would come seconds late. timeline fills it in: in real time once
// no packet has come for fillAfter past the last packet's audio, and when a packet comes,
// whatever its RTP timestamp says is still missing (so the audio handed on keeps the
// caller's timing, however late the packet).
//
// DTX starts only after the encoder has sent a stretch of quiet audio (libopus: 200 ms
// of inactive frames), so packets that stop while the caller is talking are late, not
// silence: a congested network, or a busy machine (the browser's capture or this
// process starved of CPU). Silence filled in then would be cut into the caller's words
// (the late packets add their audio after it), and the recogniser would hear the words
// torn apart or the turn ended in the middle (a browser test's question, "what time do
// you open tomorrow", reached the model as "what i need you opened them are broke" with
// 100-860 ms of filled silence inside it). So after audio above quietRMS within the
// last dtxQuiet of audio, timeline waits stallAfter before it fills.
type timeline struct {
	emit func([]int16) // called with mu held, in order

	mu      sync.Mutex
	started bool
	next    uint32    // RTP timestamp (48 kHz) just past the last packet's audio
	lastAt  time.Time // arrival of the last packet
	lastDur time.Duration
	filled  int        // samples of silence emitted since the last packet
	quiet   int        // samples of audio at most quietRMS received since the last louder
	stats   audioStats // stalls and stalled
}

// audioStats count what went wrong with the caller's audio on its way in: packets that
// never came or came out of order (by RTP sequence number), and stalls, where nothing
// came for stallAfter while the caller talked and silence was filled in (samples at 16
// kHz).
type audioStats struct {
	packets, lost, late int
	stalls, stalled     int
	highest             uint16 // the highest sequence number so far
}

const (
	// rtpRate is Opus's RTP clock, whatever the encoded rate.
	rtpRate = 48000
	// fillAfter is how long past the end of the last packet's audio nothing may arrive
	// before the gap counts as silence: above a network's ordinary jitter, far below the
	// end-of-turn silence.
	fillAfter = 60 * time.Millisecond
	// maxGap bounds the silence a timestamp jump fills (a client that restarted its
	// timestamps, or a long outage, is not minutes of silence).
	maxGap = 2 * time.Second
	// quietRMS is the level (of full scale, about -50 dBFS) at or below which a packet's
	// audio is quiet: a browser's decoded silence and comfort noise are far below it, a
	// voice's dips between words mostly above it.
	quietRMS = 0.003
	// dtxQuiet is how much quiet audio must have come last for a pause in the packets to
	// be taken for DTX: less than the encoder sends before DTX starts (200 ms), more than
	// the pauses between words.
	dtxQuiet = 100 * time.Millisecond
	// stallAfter is how long past the end of the last packet's audio timeline waits when
	// the caller was talking: longer than the stalls of a busy machine (up to 1.3 s seen
	// at load 25-34 on 2 cores), short enough that a caller whose audio really stops in
	// the middle of a word (a dropped connection) still ends the turn.
	stallAfter = 2 * time.Second
)

// packet hands on a packet's decoded audio, after the silence before it not yet filled.
func (t *timeline) packet(ts uint32, at time.Time, pcm []int16) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started {
		gap := int64(int32(ts - t.next)) // wraps; negative for a late, reordered packet
		if gap > 0 && time.Duration(gap)*time.Second/rtpRate <= maxGap {
			if missing := int(gap*speech.Rate/rtpRate) - t.filled; missing > 0 {
				t.emit(make([]int16, missing))
			}
		}
	}
	end := ts + uint32(len(pcm)*rtpRate/speech.Rate)
	if !t.started || int32(end-t.next) > 0 { // a reordered packet does not move the timeline back
		t.next = end
	}
	t.started, t.lastAt, t.filled = true, at, 0
	t.lastDur = time.Duration(len(pcm)) * time.Second / speech.Rate
	if rms(pcm) > quietRMS {
		t.quiet = 0
	} else {
		t.quiet += len(pcm)
	}
	t.emit(append([]int16(nil), pcm...))
}

// tick fills in the silence up to now when nothing has arrived for too long (for as long
// as nothing arrives: a muted microphone is silence too).
func (t *timeline) tick(now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.started {
		return
	}
	wait, talking := fillAfter, t.quiet < int(dtxQuiet.Seconds()*speech.Rate)
	if talking {
		wait = stallAfter // the caller was talking: the packets are late
	}
	quiet := now.Sub(t.lastAt) - t.lastDur
	if quiet < wait {
		return // the next packet may just be late
	}
	if missing := int(quiet.Seconds()*speech.Rate) - t.filled; missing > 0 {
		if talking {
			if t.filled == 0 {
				t.stats.stalls++
			}
			t.stats.stalled += missing
		}
		t.emit(make([]int16, missing))
		t.filled += missing
	}
}

// rms is the level of pcm, of full scale.
func rms(pcm []int16) float64 {
	if len(pcm) == 0 {
		return 0
	}
	var sum float64
	for _, v := range pcm {
		x := float64(v) / 32768
		sum += x * x
	}
	return math.Sqrt(sum / float64(len(pcm)))
}
