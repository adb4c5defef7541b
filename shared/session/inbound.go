package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/platform"
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
