package sip

import (
	"context"
	"time"

	"github.com/bridgeline/bridgeline/shared/rtc"
)

// VideoCall asks the SIP video bridge (mediafleet/sipvideo) to ring a phone with a video
// offer and bring it into a room, as CreateSIPParticipant asks livekit-sip for an audio
// call: the callee's participant (Identity, Name, Metadata naming Bridgeline's call)
// joins Room through the SIP gateway, which tells the control plane how the call went.
type VideoCall struct {
	Trunk    rtc.SIPOutboundConfig `json:"trunk"`
	To       string                `json:"to"`
	From     string                `json:"from"`
	Room     string                `json:"room"`
	Identity string                `json:"identity"`
	Name     string                `json:"name"`
	Metadata string                `json:"metadata"`
	// RingingTimeout bounds the ringing (zero: 80 s, livekit-sip's default).
	RingingTimeout time.Duration `json:"ringing_timeout"`
}

// VideoDialer places video calls: the video bridge itself on the local stack.
type VideoDialer interface {
	DialVideo(ctx context.Context, c VideoCall) (platformCallID string, err error)
}
