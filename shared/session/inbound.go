package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/livekit/protocol/livekit"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/decision"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

var _ platform.Handler = (*Service)(nil)

// HandleNotification acts on what a calling platform reports. A notification that was
// already acted on (a redelivery) changes nothing.
func (s *Service) HandleNotification(ctx context.Context, platformName string, n platform.Notification) error {
	plat, ok := s.Platforms[platformName]
	if !ok {
		return fmt.Errorf("no adapter for platform %q", platformName)
	}
	if n.Event == platform.EventInbound {
		return s.inbound(ctx, plat, n)
	}
	c, err := s.platformCall(ctx, platformName, n)
	if errors.Is(err, apierr.ErrNotFound) {
		s.log().Warn("notification for an unknown call", "platform", platformName, "event", n.Event, "platform_call_id", n.PlatformCallID)
		return nil
	}
	if err != nil {
		return err
	}
	if c.SessionID == "" {
		// A call that never reached a room (declined at the line): only a hang-up can
		// still come, and the call is over already.
		return nil
	}
	switch n.Event {
	case platform.EventAnswered:
		err = s.calleeAnswered(ctx, c.SessionID)
	case platform.EventNoAnswer:
		_, _, err = s.end(ctx, c.SessionID, StatusFailed, call.ReasonNoAnswer, call.EndedByRemote)
	case platform.EventBusy:
		_, _, err = s.end(ctx, c.SessionID, StatusFailed, call.ReasonBusy, call.EndedByRemote)
	case platform.EventFailed:
		_, _, err = s.end(ctx, c.SessionID, StatusFailed, call.ReasonPlatformError, call.EndedBySystem)
	case platform.EventHangup:
		_, _, err = s.end(ctx, c.SessionID, StatusEnded, call.ReasonRemoteHangup, call.EndedByRemote)
	default:
		s.log().Warn("unknown platform event", "platform", platformName, "event", n.Event)
	}
	return err
}

// platformCall finds the call a notification is about: by Bridgeline's id when the
// platform knows it, else by the platform's.
func (s *Service) platformCall(ctx context.Context, platformName string, n platform.Notification) (call.Call, error) {
	if n.CallID != "" {
		c, err := s.Records.GetCall(ctx, n.CallID)
		if err == nil && c.Platform == platformName {
			return c, nil
		}
		if err != nil && !errors.Is(err, apierr.ErrNotFound) {
			return call.Call{}, err
		}
	}
	return s.Records.CallByPlatformID(ctx, platformName, n.PlatformCallID)
}

// inbound routes a call that arrived on a line by the line's inbound_mode.
func (s *Service) inbound(ctx context.Context, plat platform.Platform, n platform.Notification) error {
	if _, err := s.Records.CallByPlatformID(ctx, plat.Name(), n.PlatformCallID); err == nil {
		return nil // redelivered
	}
	l, err := s.Lines.LineByHandle(ctx, plat.Name(), n.To)
	if errors.Is(err, apierr.ErrNotFound) {
		s.log().Warn("inbound call to an unknown handle", "platform", plat.Name(), "to", n.To)
		return ignoreGone(plat.Reject(ctx, n.PlatformCallID, "no such line"))
	}
	if err != nil {
		return fmt.Errorf("line for %s: %w", n.To, err)
	}
	media := n.Media
	if media != platform.MediaAudio {
		media = platform.MediaVideo
	}
	c := call.Call{ID: ident.New("call"), AccountID: l.AccountID, Direction: call.Inbound, LineID: l.ID, From: n.From,
		To: n.To, Media: media, Status: call.StatusRinging, HandledBy: call.HandledByNone, Platform: plat.Name(),
		PlatformCallID: n.PlatformCallID, StartedAt: s.now()}
	switch l.InboundMode {
	case line.ModeAssistant:
		if l.AssistantID == "" {
			return s.decline(ctx, plat, c, call.ReasonNoAssistant)
		}
		v, err := s.activeVersion(ctx, l.AccountID, l.AssistantID, "assistant_id")
		if err != nil {
			if _, ok := apierr.As(err); ok {
				return s.decline(ctx, plat, c, call.ReasonNoAssistant)
			}
			return err
		}
		return s.answerWithAssistant(ctx, plat, c, v)
	case line.ModeCustomerDecides:
		return s.customerDecides(ctx, plat, c, l)
	default:
		return s.decline(ctx, plat, c, call.ReasonLineDisabled)
	}
}

