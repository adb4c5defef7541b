package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/decision"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/redact"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

var _ platform.Handler = (*Service)(nil)

// HandleNotification acts on what a calling platform reports. A notification that was
// already acted on (a redelivery) changes nothing, except an inbound one whose session
// was left ringing half way: that one is carried on (resumeInbound).
func (s *Service) HandleNotification(ctx context.Context, platformName string, n platform.Notification) error {
	plat, ok := s.set.Platforms.Lookup(platformName)
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
	// Each write records the platform's id of the call when the record lacks it (Create
	// does not write it).
	pcid := n.PlatformCallID
	switch n.Event {
	case platform.EventAnswered:
		err = s.calleeAnswered(ctx, plat, c.SessionID, pcid, n.Media)
	case platform.EventNoAnswer:
		_, _, _, err = s.endWith(ctx, c.SessionID, nil, pcid, StatusFailed, call.ReasonNoAnswer, call.EndedByRemote)
	case platform.EventBusy:
		_, _, _, err = s.endWith(ctx, c.SessionID, nil, pcid, StatusFailed, call.ReasonBusy, call.EndedByRemote)
	case platform.EventFailed:
		_, _, _, err = s.endWith(ctx, c.SessionID, nil, pcid, StatusFailed, call.ReasonPlatformError, call.EndedBySystem)
	case platform.EventHangup:
		if transferPending(c) {
			// The party left for the transfer's destination (SIP: after the REFER).
			_, err = s.transferred(ctx, c.SessionID, time.Time{}, "")
			break
		}
		_, _, _, err = s.endWith(ctx, c.SessionID, nil, pcid, StatusEnded, call.ReasonRemoteHangup, call.EndedByRemote)
	default:
		s.log().Warn("unknown platform event", "platform", platformName, "event", n.Event)
	}
	return err
}

// platformCall finds the call a notification is about: by Bridgeline's id when the
// platform knows it, else by the platform's.
func (s *Service) platformCall(ctx context.Context, platformName string, n platform.Notification) (call.Call, error) {
	if n.CallID != "" {
		c, err := s.records.GetCall(ctx, n.CallID)
		if err == nil && c.Platform == platformName {
			return c, nil
		}
		if err != nil && !errors.Is(err, apierr.ErrNotFound) {
			return call.Call{}, err
		}
	}
	return s.records.CallByPlatformID(ctx, platformName, n.PlatformCallID)
}

// inbound routes a call that arrived on a line by the line's inbound_mode.
func (s *Service) inbound(ctx context.Context, plat platform.Platform, n platform.Notification) error {
	if prev, err := s.records.CallByPlatformID(ctx, plat.Name(), n.PlatformCallID); err == nil {
		return s.resumeInbound(ctx, plat, prev) // redelivered
	}
	l, err := s.lines.LineByHandle(ctx, plat.Name(), n.To)
	if errors.Is(err, apierr.ErrNotFound) {
		s.log().Warn("inbound call to an unknown handle", "platform", plat.Name(), "to", redact.Number(n.To))
		return ignoreGone(plat.Reject(ctx, n.PlatformCallID, "no such line"))
	}
	if err != nil {
		return fmt.Errorf("line for %s: %w", n.To, err)
	}
	if l.SIPTrunkID != n.Trunk {
		// A SIP line takes only the calls that authenticated as its own trunk: a call a
		// stale LiveKit trunk of another account's (a number moved between trunks, its
		// sync not done yet) let in is not this line's.
		s.log().Warn("inbound call on another trunk than its line's", "platform", plat.Name(), "line_id", l.ID,
			"line_trunk", l.SIPTrunkID, "call_trunk", n.Trunk)
		return ignoreGone(plat.Reject(ctx, n.PlatformCallID, "no such line"))
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
		v, err := s.lineVersion(ctx, l)
		if err != nil {
			if _, ok := apierr.As(err); ok {
				return s.decline(ctx, plat, c, call.ReasonNoAssistant)
			}
			return err
		}
		c.Variables = callVariables(v, nil, l)
		return s.answerWithAssistant(ctx, plat, c, v)
	case line.ModeCustomerDecides:
		return s.customerDecides(ctx, plat, c, l)
	default:
		return s.decline(ctx, plat, c, call.ReasonLineDisabled)
	}
}

