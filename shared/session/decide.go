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
	timeout := time.Duration(l.DecisionTimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = line.DefaultDecisionTimeout * time.Second
	}
	answerBy := s.now().Add(timeout).UTC().Truncate(time.Millisecond)
	if s.set.Decider != nil {
		// Nothing waits for the decision: the session keeps the deadline from its first
		// write, so the sweeper applies the line's default at answer_by, or carries out an
		// API answer once POST /v1/calls/{id}/answer marks the session due
		// (DecisionRecorded), whatever happens to this request. (A platform that answers
		// only inside a notification is asked to notify again, and the decision is
		// carried out in one of those: resumeInbound.)
		ses.DecideBy = &answerBy
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
	if s.set.Decider == nil {
		return s.carryOut(ctx, plat, ses.ID, l, decision.Record{Decision: decision.Timeout})
	}
	in := decision.Incoming{AccountID: c.AccountID, CallID: c.ID, LineID: l.ID,
		From: c.From, To: c.To, Media: c.Media,
		Session: callevent.Session{SessionID: ses.ID, CallID: c.ID, RTCURL: s.rooms.PublicURL(),
			ParticipantToken: tok.JWT, ParticipantIdentity: tok.Identity, ExpiresAt: tok.ExpiresAt},
		Metadata: c.Metadata, LineMetadata: l.Metadata, AssistantID: l.AssistantID}
	in.AnswerBy = answerBy
	rec, err := s.set.Decider.Post(ctx, in, s.postWait(ctx))
	if err != nil {
		// The sweeper takes the call at answer_by (a missing record counts as no answer).
		s.log().Error("ask customer", "call_id", c.ID, "err", err)
		s.hold(ctx, plat, c.PlatformCallID)
		return nil
	}
	if rec.Decision == "" {
		// The customer answers later, through the API; the sweeper (or the platform's
		// next notification) carries it out.
		s.hold(ctx, plat, c.PlatformCallID)
		return nil
	}
	// A response body answered (or an API answer came meanwhile): carry it out now.
	return s.decideNow(ctx, ses.ID, true, true)
}

// postWait is how long call.incoming's POSTs are waited for: IncomingWait (zero: until
// answer_by), cut so that DecisionReserve is left before the request's deadline.
func (s *Service) postWait(ctx context.Context) time.Duration {
	if s.set.IncomingWait <= 0 {
		if dl, ok := ctx.Deadline(); ok {
			return s.decisionWait(ctx, dl.Sub(s.now()))
		}
		return 0
	}
	return s.decisionWait(ctx, s.set.IncomingWait)
}

// hold has a platform that answers only inside a notification notify again about a call
// still ringing undecided (platform.NotificationAnswerer).
func (s *Service) hold(ctx context.Context, plat platform.Platform, platformCallID string) {
	if h, ok := plat.(platform.NotificationAnswerer); ok {
		h.Hold(ctx, platformCallID)
	}
}

// decisionLease is how long a process that claimed a ringing session's decision has to
// carry it out before the sweeper takes it up again (it crashed, or its platform call
// failed half way): past a bridge's or a hand-over's worst case.
const decisionLease = 30 * time.Second

// decisionDue: a ringing session whose decision the sweeper is to carry out now.
func decisionDue(ses Session, now time.Time) bool {
	return ses.Status == StatusRinging && ses.DecideBy != nil && !now.Before(*ses.DecideBy)
}

// DecisionRecorded marks the ringing session of callID due for the sweeper, which then
// carries out the decision just recorded (POST /v1/calls/{id}/answer). A call with no
// session, or whose session is no longer waiting for its decision, is left alone. Should
// this write fail after the decision was recorded, the sweeper still carries it out at
// the call's answer_by.
func (s *Service) DecisionRecorded(ctx context.Context, callID string) error {
	c, err := s.records.GetCall(ctx, callID)
	if errors.Is(err, apierr.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get call %s: %w", callID, err)
	}
	if c.SessionID == "" {
		return nil
	}
	now := s.now()
	_, _, err = s.mutate(ctx, c.SessionID, func(ses *Session, _ *call.Call) ([]callevent.Event, bool, error) {
		if ses.Status != StatusRinging || ses.DecideBy == nil || !now.Before(*ses.DecideBy) {
			return nil, false, nil
		}
		ses.DecideBy = &now
		return nil, true, nil
	})
	if errors.Is(err, apierr.ErrNotFound) {
		return nil
	}
	return err
}

