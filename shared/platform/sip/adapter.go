package sip

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/rtc/lkhttp"
)

// LiveKit is what the adapter asks of LiveKit's API (shared/rtc/lkhttp's Client).
type LiveKit interface {
	CreateSIPParticipant(ctx context.Context, c rtc.SIPCall) (rtc.SIPParticipant, error)
	TransferSIPParticipant(ctx context.Context, t rtc.SIPTransfer) error
	RemoveParticipant(ctx context.Context, room, identity string) error
	Participants(ctx context.Context, room string) ([]rtc.Participant, error)
}

// Calls finds a call's record (call.Store).
type Calls interface {
	GetCall(ctx context.Context, id string) (call.Call, error)
	CallByPlatformID(ctx context.Context, platform, platformCallID string) (call.Call, error)
}

// OutboundTrunk returns the LiveKit outbound trunk that dials from the line whose number
// is from (the trunk of that SIP line), making it in LiveKit if it is missing.
type OutboundTrunk func(ctx context.Context, from string) (string, error)

// OutboundConfig returns the trunk a call from the line whose number is from dials
// through, credentials included, to give LiveKit with that call alone: LiveKit then
// stores no password.
type OutboundConfig func(ctx context.Context, from string) (rtc.SIPOutboundConfig, error)

// Adapter is the control plane's platform.Platform for SIP lines. Inbound calls are
// answered or refused through the Reply of the notification being handled (WithReply);
// outbound calls are placed with CreateSIPParticipant through the line's trunk; a call is
// hung up by taking its participant out of the room, which the bridge turns into a BYE
// (a CANCEL while it rings); a transfer is LiveKit's TransferSIPParticipant (REFER).
type Adapter struct {
	Kind
	LiveKit  LiveKit
	Calls    Calls
	Outbound OutboundTrunk
	// OutboundConfig, when set, is used instead of Outbound: each dial carries its trunk.
	OutboundConfig OutboundConfig
	// Dialable checks, before anything is made, that a line can place calls (its trunk
	// has an outbound side); nil: every line can.
	Dialable func(ctx context.Context, lineID string) error
	// RingTimeout bounds an outbound call's ringing (zero: the bridge's 80 s).
	RingTimeout time.Duration
	// Video, when set, is the SIP video bridge: video sessions ring the phone through it
	// with a video offer, and SIP lines carry video. Nil: SIP is audio only.
	Video VideoDialer
}

// AudioOnly implements platform.AudioOnly: SIP carries video only where a video bridge
// runs.
func (a *Adapter) AudioOnly() bool { return a.Video == nil }

var (
	_ platform.Platform    = (*Adapter)(nil)
	_ platform.Transferer  = (*Adapter)(nil)
	_ platform.DialChecker = (*Adapter)(nil)

	_ platform.NotificationAnswerer = (*Adapter)(nil)
)

// CheckDial implements platform.DialChecker.
func (a *Adapter) CheckDial(ctx context.Context, lineID string) error {
	if a.Dialable == nil {
		return nil
	}
	return a.Dialable(ctx, lineID)
}

// CallMetadata is the participant metadata of a dialled call: Bridgeline's call id, which
// the gateway reads from the bridge's join token to name the call in its notifications.
type CallMetadata struct {
	CallID string `json:"call_id"`
}