// decline records an inbound call that is not taken and rejects it on the platform.
func (s *Service) decline(ctx context.Context, plat platform.Platform, c call.Call, reason string) error {
	evt, _ := c.End(call.StatusDeclined, reason, call.EndedBySystem, s.now(), newEventID)
	if err := s.Records.SaveCall(ctx, c, []callevent.Event{evt}); err != nil {
		if errors.Is(err, apierr.ErrConflict) {
			return nil // a concurrent delivery of the same notification recorded it
		}
		return fmt.Errorf("record declined call: %w", err)
	}
	s.notify([]callevent.Event{evt})
	return ignoreGone(plat.Reject(ctx, c.PlatformCallID, reason))
}

// answerWithAssistant answers an inbound call with the line's assistant: a room with an
// agent dispatch carrying the version fixed now, and the caller bridged in.
func (s *Service) answerWithAssistant(ctx context.Context, plat platform.Platform, c call.Call, v assistant.Version) error {
	ses := s.inboundSession(c)
	ses.Mode, ses.AssistantID, ses.VersionID = ModeAssistant, v.AssistantID, v.ID
	c.SessionID, c.HandledBy, c.AssistantID, c.VersionID = ses.ID, call.HandledByAssistant, v.AssistantID, v.ID
	answeredAt := s.now()
	job, err := s.job(ctx, c, v, answeredAt)
	if err != nil {
		return err
	}
	// Recorded before the room exists, so the worker's first report finds the call.
	if err := s.Records.SaveSession(ctx, ses, c, nil); err != nil {
		if errors.Is(err, apierr.ErrConflict) {
			return nil
		}
		return fmt.Errorf("record inbound call: %w", err)
	}
	if err := s.createRoom(ctx, rtc.RoomSpec{Name: ses.ID, Agent: &rtc.AgentDispatch{AgentName: persona.AgentName, Metadata: job}}); err != nil {
		s.log().Error("create room", "session_id", ses.ID, "err", err)
		_, _, endErr := s.end(ctx, ses.ID, StatusFailed, call.ReasonPlatformError, call.EndedBySystem)
		return errors.Join(ignoreGone(plat.Reject(ctx, c.PlatformCallID, "media unavailable")), endErr)
	}
	return s.bridge(ctx, plat, ses, c, nil)
}

// bridge has the platform put the caller into the session's room and marks the call
// answered; a caller who is gone by then ends the session.
func (s *Service) bridge(ctx context.Context, plat platform.Platform, ses Session, c call.Call, decided func(*call.Call)) error {
	room, err := s.partyRoom(ses.ID, c.From)
	if err != nil {
		return err
	}
	if err := plat.Answer(ctx, c.PlatformCallID, c.ID, room); err != nil {
		reason, status, by := call.ReasonPlatformError, StatusFailed, call.EndedBySystem
		if errors.Is(err, platform.ErrUnknownCall) {
			// The caller hung up while we were answering.
			reason, status, by = call.ReasonRemoteHangup, StatusEnded, call.EndedByRemote
		} else {
			s.log().Error("answer call", "session_id", ses.ID, "err", err)
		}
		_, _, endErr := s.end(ctx, ses.ID, status, reason, by)
		return endErr
	}
	_, _, _, err = s.answered(ctx, ses.ID, decided)
	return err
}

