package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/metadata"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

// CreateRequest is POST /v1/sessions.
type CreateRequest struct {
	// PlatformHandle is the party to dial; empty with mode assistant is a web call
	// (webcall.go).
	PlatformHandle string
	Media          string // video (default) | audio
	Mode           string // human (default) | assistant
	AssistantID    string // required with mode assistant
	// LineID is the line to call from (a web call's: whose variables apply); default the
	// account's first line.
	LineID string

	// Metadata is the session's; its call starts with a copy.
	Metadata metadata.Metadata

	// Variables (mode assistant only) are values for the version's placeholders.
	Variables map[string]string

	// Recording (mode assistant only) overrides the version's recording: off or audio;
	// empty keeps the version's.
	Recording string

	// AMD (mode assistant with a platform_handle only) runs answering-machine detection
	// on the call (amd.go); nil: off.
	AMD *AMD

	// KeyRule decides whether the caller's key may place the call through the platform
	// of kind (what names where the call would go, for the error): the API's route rule
	// (httpapi's requireLiveKey). Nil: the caller's key mode against kind.TestKeys
	// (keyAdmitted), for callers other than the API.
	KeyRule func(kind platform.Kind, what string) error

	// campaign is set by a campaign's dial (Campaign), never by the API.
	campaign *CampaignCall

	// mediaDefaulted: Validate filled Media in (an audio-only platform makes it audio).
	mediaDefaulted bool
}

// CampaignCall is what a campaign's dial (shared/campaign) adds to a create: the
// campaign and recipient the call's record and call.ended carry, the call's id (chosen
// when the recipient was claimed, so that a crash between the claim and the dial can be
// told from a dial: the record is saved before the platform is asked), and the version
// the campaign pinned.
type CampaignCall struct {
	CampaignID, RecipientID, CallID, VersionID string
}

// Campaign makes the request a campaign's dial.
func (r *CreateRequest) Campaign(c CampaignCall) { r.campaign = &c }

// Created is a new session with its first participant token.
type Created struct {
	Session Session
	Call    call.Call
	Token   Token
	RTCURL  string
}

// Validate checks the request and fills its defaults.
func (r *CreateRequest) Validate() error {
	if err := metadata.Validate(r.Metadata); err != nil {
		return err
	}
	modeGiven := r.Mode != ""
	if !modeGiven {
		r.Mode = ModeHuman
	}
	switch h := r.PlatformHandle; {
	case h == "" && r.Mode == ModeAssistant:
		// A web call: the client that joins with the returned token is the caller.
	case strings.TrimSpace(h) == "" && r.Mode == ModeAssistant:
		return apierr.Invalid("platform_handle", "platform_handle must not be blank; leave it out for a web call")
	case h == "" && r.AssistantID != "" && !modeGiven:
		// An assistant and nothing to dial: a web call missing its mode.
		return apierr.Param(apierr.CodeParameterMissing, "mode", `a web call is "mode": "assistant" with an assistant_id and no platform_handle; to dial someone, send platform_handle`)
	case strings.TrimSpace(h) == "":
		return apierr.Missing("platform_handle")
	case len(h) > 255 || !utf8.ValidString(h) || strings.ContainsAny(h, "\x00\r\n"):
		return apierr.Invalid("platform_handle", "platform_handle must be at most 255 characters on one line")
	}
	if r.Media == "" {
		r.Media, r.mediaDefaulted = platform.MediaVideo, true
	}
	if r.Media != platform.MediaVideo && r.Media != platform.MediaAudio {
		return apierr.Invalid("media", "media must be video or audio")
	}
	switch r.Mode {
	case ModeHuman:
		if r.AssistantID != "" {
			return apierr.Invalid("assistant_id", "assistant_id is only for mode assistant")
		}
	case ModeAssistant:
		if r.AssistantID == "" {
			return apierr.Param(apierr.CodeParameterMissing, "assistant_id", "assistant_id is required when mode is assistant")
		}
	default:
		return apierr.Invalid("mode", "mode must be human or assistant")
	}
	if r.Recording != "" {
		if r.Mode != ModeAssistant {
			return apierr.Invalid("recording", "recording is only for mode assistant (a human session's room is the customer's)")
		}
		if err := assistant.ValidRecording("recording", r.Recording); err != nil {
			return err
		}
	}
	if r.AMD != nil {
		if r.AMD.Enabled && (r.Mode != ModeAssistant || r.PlatformHandle == "") {
			return apierr.Invalid("amd", "amd is only for mode assistant with a platform_handle to dial (an outbound call)")
		}
		if err := r.AMD.Validate("amd"); err != nil {
			return err
		}
	}
	return r.checkVariables()
}

