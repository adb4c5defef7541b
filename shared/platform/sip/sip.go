// Package sip is phone calls through SIP trunks as the control plane knows them, with no
// media code: the platform's Kind (name, handles, what it can do), the wire of its
// gateway's notifications, and the adapter the control plane drives (Adapter).
//
// The calls themselves are LiveKit's SIP bridge's (livekit-sip): it takes a provider's
// INVITE, and dials out through a trunk, each call one SIP participant in a room. Between
// the bridge and livekit-server sits the SIP gateway (mediafleet/sipgateway), a
// pass-through of the bridge's signal connections that the bridge's ws_url points at. It
// holds an inbound call's room join while it asks the control plane what to do with the
// call (an inbound Notification to Path, signed as the sim's are), and lets the join
// through into the session's room, or refuses it, which the bridge answers with 486 Busy
// Here. It also reads the status the bridge publishes on each participant (answered) and
// how it leaves (hung up, busy, no answer), and tells the control plane so.
package sip

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/bridgeline/bridgeline/shared/ident"

	"github.com/bridgeline/bridgeline/shared/platform"
)

// Name is the platform name SIP lines record.
const Name = "sip"

// Path is where the control plane receives the SIP gateway's notifications.
const Path = "/internal/platform/sip/events"

// RoomPrefix starts the room name of every dispatch rule Bridgeline keeps in LiveKit
// (<RoomPrefix><trunk id>_<caller>_<random>): a join for such a room is an inbound call
// the control plane has not routed yet. No such room is ever created; the gateway joins
// the call into its session's room instead.
const RoomPrefix = "sipin-"

// AttrMedia is the join token attribute by which a SIP bridge says what an inbound call
// carries: "video" from the video bridge (mediafleet/sipvideo) when the phone's video was
// taken; livekit-sip sets none (audio).
const AttrMedia = "bridgeline.media"

// TrunkOfRoom is the Bridgeline trunk id an inbound call's room names
// (<RoomPrefix><trunk id>_...), "" when it names none. Each trunk's dispatch rule takes
// only the calls its own inbound trunk matched and authenticated.
func TrunkOfRoom(room string) string {
	rest, ok := strings.CutPrefix(room, RoomPrefix)
	if !ok {
		return ""
	}
	const prefix = "trunk_"
	if !strings.HasPrefix(rest, prefix) {
		return ""
	}
	id, _, _ := strings.Cut(rest[len(prefix):], "_")
	id = prefix + id
	if !ident.Valid("trunk", id) {
		return ""
	}
	return id
}

// Kind is SIP's platform.Kind: it dials E.164 numbers through the line's trunk, can
// transfer (REFER), and needs sk_live_ keys (a real phone rings).
type Kind struct{}

var _ platform.Kind = Kind{}

// Name is "sip".
func (Kind) Name() string { return Name }

// CheckHandle accepts an E.164 number.
func (Kind) CheckHandle(handle string) error { return platform.CheckE164(handle) }

// CanTransfer is true: a SIP call can be referred to another number or URI.
func (Kind) CanTransfer() bool { return true }

// TestKeys is false: a call through a trunk reaches a real phone.
func (Kind) TestKeys() bool { return false }

// Network is what a SIP call reaches.
func (Kind) Network() string { return "the real phone network" }

// AudioOnly is true: LiveKit's SIP bridge carries no video (the Adapter says otherwise
// where the video bridge runs).
func (Kind) AudioOnly() bool { return true }

// DefaultMedia is audio: a SIP session rings with a video offer only when media video is
// asked for.
func (Kind) DefaultMedia() string { return platform.MediaAudio }

// InboundReply is the control plane's answer to an inbound notification: the room to
// join the call into (Answer), or the refusal (Reject, a reason for the log).
type InboundReply struct {
	Received bool   `json:"received"`
	CallID   string `json:"call_id,omitempty"`
	Answer   *Room  `json:"answer,omitempty"`
	Reject   string `json:"reject,omitempty"`
	// Pending: the call rings undecided (a customer_decides line); the gateway keeps
	// holding the join and sends the inbound notification again (a new id) after
	// PendingRetry, until an answer or a refusal comes.
	Pending bool `json:"pending,omitempty"`
}

// PendingRetry is how long the gateway waits before it asks again about a pending call.
const PendingRetry = time.Second

// Room is platform.Room on the wire.
type Room struct {
	URL   string `json:"url"`
	Token string `json:"token"`
	Name  string `json:"name"`
}

// Reply collects what the control plane decided about one inbound call while it handles
// the call's notification: the adapter's Answer or Reject, called inside that handling,
// fill it, and the receiver sends it back as the notification's answer. A SIP call is
// answered or refused only there: the gateway holds the call's join until then.
type Reply struct {
	pcid string

	mu      sync.Mutex
	done    bool
	pending bool
	callID  string
	room    platform.Room
	reject  string
}

type replyKey struct{}

// WithReply returns ctx carrying a Reply for the inbound call platformCallID.
func WithReply(ctx context.Context, platformCallID string) (context.Context, *Reply) {
	r := &Reply{pcid: platformCallID}
	return context.WithValue(ctx, replyKey{}, r), r
}

// replyFor is ctx's Reply when it is for platformCallID.
func replyFor(ctx context.Context, platformCallID string) *Reply {
	r, _ := ctx.Value(replyKey{}).(*Reply)
	if r == nil || r.pcid != platformCallID {
		return nil
	}
	return r
}

// answer records the room; false when the call was decided already.
func (r *Reply) answer(callID string, room platform.Room) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return false
	}
	r.done, r.callID, r.room = true, callID, room
	return true
}

// refuse records the refusal; false when the call was decided already.
func (r *Reply) refuse(reason string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return false
	}
	if reason == "" {
		reason = "rejected"
	}
	r.done, r.reject = true, reason
	return true
}

// hold records that the call rings undecided; false when it was decided already.
func (r *Reply) hold() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return false
	}
	r.pending = true
	return true
}

// Result is the reply to send: an answer, a refusal, or (nothing decided, as for a
// redelivery of a call already handled) a refusal saying so.
func (r *Reply) Result() InboundReply {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := InboundReply{Received: true, CallID: r.callID}
	switch {
	case r.done && r.reject == "":
		out.Answer = &Room{URL: r.room.URL, Token: r.room.Token, Name: r.room.Name}
	case r.done:
		out.Reject = r.reject
	case r.pending:
		out.Pending = true
	default:
		out.Reject = "not answered"
	}
	return out
}
