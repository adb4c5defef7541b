package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/livekit/protocol/livekit"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/decision"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

// Records is where sessions and calls are kept: one store implements both.
type Records interface {
	Store
	call.Store
}

// Rooms is what the service needs of LiveKit: *rtc.Client.
type Rooms interface {
	CreateRoom(ctx context.Context, spec rtc.RoomSpec) (*livekit.Room, error)
	DeleteRoom(ctx context.Context, name string) error
	Dispatch(ctx context.Context, room string, d rtc.AgentDispatch) error
	ParticipantToken(g rtc.Grant) (rtc.Token, error)
	PublicURL() string
}

// Decider asks the customer about an inbound call on a customer_decides line:
// *decision.Asker.
type Decider interface {
	Ask(ctx context.Context, in decision.Incoming) (decision.Record, error)
}

// Room settings every session room gets.
const (
	// RoomEmptyTimeout closes a room nobody ever joined.
	RoomEmptyTimeout = 60 * time.Second
	// RoomDepartureTimeout closes a room after its last participant left.
	RoomDepartureTimeout = 10 * time.Second
	// RoomMaxParticipants: the remote party, the customer's client, an assistant, and
	// room for a reconnect or a watcher.
	RoomMaxParticipants = 6
)

// Service runs sessions and calls. Build it once with every dependency.
type Service struct {
	Records    Records
	Lines      line.Store
	Assistants assistant.Store
	Accounts   account.Store
	Rooms      Rooms
	// Platforms are the calling platforms by name (a line's Platform).
	Platforms map[string]platform.Platform
	// Decider runs customer_decides; nil declines those calls at once as timed out.
	Decider Decider
	// Notify, when set, is called after a write that queued events (wakes the local
	// delivery worker).
	Notify func()
	// MaxDuration is the longest a session lives, from its creation; Sweep ends longer
	// ones with max_duration. Zero means DefaultMaxDuration.
	MaxDuration time.Duration
	// DispatchTimeout bounds the time from an assistant call's answer to the first report
	// of a persona worker; Sweep fails calls past it with assistant_unavailable
	// (livekit-server drops a dispatch silently when no worker is free). Zero means
	// DefaultDispatchTimeout.
	DispatchTimeout time.Duration
	// ReportWait is how long call.ended of an assistant call that ended before its
	// worker's final report waits for that report; then Sweep sends it without (the record
	// reads assistant_report: missing). Zero means DefaultReportWait.
	ReportWait time.Duration
	Log        *slog.Logger
	Now        func() time.Time
}

// Defaults of the service's limits.
const (
	DefaultMaxDuration     = 60 * time.Minute
	DefaultDispatchTimeout = 15 * time.Second
	// DefaultReportWait: a worker's ended report comes about a second after the hang-up.
	// With the local stack's 1 s sweep, call.ended goes out at most 4 s after the end
	// without it; with the AWS sweeper's 2 s tick, at most 5 s.
	DefaultReportWait = 3 * time.Second
)

// CreateRequest is POST /v1/sessions.
type CreateRequest struct {
	PlatformHandle string
	Media          string // video (default) | audio
	Mode           string // human (default) | assistant
	AssistantID    string // required with mode assistant
	LineID         string // the line to call from; default the account's first line
}

// Created is a new session with its first participant token.
type Created struct {
	Session Session
	Call    call.Call
	Token   rtc.Token
	RTCURL  string
}

