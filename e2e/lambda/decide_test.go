package lambda_test

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/decision"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/session"
)

// decideLaterScenario (security review finding 7): a customer_decides call whose customer
// takes longer than a platform-sim invocation could wait. The receiver only acknowledges
// call.incoming; platform-sim returns while the call still rings (no execution is held
// for the decision); the customer answers through calls-answer 14 s later, past the
// 13 s that platform-sim's old in-invocation wait allowed (29 s timeout less the 16 s
// DecisionReserve), within the line's 25 s; the session-sweeper function then bridges
// the call: active, accepted through the API, the gateway's call answered in the room.
func (s *stack) decideLaterScenario(gw *gateway, lineID string, auth map[string]any) {
	t := s.t
	post := func(fn, pattern, path, body string) request {
		return request{fn: fn, method: http.MethodPost, pattern: pattern, path: path, body: body, auth: auth,
			headers: map[string]string{"Content-Type": "application/json", "Idempotency-Key": ident.New("idem")}}
	}
	ln := s.expect(request{fn: "lines-update", method: http.MethodPatch, pattern: "/v1/lines/{id}", path: "/v1/lines/" + lineID,
		body: `{"inbound_mode":"customer_decides","decision_timeout_seconds":25}`, auth: auth,
		headers: map[string]string{"Content-Type": "application/json"}}, http.StatusOK)
	handle, _ := ln["handle"].(string)
	recv := eventtest.NewReceiver(t)
	recv.AnswerIncoming(func(callevent.CallIncoming) string { return "" }) // acknowledged; the answer comes through the API
	ep := s.expect(post("webhook-endpoints-create", "/v1/webhook_endpoints", "/v1/webhook_endpoints",
		`{"url":"`+recv.URL+`","events":["call.incoming"]}`), http.StatusCreated)
	recv.SetSecret(ep["secret"].(string))

	placed := gw.platform.place(t, "+15550143434", handle)
	got := recv.WaitFor(t, callevent.TypeCallIncoming, 30*time.Second, nil)
	asked := got.At
	var in callevent.CallIncoming
	if err := json.Unmarshal(got.Event.Data, &in); err != nil {
		t.Fatal(err)
	}

	// platform-sim returns once the POST is acknowledged, with nobody having decided.
	for deadline := time.Now().Add(10 * time.Second); gw.running("platform-sim") > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("platform-sim still running %s after call.incoming went out: it holds an execution for the decision",
				time.Since(asked).Round(time.Millisecond))
		}
		time.Sleep(20 * time.Millisecond)
	}
	returned := time.Since(asked)
	c, err := s.store.GetCall(s.ctx, in.CallID)
	if err != nil || c.Status != call.StatusRinging || c.Decision != "" {
		t.Fatalf("call after platform-sim returned = %+v, %v; want ringing, undecided", c, err)
	}
	t.Logf("platform-sim returned %s after call.incoming, the call ringing undecided", returned.Round(time.Millisecond))

	// 14 s into the line's 25 s window, by the call's own answer_by: call.incoming may
	// reach the receiver seconds into the window on a busy machine.
	time.Sleep(time.Until(in.AnswerBy.Add(-(25 - 14) * time.Second)))
	answered := s.expect(post("calls-answer", "/v1/calls/{id}/answer", "/v1/calls/"+in.CallID+"/answer", `{"action":"accept"}`),
		http.StatusCreated)
	if answered["session_id"] != in.Session.SessionID || answered["participant_token"] != in.Session.ParticipantToken {
		t.Errorf("answer 14 s after call.incoming = %v, want the session payload of %s", answered, in.Session.SessionID)
	}
	ses, err := s.store.GetSession(s.ctx, in.Session.SessionID)
	if err != nil || ses.Status != session.StatusRinging || ses.DecideBy == nil || ses.DecideBy.After(time.Now()) {
		t.Fatalf("session after the API answer = %+v, %v; want ringing and due for the sweeper", ses, err)
	}

	s.overrides["session-sweeper"] = []string{"SWEEP_WINDOW_SECONDS=1"}
	s.invoke("session-sweeper", mustJSON(t, readJSON(t, "eventbridge-scheduled.json")))
	if c, err = s.store.GetCall(s.ctx, in.CallID); err != nil || c.Status != call.StatusActive ||
		c.Decision != decision.Accept || c.DecisionSource != decision.SourceAPI {
		t.Fatalf("call after the sweep = status %s, decision %q from %q (%v); want active, accept from %s; session-sweeper log:\n%s",
			c.Status, c.Decision, c.DecisionSource, err, decision.SourceAPI, s.proc("session-sweeper").Output())
	}
	var pc simCall
	for deadline := time.Now().Add(20 * time.Second); ; {
		if pc, err = gw.platform.byCallID(in.CallID); err != nil || pc.Status != "ringing" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || pc.ID != placed.ID || pc.Status != "answered" || !pc.InRoom {
		t.Errorf("gateway call = %+v, %v; want %s answered, in the room", pc, err, placed.ID)
	}
	s.expect(request{fn: "sessions-delete", method: http.MethodDelete, pattern: "/v1/sessions/{id}",
		path: "/v1/sessions/" + in.Session.SessionID, auth: auth}, http.StatusOK)
	s.expect(request{fn: "webhook-endpoints-delete", method: http.MethodDelete, pattern: "/v1/webhook_endpoints/{id}",
		path: "/v1/webhook_endpoints/" + ep["id"].(string), auth: auth}, http.StatusOK)
}
