// Package platform is the control plane's view of a calling platform: what the platform
// is (its Kind: name, the handles it dials, whether it can transfer, which keys may place
// calls through it), the adapter the control plane drives (dial a handle into a room,
// answer or reject an inbound call, hang up), the Registry of the adapters a process has,
// and the notifications a platform sends back about its calls.
//
// Each platform is one implementation: its Kind in a package of its own (shared/platform/sim
// for the simulated platform; SIP trunks and browser callers are the next), embedded in
// each of its adapters (the in-process sim and the platform gateway's client both embed
// sim.Kind). The control plane asks a line's platform through its Kind and never compares
// platform names, so a new platform adds a type, not branches.
package platform

import (
	"context"
	"errors"
	"time"
)

// Notification events.
const (
	EventInbound  = "inbound"   // a call arrived on one of our handles
	EventAnswered = "answered"  // the dialled party answered and is joining the room
	EventNoAnswer = "no_answer" // the dialled party did not answer
	EventBusy     = "busy"      // the dialled party was busy
	EventFailed   = "failed"    // the platform could not place or keep the call
	EventHangup   = "hangup"    // the remote party hung up
)

// Media kinds a call carries.
const (
	MediaVideo = "video"
	MediaAudio = "audio"
)

// ParticipantIdentity is the LiveKit identity of the party a platform bridges into a
// room: one per room, so a reconnecting party replaces its earlier connection.
const ParticipantIdentity = "platform"

// Room is where a platform bridges a party: LiveKit's URL and a token for that party,
// and the room's name (a platform that asks LiveKit to bring the party in by name, as
// LiveKit's SIP bridge does, needs it; the others join with the token).
type Room struct {
	URL   string
	Token string
	Name  string
}

// DialRequest places an outbound call.
type DialRequest struct {
	// CallID is Bridgeline's call id; the platform's notifications about the call carry it.
	CallID string
	From   string // the line's handle, shown as caller id
	To     string // the handle to dial
	Media  string // video | audio
	Room   Room
}

// Kind is what a calling platform is, apart from its calls: the rules the control plane
// applies to a line on it before anything is dialled.
type Kind interface {
	// Name is the platform's name as lines record it ("sim"); it is the wire name too
	// (a call's platform, the notification route's).
	Name() string
	// CheckHandle returns nil when the platform dials handle (a session's
	// platform_handle), else an error whose text names the forms it dials, as the end of
	// "platform_handle on the <name> platform must be ..." (CheckE164's: "an E.164
	// number: ..."). A platform that places no calls refuses every handle.
	CheckHandle(handle string) error
	// CanTransfer reports whether a call on the platform can be handed on to another
	// party (SIP's REFER); the sim cannot.
	CanTransfer() bool
	// TestKeys reports whether sk_test_ keys may place calls through the platform: only
	// where no real call leaves (the sim). Elsewhere a call is placed only with an
	// sk_live_ key (live_key_required).
	TestKeys() bool
}

// Networked is a Kind whose calls reach a real network (TestKeys false) and names it,
// for the API's live_key_required message ("... which reaches the real phone network").
type Networked interface {
	Network() string
}

// Platform is a calling platform's adapter: its Kind and the calls it places.
type Platform interface {
	Kind
	// Dial places a call and returns the platform's id for it. The outcome comes later
	// as a Notification (answered, no_answer, busy or failed). Dial is idempotent on
	// req.CallID: a second Dial with a call id already dialled returns the first's
	// platform id and places nothing, so a retry never rings the party twice.
	Dial(ctx context.Context, req DialRequest) (platformCallID string, err error)
	// Answer bridges a ringing inbound call into a room.
	Answer(ctx context.Context, platformCallID, callID string, room Room) error
	// Reject declines a ringing inbound call; reason is for the platform's log.
	Reject(ctx context.Context, platformCallID, reason string) error
	// Hangup ends a call, named by the platform's id or, for a dialled call, by the
	// DialRequest's CallID (the control plane may not know the platform's id yet).
	// Hanging up a call that already ended, or one never placed, is not an error. It
	// returns once the party is out of the call's room, a join under way included (up to
	// ctx): the control plane deletes the room next, and livekit-server keeps a room
	// deleted during a join (docs/deploy.md, "Memory").
	Hangup(ctx context.Context, platformCallID string) error
}

// DialChecker is a platform that checks, before a session's room and records are made,
// that a line can place a call at all (a SIP line's trunk needs an outbound side): an
// error is the API's answer.
type DialChecker interface {
	CheckDial(ctx context.Context, lineID string) error
}

