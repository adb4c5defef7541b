package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/decision"
)

// CallAnswers serves POST /v1/calls/{id}/answer, the API way to decide a ringing call on
// a customer_decides line..
type CallAnswers struct {
	Decisions decision.Store
	// Calls reads the call record answered to a decline. Nil: Decisions, when the same
	// store keeps call records (both stores do).
	Calls CallReader
	// CheckVariables checks an assistant answer's variables against the call's line and
	// assistant (session.Service.CheckAnswerVariables); nil checks only the values.
	CheckVariables decision.VariablesCheck
	// Decided is told the call whose decision the API recorded (or replayed), so that the
	// decision is carried out: session.Service.DecisionRecorded marks the ringing session
	// due for the sweeper. Nil: nothing is told (the ringing flow reads the decision at
	// answer_by).
	Decided func(ctx context.Context, callID string) error
	Now     func() time.Time
}

// CallReader reads call records: call.Store.
type CallReader interface {
	GetCall(ctx context.Context, id string) (call.Call, error)
}

// Routes is the answer route.
func (c *CallAnswers) Routes() []Route {
	return []Route{{Function: "calls-answer", Method: http.MethodPost, Pattern: "/v1/calls/{id}/answer", Keys: LiveForRealResource(),
		Handler: c.answer, ReplayOmits: []string{"participant_token"}, ReplayRefill: c.acceptedToken}}
}

// AcceptedSessionJSON is the session payload answered to an accept.
type AcceptedSessionJSON struct {
	SessionID        string `json:"session_id"`
	CallID           string `json:"call_id"`
	RTCURL           string `json:"rtc_url"`
	ParticipantToken string `json:"participant_token"`
	// ParticipantIdentity is the token's own LiveKit identity; empty (left out) only in
	// answers about calls that rang before identities were per token.
	ParticipantIdentity string `json:"participant_identity,omitempty"`
	ExpiresAt           Time   `json:"expires_at"`
}

type decidedCallJSON struct {
	ID             string `json:"id"`
	Object         string `json:"object"`
	Decision       string `json:"decision"`
	DecisionSource string `json:"decision_source"`
}

func (c *CallAnswers) answer(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body callevent.Answer
	if err := Decode(r, &body, false); err != nil {
		return 0, nil, err
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	acct := AccountFrom(r.Context()).ID
	if err := c.liveKeyForCall(r, acct); err != nil {
		return 0, nil, err
	}
	rec, err := decision.Answer(r.Context(), c.Decisions, acct, r.PathValue("id"), body, now().UTC(), c.CheckVariables)
	if apierr.Is(err, apierr.CodeResourceNotFound) {
		return 0, nil, c.notRinging(r.Context(), acct, r.PathValue("id"), err)
	}
	if err != nil {
		return 0, nil, err
	}
	if c.Decided != nil {
		// A failure answers 500 with the decision recorded: a retry replays the answer
		// and tells again (and the sweeper would carry it out at answer_by regardless).
		if err := c.Decided(r.Context(), rec.CallID); err != nil {
			return 0, nil, fmt.Errorf("carry out the decision of %s: %w", rec.CallID, err)
		}
	}
	if rec.Decision == decision.Accept {
		s := rec.Session
		return http.StatusCreated, AcceptedSessionJSON{SessionID: s.SessionID, CallID: s.CallID, RTCURL: s.RTCURL,
			ParticipantToken: s.ParticipantToken, ParticipantIdentity: s.ParticipantIdentity, ExpiresAt: Time(s.ExpiresAt)}, nil
	}
	return c.declined(r.Context(), acct, rec)
}

// liveKeyForCall asks the key rule about the path's call: answering a call on a real
// platform (accepting it into a room, handing it to an assistant, declining it) takes a
// live key. A call the account does not have is left to the answer's own 404.
func (c *CallAnswers) liveKeyForCall(r *http.Request, accountID string) error {
	return requireLiveKey(r, func() (liveResource, error) {
		calls := c.calls()
		if calls == nil {
			return liveResource{true, "the call's platform cannot be read here"}, nil
		}
		cr, err := calls.GetCall(r.Context(), r.PathValue("id"))
		if errors.Is(err, apierr.ErrNotFound) || (err == nil && cr.AccountID != accountID) {
			return notLive, nil
		}
		if err != nil {
			return notLive, fmt.Errorf("get call %s: %w", r.PathValue("id"), err)
		}
		return onPlatform("call "+cr.ID, cr.Platform), nil
	})
}

// acceptedToken completes the idempotent replay of an accept: the session's participant
// token (the one call.incoming carried) comes from the call's decision record, not from
// the idempotency record.
func (c *CallAnswers) acceptedToken(r *http.Request, body map[string]json.RawMessage) error {
	var first struct {
		CallID string `json:"call_id"`
	}
	if err := json.Unmarshal(body["call_id"], &first.CallID); err != nil || first.CallID == "" {
		return nil // not an accept's answer
	}
	found, err := c.Decisions.GetDecision(r.Context(), first.CallID)
	rec, err := apierr.Owned(found, found.AccountID, err, AccountFrom(r.Context()).ID, apierr.NotFound("call", first.CallID))
	if err != nil {
		return err
	}
	body["participant_token"], err = json.Marshal(rec.Session.ParticipantToken)
	return err
}

// notRinging explains a call with no decision to make: a call of the account that GET
// finds (outbound, or inbound on a line that did not ask the customer) is 409
// call_not_answerable naming its direction and status; anything else stays notFound.
func (c *CallAnswers) notRinging(ctx context.Context, accountID, callID string, notFound error) error {
	calls := c.calls()
	if calls == nil {
		return notFound
	}
	cr, err := calls.GetCall(ctx, callID)
	if errors.Is(err, apierr.ErrNotFound) || (err == nil && cr.AccountID != accountID) {
		return notFound
	}
	if err != nil {
		return fmt.Errorf("get call %s: %w", callID, err)
	}
	why := "only a ringing inbound call on a customer_decides line can be answered"
	if cr.Direction == call.Outbound {
		why = "an outbound call is never answered through the API"
	}
	return apierr.New(apierr.CodeCallNotAnswerable, fmt.Sprintf("call %s is %s and its status is %s: %s",
		callID, cr.Direction, cr.Status, why))
}

func (c *CallAnswers) calls() CallReader {
	if c.Calls != nil {
		return c.Calls
	}
	calls, _ := c.Decisions.(CallReader)
	return calls
}

// declined answers a decline with the call object. The call may not show the decision
// yet (the ringing flow records it on the call once it sees the answer), so the
// decision record's is laid over it.
func (c *CallAnswers) declined(ctx context.Context, accountID string, rec decision.Record) (int, any, error) {
	calls := c.calls()
	short := decidedCallJSON{ID: rec.CallID, Object: "call", Decision: rec.Decision, DecisionSource: rec.Source}
	if calls == nil {
		return http.StatusOK, short, nil
	}
	cr, err := calls.GetCall(ctx, rec.CallID)
	if errors.Is(err, apierr.ErrNotFound) {
		// The call record is written before call.incoming goes out; a decision without
		// one is a store out of step, and the decision is still the answer.
		return http.StatusOK, short, nil
	}
	if err != nil && !errors.Is(err, apierr.ErrNotFound) {
		return 0, nil, fmt.Errorf("get call %s: %w", rec.CallID, err)
	}
	if cr, err = apierr.Owned(cr, cr.AccountID, err, accountID, apierr.NotFound("call", rec.CallID)); err != nil {
		return 0, nil, err
	}
	rec.OnCall(&cr)
	return http.StatusOK, PresentCall(cr), nil
}