// customerDecides rings the customer: a room and a session payload are made, call.incoming
// is posted, and the first answer (or the deadline) decides.
func (s *Service) customerDecides(ctx context.Context, plat platform.Platform, c call.Call, l line.Line) error {
	ses := s.inboundSession(c)
	if err := s.createRoom(ctx, rtc.RoomSpec{Name: ses.ID}); err != nil {
		s.log().Error("create room", "session_id", ses.ID, "err", err)
		return s.decline(ctx, plat, c, call.ReasonPlatformError)
	}
	c.SessionID, c.HandledBy = ses.ID, call.HandledByCustomer
	tok, err := s.customerToken(ses.ID)
	if err != nil {
		return err
	}
	if err := s.Records.SaveSession(ctx, ses, c, nil); err != nil {
		s.deleteRoom(ses.ID)
		if errors.Is(err, apierr.ErrConflict) {
			return nil
		}
		return fmt.Errorf("record inbound call: %w", err)
	}
	rec := decision.Record{Decision: decision.Timeout}
	if s.Decider != nil {
		timeout := time.Duration(l.DecisionTimeoutSeconds) * time.Second
		if timeout <= 0 {
			timeout = line.DefaultDecisionTimeout * time.Second
		}
		timeout = s.decisionWait(ctx, timeout)
		rec, err = s.Decider.Ask(ctx, decision.Incoming{AccountID: c.AccountID, CallID: c.ID, LineID: l.ID,
			From: c.From, To: c.To, Media: c.Media, Timeout: timeout,
			Session: callevent.Session{SessionID: ses.ID, CallID: c.ID, RTCURL: s.Rooms.PublicURL(),
				ParticipantToken: tok.JWT, ExpiresAt: tok.ExpiresAt}})
		if err != nil {
			s.log().Error("ask customer", "call_id", c.ID, "err", err)
			rec = decision.Record{Decision: decision.Timeout}
		}
	}
	record := func(c *call.Call) { c.Decision, c.DecisionSource = rec.Decision, rec.Source }
	if _, _, err := s.mutate(ctx, ses.ID, func(_ *Session, c *call.Call) ([]callevent.Event, bool, error) {
		if c.Decision != "" {
			return nil, false, nil
		}
		record(c)
		return nil, true, nil
	}); err != nil {
		return err
	}
	switch rec.Decision {
	case decision.Accept:
		return s.bridge(ctx, plat, ses, c, nil)
	case decision.Decline:
		return s.declineSession(ctx, ses.ID, call.ReasonDeclined, call.EndedByCustomer)
	}
	if l.OnDecisionTimeout == line.TimeoutAssistant && l.AssistantID != "" {
		if v, err := s.activeVersion(ctx, c.AccountID, l.AssistantID, "assistant_id"); err == nil {
			return s.handToAssistant(ctx, plat, ses.ID, v)
		}
	}
	return s.declineSession(ctx, ses.ID, call.ReasonDecisionTimeout, call.EndedBySystem)
}

// handToAssistant gives a ringing customer_decides call to the line's assistant when the
// customer did not answer in time.
func (s *Service) handToAssistant(ctx context.Context, plat platform.Platform, sessionID string, v assistant.Version) error {
	ses, c, err := s.mutate(ctx, sessionID, func(ses *Session, c *call.Call) ([]callevent.Event, bool, error) {
		if ses.Over() {
			return nil, false, nil
		}
		ses.Mode, ses.AssistantID, ses.VersionID = ModeAssistant, v.AssistantID, v.ID
		c.HandledBy, c.AssistantID, c.VersionID = call.HandledByAssistant, v.AssistantID, v.ID
		return nil, true, nil
	})
	if err != nil || ses.Over() {
		return err
	}
	job, err := s.job(ctx, c, v, s.now())
	if err != nil {
		return err
	}
	if err := s.Rooms.Dispatch(ctx, ses.ID, rtc.AgentDispatch{AgentName: persona.AgentName, Metadata: job}); err != nil {
		s.log().Error("dispatch assistant", "session_id", ses.ID, "err", err)
		return s.declineSession(ctx, ses.ID, call.ReasonPlatformError, call.EndedBySystem)
	}
	return s.bridge(ctx, plat, ses, c, nil)
}