// MediaDefaulter is a platform whose sessions, when media is not given, are of
// DefaultMedia rather than video (SIP: a phone call is audio unless video is asked for).
type MediaDefaulter interface {
	DefaultMedia() string
}

// AudioOnly is a platform whose calls carry no video (SIP): a session on it is audio.
type AudioOnly interface {
	AudioOnly() bool
}

// Transferer is a platform whose calls can be handed on to another party (Kind's
// CanTransfer is true): SIP, by REFER.
type Transferer interface {
	// Transfer asks the far end of a live call to call t.To instead, and returns once
	// the transfer target answered (the call then leaves its room) or with the failure,
	// the call staying as it was. A *TransferReported error is a transfer that went
	// through although the platform reported an error: the call is to end as
	// transferred, the error kept in the record.
	Transfer(ctx context.Context, t Transfer) error
}

// Transfer hands a live call over.
type Transfer struct {
	PlatformCallID string
	CallID         string
	// Room is the call's room (its session id).
	Room string
	// To is an E.164 number or a sip: URI.
	To string
}

// TransferReported is a transfer that went through although the platform reported Err:
// the party's leg left its room after the error, or the platform lost the far end's
// answer to the transfer request and will not act on the outcome (Transferer.Transfer).
// The call ends as transferred, and its record keeps Err (transfer.reported_error).
type TransferReported struct {
	Err error
}

func (e *TransferReported) Error() string {
	return "platform: transfer went through despite: " + e.Err.Error()
}

func (e *TransferReported) Unwrap() error { return e.Err }

// ErrTransferFailed wraps a transfer the far end or the destination refused or did not
// answer: the call goes on as it was.
var ErrTransferFailed = errors.New("platform: transfer failed")

// CallRejecter is a Platform that keeps which Bridgeline call it was told to reject (the
// sim shows it on /sim/calls/{id}, as it shows an answered call's). RejectCall uses it.
type CallRejecter interface {
	RejectCall(ctx context.Context, platformCallID, callID, reason string) error
}

// RejectCall rejects a ringing inbound call, naming Bridgeline's call (callID, empty when
// no call was recorded) to a platform that keeps it.
func RejectCall(ctx context.Context, p Platform, platformCallID, callID, reason string) error {
	if r, ok := p.(CallRejecter); ok {
		return r.RejectCall(ctx, platformCallID, callID, reason)
	}
	return p.Reject(ctx, platformCallID, reason)
}

// NotificationAnswerer is a Platform that can answer or refuse an inbound call only while
// its inbound notification is being handled (SIP: the gateway holds the bridge's join
// until the reply). A call still undecided when its notification is done is held: Hold
// tells the sender to notify again later (a new notification), and the decision is
// carried out in one of those.
type NotificationAnswerer interface {
	// Hold, inside the call's inbound notification, asks the sender to notify again;
	// false when the call was already answered or refused in it.
	Hold(ctx context.Context, platformCallID string) bool
}

// AnswersInNotification reports whether p answers inbound calls only inside their
// notification (NotificationAnswerer).
func AnswersInNotification(p Platform) bool {
	_, ok := p.(NotificationAnswerer)
	return ok
}

// ErrUnknownCall is what Answer and Reject return for a call the platform does not have
// or that is no longer ringing.
var ErrUnknownCall = errors.New("platform: no such ringing call")

// Notification is one thing a platform tells the control plane about a call.
type Notification struct {
	// ID is unique per notification, so a redelivered one can be recognised.
	ID             string `json:"id"`
	Event          string `json:"event"`
	PlatformCallID string `json:"platform_call_id"`
	// CallID is Bridgeline's call id once the platform knows it (dialled or answered
	// calls); empty on inbound.
	CallID string    `json:"call_id,omitempty"`
	From   string    `json:"from,omitempty"`
	To     string    `json:"to,omitempty"`
	Media  string    `json:"media,omitempty"`
	Reason string    `json:"reason,omitempty"` // detail of failed
	At     time.Time `json:"at"`
	// Trunk is, on a SIP inbound call, the Bridgeline trunk whose credentials the call
	// authenticated with (the bridge dispatched it by that trunk's rule): the call is
	// for To's line only when the line is on this trunk.
	Trunk string `json:"trunk,omitempty"`
}

// Handler is what the control plane does with a platform's notifications.
type Handler interface {
	HandleNotification(ctx context.Context, platform string, n Notification) error
}