// Validate checks the request and fills its defaults.
func (r *CreateRequest) Validate() error {
	switch h := r.PlatformHandle; {
	case strings.TrimSpace(h) == "":
		return apierr.Missing("platform_handle")
	case len(h) > 255 || !utf8.ValidString(h) || strings.ContainsAny(h, "\x00\r\n"):
		return apierr.Invalid("platform_handle", "platform_handle must be at most 255 characters on one line")
	}
	if r.Media == "" {
		r.Media = platform.MediaVideo
	}
	if r.Media != platform.MediaVideo && r.Media != platform.MediaAudio {
		return apierr.Invalid("media", "media must be video or audio")
	}
	if r.Mode == "" {
		r.Mode = ModeHuman
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
	return nil
}

// Create makes a room named after a new session, mints the customer's token, records the
// session and its call, and asks the line's platform to dial the handle into the room.
//
// Errors: parameter errors; resource_not_found for an unknown line or assistant;
// no_line when the account has none; assistant_archived, assistant_not_published;
// upstream_unavailable when LiveKit or the platform failed (the session is then failed).
func (s *Service) Create(ctx context.Context, accountID string, req CreateRequest) (Created, error) {
	if err := req.Validate(); err != nil {
		return Created{}, err
	}
	l, err := s.callingLine(ctx, accountID, req.LineID)
	if err != nil {
		return Created{}, err
	}
	plat, ok := s.Platforms[l.Platform]
	if !ok {
		s.log().Error("no adapter for the line's platform", "line_id", l.ID, "platform", l.Platform)
		return Created{}, upstream("the line's calling platform is not available", fmt.Errorf("no adapter for platform %q", l.Platform))
	}
	var ver *assistant.Version
	if req.Mode == ModeAssistant {
		v, err := s.activeVersion(ctx, accountID, req.AssistantID, "assistant_id")
		if err != nil {
			return Created{}, err
		}
		ver = &v
	}
	now := s.now()
	ses := Session{ID: ident.New("ses"), AccountID: accountID, LineID: l.ID, Mode: req.Mode, Media: req.Media,
		PlatformHandle: req.PlatformHandle, Status: StatusRinging, CreatedAt: now}
	c := call.Call{ID: ident.New("call"), AccountID: accountID, Direction: call.Outbound, LineID: l.ID,
		From: l.Handle, To: req.PlatformHandle, Media: req.Media, Status: call.StatusRinging,
		HandledBy: call.HandledByCustomer, SessionID: ses.ID, Platform: l.Platform, StartedAt: now}
	ses.CallID = c.ID
	spec := rtc.RoomSpec{Name: ses.ID}
	if ver != nil {
		// The version is fixed now; the assistant is dispatched when the callee answers
		// (calleeAnswered), so the persona worker's media checks do not run out while the
		// phone rings.
		ses.AssistantID, ses.VersionID = ver.AssistantID, ver.ID
		c.HandledBy, c.AssistantID, c.VersionID = call.HandledByAssistant, ver.AssistantID, ver.ID
	}
	if err := s.createRoom(ctx, spec); err != nil {
		s.log().Error("create room", "session_id", ses.ID, "err", err)
		return Created{}, upstream("the media service could not create the room", err)
	}
	tok, err := s.customerToken(ses.ID)
	if err != nil {
		s.deleteRoom(ses.ID)
		return Created{}, err
	}
	partyRoom, err := s.partyRoom(ses.ID, req.PlatformHandle)
	if err != nil {
		s.deleteRoom(ses.ID)
		return Created{}, err
	}
	if err := s.Records.SaveSession(ctx, ses, c, nil); err != nil {
		s.deleteRoom(ses.ID)
		return Created{}, fmt.Errorf("save session %s: %w", ses.ID, err)
	}
	ses.Revision, c.Revision = 1, 1

	pcid, err := plat.Dial(ctx, platform.DialRequest{CallID: c.ID, From: l.Handle, To: req.PlatformHandle, Media: req.Media, Room: partyRoom})
	if err != nil {
		s.log().Error("dial failed", "session_id", ses.ID, "call_id", c.ID, "err", err)
		s.end(context.WithoutCancel(ctx), ses.ID, StatusFailed, call.ReasonPlatformError, call.EndedBySystem)
		return Created{}, upstream("the calling platform could not place the call", err)
	}
	ses, c, err = s.mutate(ctx, ses.ID, func(ses *Session, c *call.Call) ([]callevent.Event, bool, error) {
		if c.PlatformCallID != "" {
			return nil, false, nil
		}
		c.PlatformCallID = pcid
		return nil, true, nil
	})
	if err != nil {
		return Created{}, err
	}
	return Created{Session: ses, Call: c, Token: tok, RTCURL: s.Rooms.PublicURL()}, nil
}

// Get returns the account's session.
func (s *Service) Get(ctx context.Context, accountID, id string) (Session, error) {
	ses, err := s.Records.GetSession(ctx, id)
	return apierr.Owned(ses, ses.AccountID, err, accountID, apierr.NotFound("session", id))
}

// List returns a page of the account's sessions, newest first.
func (s *Service) List(ctx context.Context, accountID string, q listing.Query) ([]Session, error) {
	return s.Records.ListSessions(ctx, accountID, q)
}

// Delete ends the session: the room is deleted (everyone in it is disconnected and its
// tokens can no longer join), the platform call is hung up and call.ended is written, once.
// Deleting an ended session returns it unchanged.
func (s *Service) Delete(ctx context.Context, accountID, id string) (Session, error) {
	if _, err := s.Get(ctx, accountID, id); err != nil {
		return Session{}, err
	}
	ses, _, err := s.end(ctx, id, StatusEnded, call.ReasonDeleted, call.EndedByCustomer)
	return ses, err
}

// Token mints a fresh participant token for a live session.
//
// Errors: resource_not_found; session_ended once the session is over.
func (s *Service) Token(ctx context.Context, accountID, id string) (rtc.Token, error) {
	ses, err := s.Get(ctx, accountID, id)
	if err != nil {
		return rtc.Token{}, err
	}
	if ses.Over() {
		return rtc.Token{}, apierr.New(apierr.CodeSessionEnded, fmt.Sprintf("session %s has ended", id))
	}
	return s.customerToken(ses.ID)
}

// GetCall returns the account's call record.
func (s *Service) GetCall(ctx context.Context, accountID, id string) (call.Call, error) {
	c, err := s.Records.GetCall(ctx, id)
	return apierr.Owned(c, c.AccountID, err, accountID, apierr.NotFound("call", id))
}

// ListCalls returns a page of the account's calls, newest first.
func (s *Service) ListCalls(ctx context.Context, accountID string, q call.ListQuery) ([]call.Call, error) {
	return s.Records.ListCalls(ctx, accountID, q)
}

// callingLine is the line a session calls from: the given one, or the account's oldest.
func (s *Service) callingLine(ctx context.Context, accountID, lineID string) (line.Line, error) {
	if lineID != "" {
		l, err := s.Lines.GetLine(ctx, lineID)
		return apierr.Owned(l, l.AccountID, err, accountID,
			apierr.Param(apierr.CodeResourceNotFound, "line_id", fmt.Sprintf("no such line: %q", lineID)))
	}
	var oldest line.Line
	q := listing.Query{Limit: listing.MaxLimit}
	for {
		page, err := s.Lines.ListLines(ctx, accountID, q)
		if err != nil {
			return line.Line{}, fmt.Errorf("list lines: %w", err)
		}
		page, more := listing.Page(page, q.Limit)
		if len(page) > 0 {
			oldest = page[len(page)-1]
		}
		if !more {
			break
		}
		q.StartingAfter = oldest.ID
	}
	if oldest.ID == "" {
		return line.Line{}, apierr.New(apierr.CodeNoLine, "the account has no line to call from; ask the operator to provision one")
	}
	return oldest, nil
}

// activeVersion returns the snapshot of the assistant's active version.
func (s *Service) activeVersion(ctx context.Context, accountID, assistantID, param string) (assistant.Version, error) {
	found, err := s.Assistants.GetAssistant(ctx, assistantID)
	a, err := apierr.Owned(found, found.AccountID, err, accountID,
		apierr.Param(apierr.CodeResourceNotFound, param, fmt.Sprintf("no such assistant: %q", assistantID)))
	if err != nil {
		return assistant.Version{}, err
	}
	if a.Status == assistant.StatusArchived {
		return assistant.Version{}, apierr.Param(apierr.CodeAssistantArchived, param, fmt.Sprintf("assistant %s is archived", assistantID))
	}
	v, ok := a.ActiveVersion()
	if !ok {
		return assistant.Version{}, apierr.Param(apierr.CodeAssistantNotPublished, param,
			fmt.Sprintf("assistant %s has no published version; publish it first", assistantID))
	}
	if v.AssistantID == "" {
		v.AssistantID = a.ID
	}
	return v, nil
}

// job is the dispatch metadata for an assistant call: the version fixed now.
func (s *Service) job(ctx context.Context, c call.Call, v assistant.Version, answeredAt time.Time) (string, error) {
	acct, err := s.Accounts.GetAccount(ctx, c.AccountID)
	if err != nil {
		return "", fmt.Errorf("get account %s: %w", c.AccountID, err)
	}
	j := persona.Job{CallID: c.ID, SessionID: c.SessionID, AccountID: c.AccountID, Media: c.Media,
		CallerIdentity: platform.ParticipantIdentity, AnsweredAt: answeredAt,
		Brand: persona.Brand{Name: acct.Name, Color: acct.BrandColor},
		Version: persona.Version{AssistantID: v.AssistantID, ID: v.ID, Number: v.Number, Name: v.Name,
			SystemPrompt: v.SystemPrompt, Greeting: v.Greeting, AvatarID: v.AvatarID,
			Framing: persona.Framing{Shot: v.Framing.Shot, Position: v.Framing.Position}, Voice: v.Voice, Model: v.Model}}
	b, err := json.Marshal(j)
	return string(b), err
}

func (s *Service) createRoom(ctx context.Context, spec rtc.RoomSpec) error {
	spec.EmptyTimeout, spec.DepartureTimeout, spec.MaxParticipants = RoomEmptyTimeout, RoomDepartureTimeout, RoomMaxParticipants
	_, err := s.Rooms.CreateRoom(ctx, spec)
	return err
}

// deleteRoom removes a room on a path that is failing anyway; an error is only logged.
func (s *Service) deleteRoom(room string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Rooms.DeleteRoom(ctx, room); err != nil {
		s.log().Error("delete room", "session_id", room, "err", err)
	}
}

func (s *Service) customerToken(room string) (rtc.Token, error) {
	return s.Rooms.ParticipantToken(rtc.Grant{Room: room, Identity: CustomerIdentity, Name: "customer"})
}

// partyRoom is where the platform bridges its party: a SIP-kind participant named after
// its handle.
func (s *Service) partyRoom(room, handle string) (platform.Room, error) {
	tok, err := s.Rooms.ParticipantToken(rtc.Grant{Room: room, Identity: platform.ParticipantIdentity, Name: handle,
		Kind: livekit.ParticipantInfo_SIP})
	if err != nil {
		return platform.Room{}, err
	}
	return platform.Room{URL: s.Rooms.PublicURL(), Token: tok.JWT}, nil
}

// mutate applies change to a session and its call and saves them, conditionally, reading
// again when another writer got there first. change reports whether it changed anything.
func (s *Service) mutate(ctx context.Context, sessionID string, change func(*Session, *call.Call) ([]callevent.Event, bool, error)) (Session, call.Call, error) {
	for attempt := 0; ; attempt++ {
		ses, err := s.Records.GetSession(ctx, sessionID)
		if err != nil {
			return Session{}, call.Call{}, fmt.Errorf("get session %s: %w", sessionID, err)
		}
		c, err := s.Records.GetCall(ctx, ses.CallID)
		if err != nil {
			return Session{}, call.Call{}, fmt.Errorf("get call %s: %w", ses.CallID, err)
		}
		evts, changed, err := change(&ses, &c)
		if err != nil || !changed {
			return ses, c, err
		}
		err = s.Records.SaveSession(ctx, ses, c, evts)
		if err == nil {
			ses.Revision++
			c.Revision++
			s.notify(evts)
			return ses, c, nil
		}
		if !errors.Is(err, apierr.ErrConflict) || attempt >= 32 {
			return Session{}, call.Call{}, fmt.Errorf("save session %s: %w", sessionID, err)
		}
		backoff(attempt)
	}
}

// mutateCall is mutate for a call on its own (one that never got a session).
func (s *Service) mutateCall(ctx context.Context, callID string, change func(*call.Call) ([]callevent.Event, bool, error)) (call.Call, error) {
	for attempt := 0; ; attempt++ {
		c, err := s.Records.GetCall(ctx, callID)
		if err != nil {
			return call.Call{}, fmt.Errorf("get call %s: %w", callID, err)
		}
		evts, changed, err := change(&c)
		if err != nil || !changed {
			return c, err
		}
		err = s.Records.SaveCall(ctx, c, evts)
		if err == nil {
			c.Revision++
			s.notify(evts)
			return c, nil
		}
		if !errors.Is(err, apierr.ErrConflict) || attempt >= 32 {
			return call.Call{}, fmt.Errorf("save call %s: %w", callID, err)
		}
		backoff(attempt)
	}
}

// end finishes a session and its call once: status ended (or failed), the reason, who
// ended it, and call.ended in the same write. The room is deleted and the platform call
// hung up whenever the session is found live or the end is asked for explicitly (DELETE),
// so a retry completes a clean-up that failed half way.
func (s *Service) end(ctx context.Context, sessionID, status, reason, by string) (Session, call.Call, error) {
	ses, c, _, err := s.endIf(ctx, sessionID, nil, status, reason, by)
	return ses, c, err
}

// live is an endIf condition: the session has not ended.
func live(ses Session, _ call.Call) bool { return !ses.Over() }

// endIf is end when cond (nil: always) holds for the session and call as they are read
// at write time. When it does not, nothing is written and nothing cleaned up, and ended
// is false: an end that is only right while a state lasts (a sweep's, a late worker
// report's) cannot act on a session that moved on.
func (s *Service) endIf(ctx context.Context, sessionID string, cond func(Session, call.Call) bool, status, reason, by string) (Session, call.Call, bool, error) {
	now := s.now()
	held := true
	ses, c, err := s.mutate(ctx, sessionID, func(ses *Session, c *call.Call) ([]callevent.Event, bool, error) {
		if held = cond == nil || cond(*ses, *c); !held {
			return nil, false, nil
		}
		var evts []callevent.Event
		changed := false
		if !ses.Over() {
			st := status
			if st == StatusEnded && ses.Status == StatusRinging && reason != call.ReasonDeleted && reason != call.ReasonParticipantLeft {
				// Never connected: a ringing session that ends for any reason but the
				// customer's own is a failed one.
				st = StatusFailed
			}
			ses.Status, ses.EndReason, ses.EndedAt = st, reason, &now
			changed = true
		}
		if evt, ok := c.End(callStatus(ses.Status, reason), reason, by, now, newEventID); ok {
			changed = true
			switch {
			case awaitsReport(*ses, *c):
				// The worker is still to send its transcript: call.ended waits for it
				// (HandleReport), or for Sweep once the wait is over.
				due := now.Add(s.reportWait())
				ses.ReportDueAt = &due
			case ses.Mode == ModeAssistant && c.AssistantReport == "":
				c.AssistantReport = call.ReportMissing // no worker ever reported
				evts = append(evts, evt)
			default:
				evts = append(evts, evt)
			}
		}
		return evts, changed, nil
	})
	if err != nil || !held {
		return ses, c, false, err
	}
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.Rooms.DeleteRoom(cleanup, ses.ID); err != nil {
		// The call record is complete; the room's own timeouts close it if LiveKit is
		// unreachable now.
		s.log().Error("delete room", "session_id", ses.ID, "err", err)
	}
	if c.PlatformCallID != "" && reason != call.ReasonRemoteHangup {
		if plat, ok := s.Platforms[c.Platform]; ok {
			var err error
			if c.Status == call.StatusDeclined {
				// Never answered: the ringing call is rejected rather than hung up.
				err = ignoreGone(plat.Reject(cleanup, c.PlatformCallID, reason))
			} else {
				err = plat.Hangup(cleanup, c.PlatformCallID)
			}
			if err != nil {
				s.log().Error("hang up", "call_id", c.ID, "err", err)
			}
		}
	}
	return ses, c, true, nil
}

// awaitsReport: an assistant call a worker took (it reported) whose final report is not in.
func awaitsReport(ses Session, c call.Call) bool {
	return ses.Mode == ModeAssistant && ses.AssistantSeenAt != nil && c.AssistantReport != call.ReportReceived
}

func (s *Service) reportWait() time.Duration {
	if s.ReportWait > 0 {
		return s.ReportWait
	}
	return DefaultReportWait
}

// callStatus is the call's final status for a session's.
func callStatus(sessionStatus, reason string) string {
	switch {
	case reason == call.ReasonDeclined || reason == call.ReasonDecisionTimeout:
		return call.StatusDeclined
	case sessionStatus == StatusFailed:
		return call.StatusFailed
	}
	return call.StatusEnded
}

// answered marks a ringing session and its call answered, with call.answered. won
// reports whether this call made the change (a redelivered answer does not).
func (s *Service) answered(ctx context.Context, sessionID string, decided func(*call.Call)) (ses Session, c call.Call, won bool, err error) {
	now := s.now()
	ses, c, err = s.mutate(ctx, sessionID, func(ses *Session, c *call.Call) ([]callevent.Event, bool, error) {
		won = false
		if ses.Status != StatusRinging || c.Status != call.StatusRinging {
			return nil, false, nil
		}
		if decided != nil {
			decided(c)
		}
		ses.Status, ses.AnsweredAt = StatusActive, &now
		c.Answer(now)
		won = true
		return []callevent.Event{c.AnsweredEvent(newEventID())}, true, nil
	})
	return ses, c, won, err
}

// calleeAnswered marks an outbound session answered and, in mode assistant, dispatches
// the assistant with the version fixed at creation.
func (s *Service) calleeAnswered(ctx context.Context, sessionID string) error {
	ses, c, won, err := s.answered(ctx, sessionID, nil)
	if err != nil || !won || ses.Mode != ModeAssistant {
		return err
	}
	v, err := s.Assistants.GetVersion(ctx, ses.VersionID)
	if err != nil {
		return fmt.Errorf("get version %s: %w", ses.VersionID, err)
	}
	if v.AssistantID == "" {
		v.AssistantID = ses.AssistantID
	}
	job, err := s.job(ctx, c, v, *c.AnsweredAt)
	if err != nil {
		return err
	}
	if err := s.Rooms.Dispatch(ctx, ses.ID, rtc.AgentDispatch{AgentName: persona.AgentName, Metadata: job}); err != nil {
		s.log().Error("dispatch assistant", "session_id", ses.ID, "err", err)
		_, _, err = s.end(ctx, ses.ID, StatusFailed, call.ReasonAssistantUnavailable, call.EndedBySystem)
		return err
	}
	return nil
}

func (s *Service) notify(evts []callevent.Event) {
	if len(evts) > 0 && s.Notify != nil {
		s.Notify()
	}
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC().Truncate(time.Millisecond)
	}
	return time.Now().UTC().Truncate(time.Millisecond)
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

func newEventID() string { return ident.New("evt") }

func upstream(msg string, err error) error {
	return fmt.Errorf("%w: %v", apierr.New(apierr.CodeUpstreamUnavailable, msg), err)
}

func backoff(attempt int) {
	time.Sleep(time.Duration(rand.IntN(1+min(attempt, 10))) * time.Millisecond)
}
