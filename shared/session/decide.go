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
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

// customerDecides rings the customer: a room and a session payload are made, call.incoming
// is posted, and the first answer (or the deadline) decides.
func (s *Service) customerDecides(ctx context.Context, plat platform.Platform, c call.Call, l line.Line) error {
	ses := s.inboundSession(c)
	if err := s.createRoom(ctx, rtc.RoomSpec{Name: ses.ID}); err != nil {
		s.log().Error("create room", "session_id", ses.ID, "err", err)
		return s.decline(ctx, plat, c, call.ReasonPlatformError)
	}
	c.SessionID, c.HandledBy = ses.ID, call.HandledByCustomer
	// The token is for the customer who accepts and talks with the caller: it publishes.
	// (Should the call go to the assistant after the decision timeout instead, tokens
	// minted from then on are watch-only; this one was already delivered.)
	tok, err := s.customerToken(ses.ID, ModeHuman, TokenRequest{})
	if err != nil {
		return err
	}
	if err := s.saveNew(ctx, &ses, c); err != nil {
		s.deleteRoom(ses.ID)
		if errors.Is(err, apierr.ErrConflict) {
			return nil
		}
		if isOverLimit(err) {
			return s.declineOverLimit(ctx, plat, c)
		}
		return fmt.Errorf("record inbound call: %w", err)
	}
	rec := decision.Record{Decision: decision.Timeout}
	if s.set.Decider != nil {
		timeout := time.Duration(l.DecisionTimeoutSeconds) * time.Second
		if timeout <= 0 {
			timeout = line.DefaultDecisionTimeout * time.Second
		}
		timeout = s.decisionWait(ctx, timeout)
		rec, err = s.set.Decider.Ask(ctx, decision.Incoming{AccountID: c.AccountID, CallID: c.ID, LineID: l.ID,
			From: c.From, To: c.To, Media: c.Media, Timeout: timeout,
			Session: callevent.Session{SessionID: ses.ID, CallID: c.ID, RTCURL: s.rooms.PublicURL(),
				ParticipantToken: tok.JWT, ParticipantIdentity: tok.Identity, ExpiresAt: tok.ExpiresAt},
			Metadata: c.Metadata, LineMetadata: l.Metadata, AssistantID: l.AssistantID})
		if err != nil {
			s.log().Error("ask customer", "call_id", c.ID, "err", err)
			rec = decision.Record{Decision: decision.Timeout}
		}
	}
	if _, _, err := s.mutate(ctx, ses.ID, func(_ *Session, c *call.Call) ([]callevent.Event, bool, error) {
		return nil, rec.OnCall(c), nil
	}); err != nil {
		return err
	}
	switch rec.Decision {
	case decision.Accept:
		return s.bridge(ctx, plat, ses, c, nil)
	case decision.Decline:
		return s.declineSession(ctx, ses.ID, call.ReasonDeclined, call.EndedByCustomer)
	case decision.Assistant:
		return s.handToLineAssistant(ctx, plat, ses.ID, l, rec.Variables)
	}
	if l.OnDecisionTimeout == line.TimeoutAssistant && l.AssistantID != "" {
		if v, err := s.lineVersion(ctx, l); err == nil {
			return s.handToAssistant(ctx, plat, ses.ID, v, callVariables(v, nil, l))
		}
	}
	return s.declineSession(ctx, ses.ID, call.ReasonDecisionTimeout, call.EndedBySystem)
}

// decisionWait is how long to wait for the customer's decision: the line's timeout, cut
// so that DecisionReserve is left before the request's deadline (at least a second).
func (s *Service) decisionWait(ctx context.Context, timeout time.Duration) time.Duration {
	dl, ok := ctx.Deadline()
	if !ok || s.set.DecisionReserve <= 0 {
		return timeout
	}
	if left := dl.Sub(s.now()) - s.set.DecisionReserve; left < timeout {
		return max(left, time.Second)
	}
	return timeout
}
