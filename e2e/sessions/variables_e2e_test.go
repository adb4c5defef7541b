package sessions_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/call"
)

// variableGreeting names the company with a placeholder; every word of each rendering
// is in the recogniser's dictionary.
const variableGreeting = "Hello, thank you for calling {{company|the office}}. How can I help you today?"

// renderings are what the recogniser chooses among: the greeting with each value the
// test gives, with its default, and sentences that are none of them.
var renderings = []string{
	"Hello, thank you for calling Acme. How can I help you today?",
	"Hello, thank you for calling the bank. How can I help you today?",
	"Hello, thank you for calling the office. How can I help you today?",
	"Welcome to the store. Please hold.",
	"Sorry, wrong number, call back later.",
}

// TestVariablesSpokenEndToEnd: a persona worker speaks a greeting rendered with the
// call's variables, heard by the caller through the recogniser. The line's default
// names the company on an inbound call; a session's own value wins over it on an
// outbound one. Each record keeps the values used and the rendered greeting turn.
func TestVariablesSpokenEndToEnd(t *testing.T) {
	st := tenant(t)
	st.StartWorker(t, nil, worker.Options{})
	a := publishAssistant(t, st, "Variable desk", variableGreeting, "ava_iris")
	patchLine(t, st, st.Handles[0], map[string]any{"variables": map[string]string{"company": "Acme"}})

	t.Run("inbound, the line's default", func(t *testing.T) {
		placed := ring(t, st, "audio", platformsim.PartyOptions{})
		want := renderings[0]
		if got := heardAmong(t, st, placed.ID, renderings); got != sphinxWords(want) {
			t.Errorf("the caller heard %q, want %q", got, sphinxWords(want))
		}
		hangupSim(t, st, placed.ID)
		checkSpoken(t, st, placed.CallID, want, map[string]string{"company": "Acme"})
	})

	t.Run("outbound, the session's value over the line's", func(t *testing.T) {
		s := createSession(t, st, map[string]any{"platform_handle": "+15557654321", "mode": "assistant",
			"assistant_id": a.ID, "media": "audio", "variables": map[string]string{"company": "the bank"}})
		var party platformsim.Call
		harness.WaitFor(t, 20*time.Second, "the dialled party in the room", func() bool {
			var ok bool
			party, ok = st.Sim.ByCallID(s.CallID)
			return ok && party.InRoom
		})
		want := renderings[1]
		if got := heardAmong(t, st, party.ID, renderings); got != sphinxWords(want) {
			t.Errorf("the dialled party heard %q, want %q", got, sphinxWords(want))
		}
		harness.Must(t, st.Do(t, http.MethodDelete, "/v1/sessions/"+s.ID, nil, nil), http.StatusOK, "DELETE")
		checkSpoken(t, st, s.CallID, want, map[string]string{"company": "the bank"})
	})
}

// checkSpoken checks an ended assistant call's record: the variables used, and the
// greeting turn as rendered (no braces).
func checkSpoken(t *testing.T, st *harness.Stack, callID, greeting string, vars map[string]string) {
	t.Helper()
	c := waitRecord(t, st, callID, "the completed record", func(c recordObj) bool { return c.EndedAt != nil && len(c.Turns) > 0 })
	if c.Turns[0].Text != greeting || strings.Contains(c.Turns[0].Text, "{") {
		t.Errorf("greeting turn = %q, want %q", c.Turns[0].Text, greeting)
	}
	var full struct {
		Variables map[string]string `json:"variables"`
	}
	harness.Must(t, st.Do(t, http.MethodGet, "/v1/calls/"+callID, nil, &full), http.StatusOK, "GET call")
	if !maps.Equal(full.Variables, vars) {
		t.Errorf("call %s variables = %v, want %v", callID, full.Variables, vars)
	}
}

// TestAssistantAnswerAfterArchive: an assistant answer is accepted for a call whose line
// had an assistant when it rang, but that assistant was unassigned and archived since:
// the call is declined with no_assistant, not bridged.
func TestAssistantAnswerAfterArchive(t *testing.T) {
	st := tenant(t)
	a := publishAssistant(t, st, "Gone desk", variableGreeting, "ava_iris")
	patchLine(t, st, st.Handles[0], map[string]any{"inbound_mode": "customer_decides", "decision_timeout_seconds": 15})
	recv := incomingReceiver(t, st)
	recv.AnswerIncoming(func(callevent.CallIncoming) string { return "" }) // the answer comes through the API

	sc := placeCall(t, st, st.Handles[0], "audio")
	var in callevent.CallIncoming
	recv.WaitFor(t, callevent.TypeCallIncoming, 10*time.Second, func(d json.RawMessage) bool {
		json.Unmarshal(d, &in)
		return in.To == st.Handles[0]
	})
	patchLine(t, st, st.Handles[0], map[string]any{"assistant_id": nil})
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants/"+a.ID+"/archive", nil, nil), http.StatusOK, "archive")
	var got map[string]any
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/calls/"+in.CallID+"/answer",
		map[string]any{"action": "assistant", "variables": map[string]string{"company": "Acme"}}, &got), http.StatusOK, "assistant answer")
	if got["decision"] != "assistant" {
		t.Errorf("answer = %v, want decision assistant", got)
	}
	c := waitRecord(t, st, in.CallID, "the call's end", func(c recordObj) bool { return c.EndedAt != nil })
	if c.Status != call.StatusFailed || str(c.EndReason) != call.ReasonNoAssistant || c.HandledBy == call.HandledByAssistant || c.AnsweredAt != nil {
		t.Errorf("call = %+v, want failed with no_assistant, never answered or handled by an assistant", c)
	}
	if got := waitSimCall(t, st, sc.ID, platformsim.StatusEnded); got.AnsweredAt != nil {
		t.Errorf("sim call = %+v, want it ended without being answered", got)
	}
}
