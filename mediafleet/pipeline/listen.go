package pipeline

import (
	"sync"
	"sync/atomic"

	"github.com/pion/webrtc/v4"

	"github.com/bridgeline/bridgeline/mediafleet/opus"
)

// ListenRate is the sample rate of the caller audio handed to a Conversation (what speech
// recognisers take).
const ListenRate = 16000

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
}

func newListener() *listener {
	return &listener{frames: make(chan []int16, 256), verified: make(chan struct{})}
}

// read decodes track until it ends (the caller unpublished, or the room connection
// closed).
func (l *listener) read(track *webrtc.TrackRemote) {
	dec, err := opus.NewDecoder(ListenRate, 1)
	if err != nil {
		return
	}
	defer dec.Close()
	pcm := make([]int16, dec.MaxFrame())
	for {
		pkt, _, err := track.ReadRTP()
		if err != nil {
			return
		}
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
		select {
		case l.frames <- append([]int16(nil), pcm[:n]...):
		default:
		}
	}
}
