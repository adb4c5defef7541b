package session

// Web calls. POST /v1/sessions with mode assistant, an assistant_id and no
// platform_handle dials nothing: the customer's client (a browser on the hosted join page
// or on the customer's own page, or any LiveKit client) is the caller. The create
// returns the caller's token: it names the one room, publishes the camera and the
// microphone (only the microphone on an audio call) and no data, and subscribes.
//
// The call is the one an inbound assistant call gets, with its answer moved to the
// caller's arrival:
//
//   - create: the room, the caller's token, the session and its call (ringing,
//     direction inbound, platform web, from the caller's identity to the line's handle),
//     and the assistant's dispatch at once, so that a persona worker is in the room,
//     greeting synthesised and tracks published, when the caller joins;
//   - the caller joins (LiveKit's participant_joined): the call is answered;
//   - the caller leaves (participant_left, or the worker's caller_hangup): the call ends
//     with remote_hangup;
//   - the caller never joins: the sweeper fails the session JoinTimeout after its
//     creation with join_timeout (the room outlives that wait, so LiveKit never closes it
//     first: webRoomTimeout). A client whose connection aborted before it was up has not
//     joined (LiveKit sends participant_connection_aborted, not participant_left): it
//     may join again until then.
//
// DELETE, max_duration, the worker's own ends and the concurrent-session limit apply as
// to every session.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/metadata"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/web"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

// DefaultJoinTimeout is how long a web call waits for its caller's client to join: long
// enough for a visitor to read the page and allow the microphone, short enough that an
// abandoned click gives its concurrent-session slot and its persona worker back soon.
const DefaultJoinTimeout = 60 * time.Second

// webRoomSlack keeps a web call's room past its join timeout, so that the sweeper's
// join_timeout, not LiveKit closing the room, ends a call nobody joined.
const webRoomSlack = 30 * time.Second

// WebCallerName is the display name of a web call's caller.
const WebCallerName = "caller"

// Participant attributes of a web call's caller, carried in its token (LiveKit's
// attributes claim): the account's branding, which the hosted join page reads from the
// token it holds, with no request to a server, to show the connecting screen's name and
// colour before the room is joined.
const (
	AttributeBrandName  = "bridgeline.brand_name"
	AttributeBrandColor = "bridgeline.brand_color"
	// AttributeAssistantName is the name the assistant joins the room with (its
	// version's), which the join page shows before Start.
	AttributeAssistantName = "bridgeline.assistant_name"
)

// webRoomTimeout is a web call's room's empty and departure timeouts: its join timeout
// and the slack. livekit-server closes a room its departure timeout after the last
// participant that is not an agent left (the assistant, in the room from the create,
// does not hold it open: Room.CloseIfEmpty, v1.11.0), so with RoomDepartureTimeout a
// watcher that came and went before the caller, or a caller whose first connection
// aborted, had the room closed 10 s later (the call failed room_closed) and the caller
// could not join again within its join timeout. Once the call is answered its end
// deletes the room, so the longer wait keeps no room alive.
func (s *Service) webRoomTimeout() time.Duration { return s.set.JoinTimeout + webRoomSlack }

// joinDeadline is when a web call's caller must have joined by.
func (s *Service) joinDeadline(ses Session) time.Time { return ses.CreatedAt.Add(s.set.JoinTimeout) }

