package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/bridgeline/bridgeline/events/decision"
)

// TableCallDecisions holds customer_decides decisions.
const TableCallDecisions = "call_decisions"

// CallAnswers serves POST /v1/calls/{id}/answer, the API way to decide a ringing call on
// a customer_decides line. Plug its Routes into API.Extra.
type CallAnswers struct {
	Decisions decision.Store
	// Call presents the call object answered to a decline. Nil answers a short call
	// object with the decision (until the calls package provides the full one).
	Call func(ctx context.Context, accountID, callID string) (any, error)
	Now  func() time.Time
}

// Routes is the answer route.
func (c *CallAnswers) Routes() []Route {
	return []Route{{Function: "calls-answer", Method: http.MethodPost, Pattern: "/v1/calls/{id}/answer",
		Tables: []string{TableAccounts, TableCallDecisions, "calls", TableIdempotency}, Handler: c.answer}}
}

// SessionJSON is the session payload answered to an accept.
type SessionJSON struct {
	SessionID        string `json:"session_id"`
	CallID           string `json:"call_id"`
	RTCURL           string `json:"rtc_url"`
	ParticipantToken string `json:"participant_token"`
	ExpiresAt        Time   `json:"expires_at"`
}

type decidedCallJSON struct {
	ID             string `json:"id"`
	Object         string `json:"object"`
	Decision       string `json:"decision"`
	DecisionSource string `json:"decision_source"`
}

func (c *CallAnswers) answer(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body struct {
		Action string `json:"action"`
	}
	if err := Decode(r, &body, false); err != nil {
		return 0, nil, err
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	acct := AccountFrom(r.Context()).ID
	rec, err := decision.Answer(r.Context(), c.Decisions, acct, r.PathValue("id"), body.Action, now().UTC())
	if err != nil {
		return 0, nil, err
	}
	if rec.Decision == decision.Accept {
		s := rec.Session
		return http.StatusCreated, SessionJSON{SessionID: s.SessionID, CallID: s.CallID, RTCURL: s.RTCURL,
			ParticipantToken: s.ParticipantToken, ExpiresAt: Time(s.ExpiresAt)}, nil
	}
	if c.Call != nil {
		call, err := c.Call(r.Context(), acct, rec.CallID)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, call, nil
	}
	return http.StatusOK, decidedCallJSON{ID: rec.CallID, Object: "call", Decision: rec.Decision, DecisionSource: rec.Source}, nil
}