// decideNow carries out a ringing session's decision once, across processes: it claims
// the session (DecideBy moves decisionLease ahead, the decision laid on the call in the
// same conditional write), and only the claimant acts. No decision recorded by the call's
// answer_by is recorded as Timeout first (an answer that wins that race is carried out
// instead). A session not due yet, or no longer ringing, is left as it is; now (the
// process that rang the call, holding a decision) also claims one whose deadline nobody
// has moved. A platform that answers only inside a notification
// (platform.NotificationAnswerer) is acted on only in one (inNotification). A crash after
// the claim leaves the session due again when the lease ends; the sweeper then carries
// the decision out the way a redelivered notification would (resumeInbound's calls).
func (s *Service) decideNow(ctx context.Context, sessionID string, now, inNotification bool) error {
	ses, err := s.records.GetSession(ctx, sessionID)
	if err != nil {
		return fmt.Errorf("get session %s: %w", sessionID, err)
	}
	if ses.Status != StatusRinging || ses.DecideBy == nil {
		return nil
	}
	rang, err := s.records.GetCall(ctx, ses.CallID)
	if err != nil {
		return fmt.Errorf("get call %s: %w", ses.CallID, err)
	}
	plat, ok := s.set.Platforms.Lookup(rang.Platform)
	if !ok {
		return fmt.Errorf("no adapter for platform %q", rang.Platform)
	}
	if !inNotification && platform.AnswersInNotification(plat) {
		return nil // its next notification carries the decision out
	}
	rec, err := s.set.Decider.Get(ctx, ses.CallID)
	asked := err == nil
	switch {
	case errors.Is(err, apierr.ErrNotFound):
		// The process that rang the call stopped before it asked: nobody was asked.
		rec = decision.Record{CallID: ses.CallID, AnswerBy: *ses.DecideBy}
	case err != nil:
		return fmt.Errorf("read decision of %s: %w", ses.CallID, err)
	}
	force, at := now, s.now()
	if rec.Decision == "" {
		if at.Before(rec.AnswerBy) {
			// Marked due without an answer to carry out (or early): back to answer_by.
			_, _, err := s.mutate(ctx, sessionID, func(ses *Session, _ *call.Call) ([]callevent.Event, bool, error) {
				if ses.Status != StatusRinging || ses.DecideBy == nil || ses.DecideBy.Equal(rec.AnswerBy) {
					return nil, false, nil
				}
				ses.DecideBy = &rec.AnswerBy
				return nil, true, nil
			})
			return err
		}
		if !asked {
			rec.Decision = decision.Timeout
		} else if rec, err = s.set.Decider.Expire(ctx, ses.CallID); err != nil {
			return err
		}
	}
	claimed, retry := false, false
	ses, c, err := s.mutate(ctx, sessionID, func(ses *Session, c *call.Call) ([]callevent.Event, bool, error) {
		claimed = false
		untouched := ses.Status == StatusRinging && ses.DecideBy != nil && ses.DecideBy.Equal(rec.AnswerBy)
		if !decisionDue(*ses, at) && !(force && untouched) {
			return nil, false, nil // not due, or another process holds the claim
		}
		retry = c.Decision != ""
		rec.OnCall(c)
		lease := at.Add(decisionLease)
		ses.DecideBy = &lease
		claimed = true
		return nil, true, nil
	})
	if err != nil || !claimed {
		return err
	}
	l, err := s.lines.GetLine(ctx, c.LineID)
	if err != nil {
		return fmt.Errorf("get line %s: %w", c.LineID, err)
	}
	if retry && rec.Decision == decision.Accept {
		// A claimant before this one may have answered the platform call already.
		return s.resumeBridge(ctx, plat, ses, c)
	}
	return s.carryOut(ctx, plat, ses.ID, l, rec)
}

// carryOut acts on a ringing customer_decides call's decision: it is laid on the call,
// then the call is bridged, declined, handed to the assistant, or given the line's
// no-answer default.
func (s *Service) carryOut(ctx context.Context, plat platform.Platform, sessionID string, l line.Line, rec decision.Record) error {
	ses, _, err := s.mutate(ctx, sessionID, func(_ *Session, c *call.Call) ([]callevent.Event, bool, error) {
		return nil, rec.OnCall(c), nil
	})
	if err != nil {
		return err
	}
	switch rec.Decision {
	case decision.Accept:
		c, err := s.records.GetCall(ctx, ses.CallID)
		if err != nil {
			return fmt.Errorf("get call %s: %w", ses.CallID, err)
		}
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

// decisionWait is d, cut so that DecisionReserve is left before the request's deadline
// (at least a second): what a request may wait for call.incoming's POSTs and still carry
// a response body's decision out before it must answer (a Lambda behind API Gateway).
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