// Dial places the call through the line's trunk, the line's number as caller id, into
// req.Room by name; the bridge joins the callee's participant at once (ringing) and the
// gateway tells how the call went. A second Dial for a room whose callee is already
// there places nothing.
func (a *Adapter) Dial(ctx context.Context, req platform.DialRequest) (string, error) {
	if req.Room.Name == "" {
		return "", errors.New("sip: dial needs the room's name")
	}
	ps, err := a.LiveKit.Participants(ctx, req.Room.Name)
	if err != nil {
		return "", fmt.Errorf("sip: list %s: %w", req.Room.Name, err)
	}
	for _, p := range ps {
		if p.Identity == platform.ParticipantIdentity {
			return "", nil // dialled already
		}
	}
	meta, _ := json.Marshal(CallMetadata{CallID: req.CallID})
	if req.Media == platform.MediaVideo && a.Video != nil {
		return a.dialVideo(ctx, req, string(meta))
	}
	call := rtc.SIPCall{To: req.To, From: req.From,
		Room: req.Room.Name, Identity: platform.ParticipantIdentity, Name: req.To, Metadata: string(meta),
		RingingTimeout: a.RingTimeout}
	if a.OutboundConfig != nil {
		trunk, err := a.OutboundConfig(ctx, req.From)
		if err != nil {
			return "", fmt.Errorf("sip: outbound trunk of %s: %w", req.From, err)
		}
		call.Trunk = &trunk
	} else {
		trunk, err := a.Outbound(ctx, req.From)
		if err != nil {
			return "", fmt.Errorf("sip: outbound trunk of %s: %w", req.From, err)
		}
		call.TrunkID = trunk
	}
	p, err := a.LiveKit.CreateSIPParticipant(ctx, call)
	if err != nil {
		return "", err
	}
	return p.CallID, nil
}

// dialVideo rings the callee through the video bridge, with the line's trunk.
func (a *Adapter) dialVideo(ctx context.Context, req platform.DialRequest, meta string) (string, error) {
	if a.OutboundConfig == nil {
		return "", errors.New("sip: video calls need the trunk's configuration (OutboundConfig)")
	}
	trunk, err := a.OutboundConfig(ctx, req.From)
	if err != nil {
		return "", fmt.Errorf("sip: outbound trunk of %s: %w", req.From, err)
	}
	return a.Video.DialVideo(ctx, VideoCall{Trunk: trunk, To: req.To, From: req.From, Room: req.Room.Name,
		Identity: platform.ParticipantIdentity, Name: req.To, Metadata: meta, RingingTimeout: a.RingTimeout})
}

// Hold has the gateway ask again about an inbound call that rings undecided: an inbound
// call is answered or refused only through the Reply of its notification
// (platform.NotificationAnswerer).
func (a *Adapter) Hold(ctx context.Context, platformCallID string) bool {
	r := replyFor(ctx, platformCallID)
	return r != nil && r.hold()
}

// Answer joins a ringing inbound call into room: it answers the notification being
// handled. Outside one (the gateway no longer holds the call) the call is unknown.
func (a *Adapter) Answer(ctx context.Context, platformCallID, callID string, room platform.Room) error {
	r := replyFor(ctx, platformCallID)
	if r == nil || !r.answer(callID, room) {
		return platform.ErrUnknownCall
	}
	return nil
}

// Reject refuses a ringing inbound call (the bridge answers 486 Busy Here) while its
// notification is handled; a call already in a room is hung up.
func (a *Adapter) Reject(ctx context.Context, platformCallID, reason string) error {
	if r := replyFor(ctx, platformCallID); r != nil && r.refuse(reason) {
		return nil
	}
	return a.Hangup(ctx, platformCallID)
}

// Hangup takes the call's participant out of its room: the bridge sends BYE, or CANCEL to
// a callee still ringing. platformCallID is the bridge's call id or, for a dialled call
// no notification named yet, Bridgeline's. A call that is gone is not an error.
func (a *Adapter) Hangup(ctx context.Context, platformCallID string) error {
	if r := replyFor(ctx, platformCallID); r != nil && r.refuse("hung up") {
		return nil // never joined
	}
	c, err := a.call(ctx, platformCallID)
	if errors.Is(err, apierr.ErrNotFound) || (err == nil && c.SessionID == "") {
		return nil
	}
	if err != nil {
		return err
	}
	return a.LiveKit.RemoveParticipant(ctx, c.SessionID, platform.ParticipantIdentity)
}