// recordWebCall reads the web call's line (whose variables apply) and assistant version,
// mints the caller's token and saves the session and its call, ringing, at revision 1.
func (s *Service) recordWebCall(ctx context.Context, caller account.Caller, sessionID string, req CreateRequest) (recorded, error) {
	accountID := caller.ID
	// The assistant first: it is what a web call is about (another account's is 404 even
	// to an account without a line).
	v, err := assistant.CallVersion(ctx, s.assistants, accountID, req.AssistantID, "")
	if err != nil {
		return recorded{}, err
	}
	l, err := s.callingLine(ctx, accountID, req.LineID)
	if err != nil {
		return recorded{}, err
	}
	if err := req.keyAdmitted(caller.Live, web.Kind{}, "a web call"); err != nil {
		return recorded{}, err
	}
	identity := NewCustomerIdentity()
	now := s.now()
	ses := Session{ID: sessionID, AccountID: accountID, LineID: l.ID, Mode: ModeAssistant, Media: req.Media,
		Status: StatusRinging, CreatedAt: now, Metadata: metadata.New(req.Metadata),
		AssistantID: v.AssistantID, VersionID: v.ID, Caller: identity, Recording: req.Recording}
	c := call.Call{ID: ident.New("call"), AccountID: accountID, Direction: call.Inbound, LineID: l.ID,
		From: identity, To: l.Handle, Media: req.Media, Status: call.StatusRinging, HandledBy: call.HandledByAssistant,
		AssistantID: v.AssistantID, VersionID: v.ID, SessionID: ses.ID, Platform: web.Name, StartedAt: now,
		Metadata: ses.Metadata.Clone(), Variables: callVariables(v, req.Variables, l)}
	if _, _, err := v.Rendered(c.Variables); err != nil {
		return recorded{}, err
	}
	c.Record(ses.RecordingOf(v) == assistant.RecordingAudio)
	ses.CallID = c.ID
	tok, err := s.callerToken(ses, caller.Account, v.Name)
	if err != nil {
		return recorded{}, err
	}
	if err := s.saveNew(ctx, &ses, c); err != nil {
		return recorded{}, fmt.Errorf("save session %s: %w", ses.ID, err)
	}
	ses.Revision, c.Revision = 1, 1
	return recorded{ses: ses, call: c, token: tok}, nil
}

// callerToken mints a web call's caller token: its one room, its own identity, the
// camera and the microphone (the microphone only on an audio call), and the account's
// branding as attributes.
func (s *Service) callerToken(ses Session, acct account.Account, assistantName string) (Token, error) {
	sources := []string{rtc.SourceMicrophone}
	if ses.Media == platform.MediaVideo {
		sources = append(sources, rtc.SourceCamera)
	}
	tok, err := s.rooms.ParticipantToken(rtc.Grant{Room: ses.ID, Identity: ses.Caller, Name: WebCallerName, Sources: sources,
		Attributes: map[string]string{AttributeBrandName: acct.Name, AttributeBrandColor: acct.BrandColor,
			AttributeAssistantName: assistantName}})
	if err != nil {
		return Token{}, err
	}
	return Token{Token: tok, Name: WebCallerName}, nil
}

// startWebCall dispatches a recorded web call's assistant into its room, now that the
// room exists, and answers the create. A dispatch LiveKit refuses fails the session
// (assistant_unavailable): nothing was dialled, so the error does not wrap
// ErrDialAttempted and a retry may create the call again.
func (s *Service) startWebCall(ctx context.Context, p recorded) (Created, error) {
	if ok, err := s.tryDispatch(ctx, p.ses, p.call); !ok {
		if err == nil {
			err = errors.New("LiveKit refused the assistant's dispatch; the session failed")
		}
		return Created{}, upstream("the media service could not start the assistant", err)
	}
	return Created{Session: p.ses, Call: p.call, Token: p.token, RTCURL: s.rooms.PublicURL()}, nil
}

// callerJoined answers a ringing web call whose caller's client joined its room. The
// assistant was dispatched at create, so nothing is dispatched here.
func (s *Service) callerJoined(ctx context.Context, sessionID string) error {
	_, _, _, err := s.markAnswered(ctx, sessionID, nil)
	return err
}

// callerLeft ends a live web call whose caller's client left its room: the caller hung
// up.
func (s *Service) callerLeft(ctx context.Context, sessionID string) error {
	_, _, _, err := s.endIf(ctx, sessionID, live, StatusEnded, call.ReasonRemoteHangup, call.EndedByRemote)
	return err
}

// joinTimedOut: a web call still ringing (its caller never joined) past the join
// timeout.
func joinTimedOut(ses Session, now time.Time, limit time.Duration) bool {
	return ses.WebCall() && ses.Status == StatusRinging && !now.Before(ses.CreatedAt.Add(limit))
}