// resumeInbound acts on a redelivered inbound notification whose call is recorded: a
// delivery that failed half way (a crash after the call was saved) left its session
// ringing, and the redelivery carries it on. An assistant call is bridged (its room
// created if it is missing; answering it dispatches the assistant, once); a
// customer_decides call acts on
// the decision once it is recorded, or declines once the line's decision timeout is over
// without one, and otherwise leaves the call to the delivery still waiting for it.
//
// Answer refusing the call (platform.ErrUnknownCall: another delivery bridged it, or the
// caller left) ends nothing here: the caller's hang-up has its own notification, and
// Sweep fails a session that rings too long.
func (s *Service) resumeInbound(ctx context.Context, plat platform.Platform, c call.Call) error {
	if c.SessionID == "" || c.Over() {
		return nil
	}
	ses, err := s.records.GetSession(ctx, c.SessionID)
	if err != nil {
		return fmt.Errorf("get session %s: %w", c.SessionID, err)
	}
	if ses.Status != StatusRinging {
		return nil
	}
	switch {
	case c.HandledBy == call.HandledByAssistant:
		if err := s.createRoom(ctx, rtc.RoomSpec{Name: ses.ID}); err != nil {
			return fmt.Errorf("create room %s: %w", ses.ID, err)
		}
		return s.resumeBridge(ctx, plat, ses, c)
	case ses.DecideBy != nil:
		// The sweeper carries the decision out; a redelivery only does it sooner. A
		// platform that answers only inside a notification notifies again while the call
		// rings (NotificationAnswerer): it is carried out here, or held once more.
		if decisionDue(ses, s.now()) {
			if err := s.decideNow(ctx, ses.ID, false, true); err != nil {
				return err
			}
		}
		s.hold(ctx, plat, c.PlatformCallID)
		return nil
	case c.Decision == decision.Accept:
		return s.resumeBridge(ctx, plat, ses, c)
	case c.Decision == decision.Decline:
		return s.declineSession(ctx, ses.ID, call.ReasonDeclined, call.EndedByCustomer)
	}
	l, err := s.lines.GetLine(ctx, c.LineID)
	if err != nil {
		return fmt.Errorf("get line %s: %w", c.LineID, err)
	}
	if c.Decision == decision.Assistant {
		// Decided, but not handed over yet: the call keeps the answer's values.
		return s.handToLineAssistant(ctx, plat, ses.ID, l, c.Variables)
	}
	wait := time.Duration(l.DecisionTimeoutSeconds) * time.Second
	if wait <= 0 {
		wait = line.DefaultDecisionTimeout * time.Second
	}
	if s.now().Before(c.StartedAt.Add(wait + time.Second)) {
		return nil // the first delivery may still be waiting for the customer
	}
	return s.declineSession(ctx, ses.ID, call.ReasonDecisionTimeout, call.EndedBySystem)
}

// resumeBridge is bridge for a resumed delivery: a call the platform no longer has
// ringing is left as it is.
func (s *Service) resumeBridge(ctx context.Context, plat platform.Platform, ses Session, c call.Call) error {
	room, err := s.partyRoom(ses.ID, c.From)
	if err != nil {
		return err
	}
	if err := plat.Answer(ctx, c.PlatformCallID, c.ID, room); err != nil {
		return ignoreGone(err)
	}
	_, _, _, err = s.answered(ctx, ses.ID, nil)
	return err
}

// decline records an inbound call that is not taken and rejects it on the platform.
func (s *Service) decline(ctx context.Context, plat platform.Platform, c call.Call, reason string) error {
	evt, _ := c.End(call.StatusDeclined, reason, call.EndedBySystem, s.now(), newEventID)
	if err := s.records.SaveCall(ctx, c, []callevent.Event{evt}); err != nil {
		if errors.Is(err, apierr.ErrConflict) {
			return nil // a concurrent delivery of the same notification recorded it
		}
		return fmt.Errorf("record declined call: %w", err)
	}
	s.notify([]callevent.Event{evt})
	return ignoreGone(platform.RejectCall(ctx, plat, c.PlatformCallID, c.ID, reason))
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