func (a *Adapter) call(ctx context.Context, platformCallID string) (call.Call, error) {
	if ident.Valid("call", platformCallID) {
		return a.Calls.GetCall(ctx, platformCallID)
	}
	return a.Calls.CallByPlatformID(ctx, Name, platformCallID)
}

// Transfer refers the call's far end to t.To (a sip: URI, or an E.164 number as tel:) and
// returns once the destination answered. A refused or unanswered transfer is
// platform.ErrTransferFailed, the call going on; a call no longer in its room is
// platform.ErrUnknownCall. A transfer that went through although LiveKit reported an
// error is a *platform.TransferReported: the far end's answer to the REFER lost by the
// bridge (answerLost), or the leg leaving the room within TransferSettle of the error.
func (a *Adapter) Transfer(ctx context.Context, t platform.Transfer) error {
	to := t.To
	if !strings.HasPrefix(to, "sip:") && !strings.HasPrefix(to, "sips:") {
		to = "tel:" + to
	}
	start := time.Now()
	err := a.LiveKit.TransferSIPParticipant(ctx, rtc.SIPTransfer{Room: t.Room, Identity: platform.ParticipantIdentity, To: to})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, lkhttp.ErrNotFound):
		return platform.ErrUnknownCall
	case answerLost(err, time.Since(start)):
		// livekit-sip v1.8.0 as released loses the phone's answer to the REFER when the
		// answer comes back before the bridge has armed the transaction's timers (a
		// bridge descheduled right after sending it, a peer faster than that): the
		// transaction ends at once, and half the time the bridge reads the end before
		// the answer ("transaction failed to complete (0 intermediate responses)"). The
		// bridge we build reads it (scripts/livekit-sip.patch); the SIP fleet's image,
		// LiveKit's own, does not. Such a bridge gives up on the transfer: it reads none
		// of the phone's NOTIFYs and never hangs its leg up, while the phone, which got
		// the REFER and answered it, follows it and waits for the transferor's BYE
		// (baresip does; RFC 5589 leaves the BYE to the transferor). Nobody else would
		// ever end that leg, and nothing tells whether the destination answered:
		// Bridgeline completes the transfer as a blind one (the call ends as
		// transferred, which hangs the leg up) and keeps the error.
		return &platform.TransferReported{Err: err}
	case a.leftRoom(context.WithoutCancel(ctx), t.Room):
		// The leg left the room after the error: the phone or its provider hung it up
		// for the destination.
		return &platform.TransferReported{Err: err}
	case ctx.Err() != nil:
		return err
	}
	return fmt.Errorf("%w: %v", platform.ErrTransferFailed, err)
}

// referTimerB is when a REFER the far end never answers times out in livekit-sip (its
// sipgo's Timer B, 64 T1 = 32 s); lostAnswerBefore is comfortably before it.
const (
	referTimerB      = 32 * time.Second
	lostAnswerBefore = referTimerB / 2
)

// answerLost reports whether err, which TransferSIPParticipant returned after took, is
// livekit-sip ending the REFER's transaction with no answer read long before the
// transaction could time out: the far end answered and the bridge lost the answer.
func answerLost(err error, took time.Duration) bool {
	return took < lostAnswerBefore && strings.Contains(err.Error(), "transaction failed to complete (0 intermediate responses)")
}

// TransferSettle is how long a transfer LiveKit reported failed may take to show the
// call's leg leaving its room (the phone followed the REFER).
const TransferSettle = 3 * time.Second

// leftRoom reports whether the call's participant left room within TransferSettle.
func (a *Adapter) leftRoom(ctx context.Context, room string) bool {
	ctx, cancel := context.WithTimeout(ctx, TransferSettle)
	defer cancel()
	for {
		ps, err := a.LiveKit.Participants(ctx, room)
		if errors.Is(err, lkhttp.ErrNotFound) {
			return true // the room is gone with the call
		}
		if err == nil && !slices.ContainsFunc(ps, func(p rtc.Participant) bool { return p.Identity == platform.ParticipantIdentity }) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(250 * time.Millisecond):
		}
	}
}