// ErrDialAttempted marks a Create that failed once the platform was asked to dial: the
// party may be ringing, so a retry of the same request must not dial again. The HTTP
// layer keeps the request's idempotency record (the retry replays this answer) instead of
// freeing the key as it does for other server errors.
var ErrDialAttempted = errors.New("session: the dial was attempted")

// WebCall reports whether the (validated) request is a web call: mode assistant with no
// platform_handle.
func (r CreateRequest) WebCall() bool { return r.Mode == ModeAssistant && r.PlatformHandle == "" }

// Create makes a room named after a new session, mints the customer's token, records the
// session and its call, and asks the line's platform to dial the handle into the room. A
// web call (CreateRequest.WebCall) dials nothing: its token is the caller's, and its
// assistant is dispatched into the room at once (webcall.go).
//
// LiveKit makes the room while the request's line and assistant are read, the tokens
// minted and the records saved: the create waits for the slower of the two, not for each
// in turn. A request that fails those reads deletes the room it turned out not to need.
//
// The hot path writes once: the session and its call are saved, ringing, before the dial
// (a crash after the save leaves a record the sweeper fails once RingTimeout is over, and
// whose room it deletes; a room LiveKit refused discards the saved records, so that
// failure leaves nothing). The platform's id of the call is not written here: every
// notification of the platform carries it and records it in its own write, and until
// then the call is hung up by its Bridgeline id (platform.Platform.Hangup). The whole
// create is bounded by CreateTimeout, well under a Lambda's timeout.
//
// Errors: parameter errors; resource_not_found for an unknown line or assistant;
// no_line when the account has none; assistant_archived, assistant_not_published;
// upstream_unavailable when LiveKit or the platform failed (the session is then failed;
// once the dial was attempted the error also wraps ErrDialAttempted).
func (s *Service) Create(ctx context.Context, caller account.Caller, req CreateRequest) (Created, error) {
	if err := req.Validate(); err != nil {
		return Created{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.set.CreateTimeout)
	defer cancel()
	sessionID := ident.New("ses")
	spec, record := rtc.RoomSpec{Name: sessionID}, s.record
	if req.WebCall() {
		spec.EmptyTimeout, spec.DepartureTimeout, record = s.webRoomTimeout(), s.webRoomTimeout(), s.recordWebCall
	}
	roomErr := make(chan error, 1)
	go func() { roomErr <- s.createRoom(ctx, spec) }()
	p, err := record(ctx, caller, sessionID, req)
	if rerr := <-roomErr; rerr != nil {
		s.log().Error("create room", "session_id", sessionID, "err", rerr)
		if err != nil {
			return Created{}, err
		}
		s.discard(ctx, sessionID, p.call.ID)
		return Created{}, upstream("the media service could not create the room", rerr)
	}
	if err != nil {
		// Nothing was dialled, so a retry may run again. Should a save have committed
		// although its answer was lost, the sweeper fails the ringing record.
		s.deleteRoom(sessionID)
		return Created{}, err
	}

	ses, c := p.ses, p.call
	if ses.WebCall() {
		return s.startWebCall(ctx, p)
	}
	if _, err := p.plat.Dial(ctx, platform.DialRequest{CallID: c.ID, From: c.From, To: c.To, Media: c.Media, Room: p.party}); err != nil {
		// The platform may have placed the call although its answer was lost: the
		// session fails, the call is hung up by its Bridgeline id, and the error says a
		// retry must not dial again.
		s.log().Error("dial failed", "session_id", ses.ID, "call_id", c.ID, "err", err)
		s.end(context.WithoutCancel(ctx), ses.ID, StatusFailed, call.ReasonPlatformError, call.EndedBySystem)
		return Created{}, fmt.Errorf("%w: %w", upstream("the calling platform could not place the call", err), ErrDialAttempted)
	}
	return Created{Session: ses, Call: c, Token: p.token, RTCURL: s.rooms.PublicURL()}, nil
}

// recorded is a new session saved ringing, with what its dial needs.
type recorded struct {
	ses   Session
	call  call.Call
	plat  platform.Platform // nil on a web call
	token Token             // the customer's (a web call's caller's)
	party platform.Room     // where the platform bridges the callee
}

// record reads the request's line and assistant version, mints the customer's token and
// the platform party's, and saves the session and its call, ringing, at revision 1.
func (s *Service) record(ctx context.Context, caller account.Caller, sessionID string, req CreateRequest) (recorded, error) {
	accountID := caller.ID
	l, err := s.callingLine(ctx, accountID, req.LineID)
	if err != nil {
		return recorded{}, err
	}
	plat, ok := s.set.Platforms.Lookup(l.Platform)
	if !ok {
		s.log().Error("no adapter for the line's platform", "line_id", l.ID, "platform", l.Platform)
		return recorded{}, upstream("the line's calling platform is not available", fmt.Errorf("no adapter for platform %q", l.Platform))
	}
	var ver *assistant.Version
	if req.Mode == ModeAssistant {
		pinned := ""
		if req.campaign != nil {
			pinned = req.campaign.VersionID
		}
		v, err := assistant.CallVersion(ctx, s.assistants, accountID, req.AssistantID, pinned)
		if err != nil {
			return recorded{}, err
		}
		ver = &v
	}
	if err := admit(caller.Live, req, l, plat); err != nil {
		return recorded{}, err
	}
	onNetwork := !plat.TestKeys() // the sim places no real call (outbound.go)
	if onNetwork {
		if err := s.checkDestination(ctx, accountID, l, "platform_handle", req.PlatformHandle); err != nil {
			return recorded{}, err
		}
	}
	if md, ok := plat.(platform.MediaDefaulter); ok && req.mediaDefaulted {
		req.Media = md.DefaultMedia()
	}
	if ao, ok := plat.(platform.AudioOnly); ok && ao.AudioOnly() && req.Media != platform.MediaAudio {
		if !req.mediaDefaulted {
			return recorded{}, apierr.Invalid("media", fmt.Sprintf("line %s is on %s, which carries audio only: use media audio", l.ID, l.Platform))
		}
		req.Media = platform.MediaAudio
	}
	if dc, ok := plat.(platform.DialChecker); ok {
		if err := dc.CheckDial(ctx, l.ID); err != nil {
			return recorded{}, err
		}
	}
	now := s.now()
	ses := Session{ID: sessionID, AccountID: accountID, LineID: l.ID, Mode: req.Mode, Media: req.Media,
		PlatformHandle: req.PlatformHandle, Status: StatusRinging, CreatedAt: now, Metadata: metadata.New(req.Metadata)}
	c := call.Call{ID: ident.New("call"), AccountID: accountID, Direction: call.Outbound, LineID: l.ID,
		From: l.Handle, To: req.PlatformHandle, Media: req.Media, Status: call.StatusRinging,
		HandledBy: call.HandledByCustomer, SessionID: ses.ID, Platform: l.Platform, OnNetwork: onNetwork, StartedAt: now,
		Metadata: ses.Metadata.Clone()}
	if cc := req.campaign; cc != nil {
		c.ID, c.CampaignID, c.RecipientID = cc.CallID, cc.CampaignID, cc.RecipientID
	}
	ses.CallID = c.ID
	if ver != nil {
		// The version is fixed now; the assistant is dispatched when the callee answers
		// (calleeAnswered), so the persona worker's media checks do not run out while the
		// phone rings.
		ses.AssistantID, ses.VersionID, ses.Recording = ver.AssistantID, ver.ID, req.Recording
		if req.AMD != nil && req.AMD.Enabled {
			ses.AMD = req.AMD.job(req.Variables, l.Variables)
		}
		c.HandledBy, c.AssistantID, c.VersionID = call.HandledByAssistant, ver.AssistantID, ver.ID
		c.Record(ses.RecordingOf(*ver) == assistant.RecordingAudio)
		c.Variables = callVariables(*ver, req.Variables, l)
		if _, _, err := ver.Rendered(c.Variables); err != nil {
			return recorded{}, err
		}
	}
	tok, err := s.customerToken(ses.ID, ses.Mode, TokenRequest{})
	if err != nil {
		return recorded{}, err
	}
	party, err := s.partyRoom(ses.ID, req.PlatformHandle)
	if err != nil {
		return recorded{}, err
	}
	if err := s.saveNew(ctx, &ses, c); err != nil {
		return recorded{}, fmt.Errorf("save session %s: %w", ses.ID, err)
	}
	ses.Revision, c.Revision = 1, 1
	return recorded{ses: ses, call: c, plat: plat, token: tok, party: party}, nil
}

// discard removes the records of a create that failed after its save and before any
// dial, so that the failure leaves nothing behind. Should that fail too, the sweeper
// fails the ringing record once RingTimeout is over.
func (s *Service) discard(ctx context.Context, sessionID, callID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.records.DiscardSession(ctx, sessionID, callID); err != nil {
		s.log().Error("discard the records of a failed create", "session_id", sessionID, "err", err)
	}
}

// callingLine is the line a session calls from: the given one, or the account's oldest.
func (s *Service) callingLine(ctx context.Context, accountID, lineID string) (line.Line, error) {
	if lineID != "" {
		l, err := s.lines.GetLine(ctx, lineID)
		return apierr.Owned(l, l.AccountID, err, accountID,
			apierr.Param(apierr.CodeResourceNotFound, "line_id", fmt.Sprintf("no such line: %q", lineID)))
	}
	l, err := s.lines.FirstLine(ctx, accountID)
	if errors.Is(err, apierr.ErrNotFound) {
		return line.Line{}, apierr.New(apierr.CodeNoLine, "the account has no line to call from; ask the operator to provision one")
	}
	if err != nil {
		return line.Line{}, fmt.Errorf("first line: %w", err)
	}
	return l, nil
}

func (s *Service) createRoom(ctx context.Context, spec rtc.RoomSpec) error {
	if spec.EmptyTimeout == 0 {
		spec.EmptyTimeout = RoomEmptyTimeout
	}
	if spec.DepartureTimeout == 0 {
		spec.DepartureTimeout = RoomDepartureTimeout
	}
	spec.MaxParticipants = RoomMaxParticipants
	_, err := s.rooms.CreateRoom(ctx, spec)
	return err
}

// deleteRoom removes a room on a path that is failing anyway; an error is only logged.
func (s *Service) deleteRoom(room string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.rooms.DeleteRoom(ctx, room); err != nil {
		s.log().Error("delete room", "session_id", room, "err", err)
	}
}

// partyRoom is where the platform bridges its party: a SIP-kind participant named after
// its handle, that may set its own attributes (LiveKit's SIP bridge joins with the call's
// sip.* attributes and updates sip.callStatus).
func (s *Service) partyRoom(room, handle string) (platform.Room, error) {
	tok, err := s.rooms.ParticipantToken(rtc.Grant{Room: room, Identity: platform.ParticipantIdentity, Name: handle,
		Kind: rtc.KindSIP, UpdateOwnMetadata: true})
	if err != nil {
		return platform.Room{}, err
	}
	return platform.Room{URL: s.rooms.PublicURL(), Token: tok.JWT, Name: room}, nil
}