// declineSession ends a ringing inbound session that is not taken; ending it rejects the
// call on its platform.
func (s *Service) declineSession(ctx context.Context, sessionID, reason, by string) error {
	_, _, err := s.end(ctx, sessionID, StatusFailed, reason, by)
	return err
}

func (s *Service) inboundSession(c call.Call) Session {
	return Session{ID: ident.New("ses"), AccountID: c.AccountID, CallID: c.ID, LineID: c.LineID, Mode: ModeHuman,
		Media: c.Media, PlatformHandle: c.From, Status: StatusRinging, CreatedAt: c.StartedAt}
}

// ignoreGone treats a call the platform no longer has as already handled.
func ignoreGone(err error) error {
	if errors.Is(err, platform.ErrUnknownCall) {
		return nil
	}
	return err
}

// HandleLiveKit acts on a verified LiveKit webhook: the customer's client leaving a
// human session ends it, and a room LiveKit closed by itself ends its session.
//
// Nobody else's leaving ends anything here: the platform party's hang-up comes from its
// platform (the sim's notification), and the assistant (kind AGENT, identity
// assistant-<job id>) leaving is followed by its worker's report, or, when the worker died
// without one, by the caller hanging up.
func (s *Service) HandleLiveKit(ctx context.Context, ev *livekit.WebhookEvent) error {
	room := ev.GetRoom().GetName()
	s.log().Debug("livekit webhook", "event", ev.Event, "room", room, "identity", ev.GetParticipant().GetIdentity(), "reason", ev.GetParticipant().GetDisconnectReason().String())
	if !ident.Valid("ses", room) {
		return nil
	}
	switch ev.Event {
	case "participant_left":
		p := ev.GetParticipant()
		if p.GetIdentity() != CustomerIdentity || p.GetKind() == livekit.ParticipantInfo_AGENT ||
			p.GetDisconnectReason() == livekit.DisconnectReason_DUPLICATE_IDENTITY {
			return nil
		}
		ses, err := s.Records.GetSession(ctx, room)
		if errors.Is(err, apierr.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if ses.Mode != ModeHuman {
			// In an assistant session the customer's client only watches; its leaving
			// does not hang up on the caller.
			return nil
		}
		_, _, _, err = s.endIf(ctx, room, func(ses Session, _ call.Call) bool { return !ses.Over() && ses.Mode == ModeHuman },
			StatusEnded, call.ReasonParticipantLeft, call.EndedByCustomer)
		return err
	case "room_finished":
		_, _, _, err := s.endIf(ctx, room, live, StatusEnded, call.ReasonRoomClosed, call.EndedBySystem)
		if errors.Is(err, apierr.ErrNotFound) {
			return nil
		}
		return err
	}
	return nil
}

// HandleReport applies a persona worker's report to its call. Any report is the proof
// that a worker took the call (the dispatch watchdog's). Metrics are merged as they come;
// the ended report's transcript is kept. An ended report ends a call that is still live,
// by its reason; one that arrives after the call ended (room_closed and terminated come
// after the control plane deleted the room) changes nothing but filling in the metrics and
// transcript the record lacks, and sends the call.ended that waited for it (endIf holds
// it), in the same write. Reports are idempotent: a redelivery changes nothing.
func (s *Service) HandleReport(ctx context.Context, rep persona.Report) error {
	c, err := s.Records.GetCall(ctx, rep.CallID)
	if errors.Is(err, apierr.ErrNotFound) {
		return apierr.NotFound("call", rep.CallID)
	}
	if err != nil {
		return err
	}
	if c.SessionID == "" {
		_, err := s.mutateCall(ctx, c.ID, func(c *call.Call) ([]callevent.Event, bool, error) { return nil, applyReport(c, rep), nil })
		return err
	}
	now := s.now()
	if _, _, err := s.mutate(ctx, c.SessionID, func(ses *Session, c *call.Call) ([]callevent.Event, bool, error) {
		changed := applyReport(c, rep)
		if ses.AssistantSeenAt == nil {
			ses.AssistantSeenAt = &now
			changed = true
		}
		var evts []callevent.Event
		if rep.Kind == persona.ReportEnded && ses.Held() {
			ses.ReportDueAt = nil
			evts = append(evts, c.EndedEvent(newEventID(), now))
			changed = true
		}
		return evts, changed, nil
	}); err != nil {
		return err
	}
	if rep.Kind != persona.ReportEnded {
		return nil
	}
	status, reason, by := reportEnd(rep.EndReason)
	_, _, _, err = s.endIf(ctx, c.SessionID, live, status, reason, by)
	return err
}

// reportEnd is how a worker's end reason ends a call that is still live.
func reportEnd(workerReason string) (status, reason, by string) {
	switch workerReason {
	case persona.EndCallerHangup:
		return StatusEnded, call.ReasonRemoteHangup, call.EndedByRemote
	case persona.EndAssistantHangup:
		return StatusEnded, call.ReasonAssistantHangup, call.EndedByAssistant
	case persona.EndMediaFailed:
		// Media never flowed both ways: the call did not connect.
		return StatusFailed, call.ReasonMediaFailed, call.EndedByAssistant
	case persona.EndRoomClosed:
		return StatusEnded, call.ReasonRoomClosed, call.EndedBySystem
	case persona.EndTerminated:
		return StatusEnded, call.ReasonAssistantError, call.EndedBySystem
	}
	// worker_shutdown, error, and reasons newer than this code.
	return StatusEnded, call.ReasonAssistantError, call.EndedByAssistant
}

// applyReport merges a report's metrics and transcript into the call and reports whether
// anything changed. Once the call is over only what the record lacks is filled in. The
// ended report is the final one: the record is then complete (ReportReceived).
func applyReport(c *call.Call, rep persona.Report) bool {
	before, _ := json.Marshal([]any{c.Metrics, c.Transcript, c.AssistantReport})
	if c.Over() {
		c.Metrics = mergeMetrics(rep.Metrics, derefMetrics(c.Metrics))
		if len(c.Transcript) == 0 && len(rep.Transcript) > 0 {
			c.Transcript = rep.Transcript
		}
	} else {
		c.Metrics = mergeMetrics(derefMetrics(c.Metrics), rep.Metrics)
		if len(rep.Transcript) > 0 {
			c.Transcript = rep.Transcript
		}
	}
	if rep.Kind == persona.ReportEnded {
		c.AssistantReport = call.ReportReceived
	}
	after, _ := json.Marshal([]any{c.Metrics, c.Transcript, c.AssistantReport})
	return string(before) != string(after)
}

func derefMetrics(m *persona.Metrics) persona.Metrics {
	if m == nil {
		return persona.Metrics{}
	}
	return *m
}

// mergeMetrics is base with every metric over set; nil when none is set.
func mergeMetrics(base, over persona.Metrics) *persona.Metrics {
	m := base
	// Every field is a pointer; a later report's value replaces an earlier one.
	mv, ov := reflect.ValueOf(&m).Elem(), reflect.ValueOf(over)
	for i := range mv.NumField() {
		if f := ov.Field(i); !f.IsNil() {
			mv.Field(i).Set(f)
		}
	}
	if reflect.ValueOf(m).IsZero() {
		return nil
	}
	return &m
}

// decisionWait is how long to wait for the customer's decision: the line's timeout, cut
// so that DecisionReserve is left before the request's deadline (at least a second).
func (s *Service) decisionWait(ctx context.Context, timeout time.Duration) time.Duration {
	dl, ok := ctx.Deadline()
	if !ok || s.DecisionReserve <= 0 {
		return timeout
	}
	if left := dl.Sub(s.now()) - s.DecisionReserve; left < timeout {
		return max(left, time.Second)
	}
	return timeout
}
