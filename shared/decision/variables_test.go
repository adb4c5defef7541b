package decision_test

import (
	"context"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/decision"
)

func answerBody(body string) func(http.ResponseWriter, callevent.CallIncoming) {
	return func(w http.ResponseWriter, _ callevent.CallIncoming) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(body))
	}
}

// TestAssistantAnswerInWebhookResponse: {"action": "assistant", "variables": {...}} in
// the response body decides the call with its variables; an assistant answer the call
// cannot take (no assistant on the line, variables out of bounds) is logged on the
// attempt and is no answer: the call stays undecided.
func TestAssistantAnswerInWebhookResponse(t *testing.T) {
	tests := []struct {
		name         string
		assistantID  string
		body         string
		wantDecision string
		wantVars     map[string]string
		wantLogged   string // part of the attempt's error
	}{
		{"with variables", "asst_1", `{"action":"assistant","variables":{"caller_name":"Ada"}}`,
			decision.Assistant, map[string]string{"caller_name": "Ada"}, ""},
		{"without variables", "asst_1", `{"action":"assistant"}`, decision.Assistant, nil, ""},
		{"no assistant on the line", "", `{"action":"assistant","variables":{"caller_name":"Ada"}}`,
			"", nil, "needs an assistant assigned"},
		{"value too long", "asst_1", `{"action":"assistant","variables":{"caller_name":"` + strings.Repeat("x", 501) + `"}}`,
			"", nil, "at most 500 characters"},
		{"variables with accept", "asst_1", `{"action":"accept","variables":{"caller_name":"Ada"}}`,
			"", nil, "only for action assistant"},
		{"values the render check refuses", "asst_1", `{"action":"assistant","variables":{"caller_name":"long"}}`,
			"", nil, "past its limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.hook(answerBody(tc.body))
			in := e.incoming(time.Second)
			in.AssistantID = tc.assistantID
			e.asker.CheckVariables = func(_ context.Context, r decision.Record, values map[string]string) error {
				if r.CallID != in.CallID || r.LineID != in.LineID || r.AssistantID != tc.assistantID {
					t.Errorf("render check of %+v, want the ringing call's record", r)
				}
				if values["caller_name"] == "long" {
					return apierr.Invalid("variables", "the variables render the greeting to 2255 characters, past its limit of 2000")
				}
				return nil
			}
			r, err := e.asker.Post(context.Background(), in, 0)
			if err != nil {
				t.Fatal(err)
			}
			if r.Decision != tc.wantDecision || !maps.Equal(r.Variables, tc.wantVars) {
				t.Errorf("decision = %s with %v, want %s with %v", r.Decision, r.Variables, tc.wantDecision, tc.wantVars)
			}
			as, _ := e.store.ListDeliveryAttempts(context.Background(), r.EventID)
			if len(as) != 1 || !strings.Contains(as[0].Error, tc.wantLogged) || (tc.wantLogged == "") != (as[0].Error == "") {
				t.Errorf("attempts = %+v, want one whose error says %q", as, tc.wantLogged)
			}
		})
	}
}

// TestAssistantAnswerThroughTheAPI: POST /v1/calls/{id}/answer's rules for action
// assistant, and the variables it records.
func TestAssistantAnswerThroughTheAPI(t *testing.T) {
	e := newEnv(t)
	ring := func(assistantID string) string {
		in := e.incoming(time.Minute)
		r := decision.Record{CallID: in.CallID, AccountID: e.account, LineID: in.LineID, EventID: "evt_1",
			AnswerBy: time.Now().Add(time.Minute), Session: in.Session, CreatedAt: time.Now(), AssistantID: assistantID}
		if err := e.store.CreateDecision(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		return in.CallID
	}
	answer := func(callID string, a callevent.Answer) (decision.Record, error) {
		return decision.Answer(context.Background(), e.store, e.account, callID, a, time.Now(), nil)
	}
	none := ring("")
	if _, err := answer(none, callevent.Answer{Action: "assistant"}); !isParam(err, "action") {
		t.Errorf("assistant answer without an assistant: %v, want parameter_invalid on action", err)
	}
	withAsst := ring("asst_1")
	if _, err := answer(withAsst, callevent.Answer{Action: "decline", Variables: map[string]string{"a": "b"}}); !isParam(err, "variables") {
		t.Errorf("decline with variables: %v, want parameter_invalid on variables", err)
	}
	if _, err := answer(withAsst, callevent.Answer{Action: "assistant", Variables: map[string]string{"a b": "x"}}); !isParam(err, "variables") {
		t.Errorf("bad variable name: %v, want parameter_invalid on variables", err)
	}
	vars := map[string]string{"caller_name": "Ada"}
	r, err := answer(withAsst, callevent.Answer{Action: "assistant", Variables: vars})
	if err != nil || r.Decision != decision.Assistant || r.Source != decision.SourceAPI || !maps.Equal(r.Variables, vars) {
		t.Fatalf("assistant answer = %+v, %v", r, err)
	}
	if _, err := answer(withAsst, callevent.Answer{Action: "assistant", Variables: vars}); err != nil {
		t.Errorf("repeated assistant answer: %v, want it answered again", err)
	}
	if _, err := answer(withAsst, callevent.Answer{Action: "accept"}); !apierr.Is(err, apierr.CodeCallAlreadyAnswered) {
		t.Errorf("accept after assistant: %v, want call_already_answered", err)
	}
}

func isParam(err error, param string) bool {
	e, ok := apierr.As(err)
	return ok && e.Code == apierr.CodeParameterInvalid && e.Param == param
}
