package contract_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/livekit/protocol/livekit"
	protologger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/shared/decision"
	"github.com/bridgeline/bridgeline/shared/httpapi/contracttest"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// TestContractVariables drives per-call variables over HTTP on the real control plane
// (SQLite, livekit-server, the sim platform), every exchange checked against
// openapi.yaml: placeholders checked on the draft and listed on the version, a line's
// defaults, a session's values, and the call.incoming answer that hands the call to the
// assistant, through the webhook's response body and through the API. Each call's
// record keeps the values used, and the job LiveKit holds for the persona worker carries
// the rendered text.
func TestContractVariables(t *testing.T) {
	lksdk.SetLogger(protologger.GetDiscardLogger())
	s := harness.Start(t, harness.Options{})
	srv := httptest.NewServer(s.API.Handler())
	t.Cleanup(srv.Close)
	c := contracttest.New(t, srv.URL, s.APIKey, s.API.Routes())
	line1 := s.Lines[harness.Line1].ID

	// Placeholders: malformed ones are refused naming the field, on create and PATCH.
	for _, k := range []struct{ body, param string }{
		{`{"name":"A","greeting":"Hello {{caller name}}"}`, "greeting"},
		{`{"name":"A","system_prompt":"You answer for {{company"}`, "system_prompt"},
		{`{"name":"A","greeting":"Hi {{}} there"}`, "greeting"},
	} {
		if r := c.FailValid("POST", "/v1/assistants", k.body, 400, "parameter_invalid"); errParam(r) != k.param {
			t.Errorf("POST /v1/assistants %s: param %q, want %q", k.body, errParam(r), k.param)
		}
	}
	const (
		greeting = "Hello {{caller_name|there}}, this is {{company}}."
		prompt   = "You answer for {{ company | us }}. The caller is {{caller_name}}."
	)
	body, _ := json.Marshal(map[string]any{"name": "Desk", "greeting": greeting, "system_prompt": prompt, "avatar_id": "ava_iris"})
	asst := c.OK("POST", "/v1/assistants", string(body), 201).Str("id")
	if r := c.FailValid("PATCH", "/v1/assistants/"+asst, `{"system_prompt":"{{a {{b}}"}`, 400, "parameter_invalid"); errParam(r) != "system_prompt" {
		t.Errorf("PATCH malformed system_prompt: param %q", errParam(r))
	}
	pub := c.OK("POST", "/v1/assistants/"+asst+"/publish", "", 201)
	versions, _ := pub.Body["versions"].([]any)
	if len(versions) != 1 || !slices.Equal(strs(versions[0].(map[string]any)["variables"]), []string{"caller_name", "company"}) {
		t.Errorf("published versions = %v, want one listing variables [caller_name company]", pub.Body["versions"])
	}
	listed := c.OK("GET", "/v1/assistants/"+asst+"/versions", "", 200)
	if data, _ := listed.Body["data"].([]any); len(data) != 1 || len(strs(data[0].(map[string]any)["variables"])) != 2 {
		t.Errorf("version list = %s", listed.Raw)
	}

	// Line defaults: set, refused out of bounds, replaced whole.
	l := c.OK("PATCH", "/v1/lines/"+line1, `{"variables":{"company":"Acme","caller_name":"caller"}}`, 200)
	if got := strMap(l.Body["variables"]); !maps.Equal(got, map[string]string{"company": "Acme", "caller_name": "caller"}) {
		t.Errorf("line variables = %v", got)
	}
	long := strings.Repeat("x", 501)
	if r := c.Fail("PATCH", "/v1/lines/"+line1, `{"variables":{"company":"`+long+`"}}`, 400, "parameter_invalid"); errParam(r) != "variables[company]" {
		t.Errorf("501-character value: param %q, want variables[company]", errParam(r))
	}
	c.FailValid("PATCH", "/v1/lines/"+line1, `{"variables":{"first name":"x"}}`, 400, "parameter_invalid")
	c.Fail("PATCH", "/v1/lines/"+line1, `{"variables":{"company":1}}`, 400, "parameter_invalid")
	many := map[string]string{}
	for i := range 51 {
		many["v"+strings.Repeat("x", i)] = "1"
	}
	manyJSON, _ := json.Marshal(map[string]any{"variables": many})
	c.Fail("PATCH", "/v1/lines/"+line1, string(manyJSON), 400, "parameter_invalid")
	l = c.OK("PATCH", "/v1/lines/"+line1, `{"variables":{"company":"Acme"}}`, 200)
	if got := strMap(l.Body["variables"]); !maps.Equal(got, map[string]string{"company": "Acme"}) {
		t.Errorf("replaced line variables = %v, want only company", got)
	}
	c.OK("POST", "/v1/lines/"+line1+"/assign", `{"assistant_id":"`+asst+`"}`, 200)

	// A session's values win over the line's; unused values are dropped.
	c.FailValid("POST", "/v1/sessions", `{"platform_handle":"+15550107777","variables":{"caller_name":"Ada"}}`, 400, "parameter_invalid")
	if r := c.Fail("POST", "/v1/sessions", `{"platform_handle":"+15550107777","mode":"assistant","assistant_id":"`+asst+`","variables":{"caller_name":"`+long+`"}}`,
		400, "parameter_invalid"); errParam(r) != "variables[caller_name]" {
		t.Errorf("long session variable: param %q", errParam(r))
	}
	// Values each within bounds that would render a text past its field limit are
	// refused at the create (issue 22, finding 3): five {{caller_name}} of 450
	// characters make a greeting of 2,255, past 2,000.
	repeatBody, _ := json.Marshal(map[string]any{"name": "Repeater", "greeting": strings.Repeat("{{caller_name}} ", 5),
		"system_prompt": "Be brief.", "avatar_id": "ava_iris"})
	repeater := c.OK("POST", "/v1/assistants", string(repeatBody), 201).Str("id")
	c.OK("POST", "/v1/assistants/"+repeater+"/publish", "", 201)
	wide := strings.Repeat("w", 450)
	if r := c.FailValid("POST", "/v1/sessions", `{"platform_handle":"+15550107776","mode":"assistant","assistant_id":"`+repeater+`","variables":{"caller_name":"`+wide+`"}}`,
		400, "parameter_invalid"); errParam(r) != "variables" || !strings.Contains(string(r.Raw), "2255 characters") {
		t.Errorf("a session whose values render the greeting past 2000: %s, want 400 on variables saying 2255 characters", r.Raw)
	}
	created := c.OK("POST", "/v1/sessions", `{"platform_handle":"+15550107777","mode":"assistant","assistant_id":"`+asst+`","variables":{"caller_name":"Ada","unused":"x"}}`, 201)
	checkVariables(t, c, s, created.Str("id"), created.Str("call_id"), map[string]string{"caller_name": "Ada", "company": "Acme"},
		"Hello Ada, this is Acme.", "You answer for Acme. The caller is Ada.")

	// With no value anywhere a placeholder renders its default, or nothing.
	c.OK("PATCH", "/v1/lines/"+line1, `{"variables":null}`, 200)
	created = c.OK("POST", "/v1/sessions", `{"platform_handle":"+15550107778","mode":"assistant","assistant_id":"`+asst+`"}`, 201)
	checkVariables(t, c, s, created.Str("id"), created.Str("call_id"), map[string]string{},
		"Hello there, this is .", "You answer for us. The caller is .")

	// call.incoming answered {"action": "assistant"} in the webhook's response body.
	c.OK("PATCH", "/v1/lines/"+line1, `{"inbound_mode":"customer_decides","decision_timeout_seconds":10,"variables":{"company":"Acme"}}`, 200)
	recv := eventtest.NewReceiver(t)
	ep := c.OK("POST", "/v1/webhook_endpoints", `{"url":"`+recv.URL+`","events":["call.incoming"]}`, 201)
	recv.SetSecret(ep.Str("secret"))
	recv.AnswerIncomingWith(func(callevent.CallIncoming) callevent.Answer {
		return callevent.Answer{Action: "assistant", Variables: map[string]string{"caller_name": "Grace"}}
	})
	incoming := ringIncoming(t, s, recv, "+15551230000")
	rec := checkVariables(t, c, s, incoming.Session.SessionID, incoming.CallID, map[string]string{"caller_name": "Grace", "company": "Acme"},
		"Hello Grace, this is Acme.", "You answer for Acme. The caller is Grace.")
	if rec.Str("decision") != "assistant" || rec.Str("decision_source") != "webhook_response" || rec.Str("handled_by") != "assistant" {
		t.Errorf("webhook-answered call = %s, want decision assistant from the webhook response, handled by the assistant", rec.Raw)
	}

	// The same through POST /v1/calls/{id}/answer, after refused answers.
	recv.AnswerIncoming(func(callevent.CallIncoming) string { return "" })
	incoming = ringIncoming(t, s, recv, "+15551230001")
	answer := "/v1/calls/" + incoming.CallID + "/answer"
	if r := c.FailValid("POST", answer, `{"action":"accept","variables":{"caller_name":"Linus"}}`, 400, "parameter_invalid"); errParam(r) != "variables" {
		t.Errorf("variables with accept: param %q, want variables", errParam(r))
	}
	c.Fail("POST", answer, `{"action":"assistant","variables":{"caller_name":"`+long+`"}}`, 400, "parameter_invalid")
	// An answer whose values would render the line's assistant past a field limit is
	// refused, and the call still rings for a valid answer.
	c.OK("POST", "/v1/lines/"+line1+"/assign", `{"assistant_id":"`+repeater+`"}`, 200)
	if r := c.FailValid("POST", answer, `{"action":"assistant","variables":{"caller_name":"`+wide+`"}}`, 400, "parameter_invalid"); errParam(r) != "variables" {
		t.Errorf("an answer rendering the greeting past its limit: %s, want 400 on variables", r.Raw)
	}
	c.OK("POST", "/v1/lines/"+line1+"/assign", `{"assistant_id":"`+asst+`"}`, 200)
	decided := c.OK("POST", answer, `{"action":"assistant","variables":{"caller_name":"Linus"}}`, 200)
	if decided.Str("decision") != "assistant" || decided.Str("decision_source") != "api" {
		t.Errorf("assistant answer = %s", decided.Raw)
	}
	rec = checkVariables(t, c, s, incoming.Session.SessionID, incoming.CallID, map[string]string{"caller_name": "Linus", "company": "Acme"},
		"Hello Linus, this is Acme.", "You answer for Acme. The caller is Linus.")
	if rec.Str("decision_source") != "api" {
		t.Errorf("API-answered call = %s", rec.Raw)
	}

	// action assistant on a call whose line had no assistant when it rang.
	callID := ident.New("call")
	err := s.Store.CreateDecision(context.Background(), decision.Record{CallID: callID, AccountID: s.AccountID,
		LineID: s.Lines[harness.Line2].ID, EventID: ident.New("evt"), AnswerBy: time.Now().Add(time.Minute), CreatedAt: time.Now().UTC(),
		Session: callevent.Session{SessionID: ident.New("ses"), CallID: callID, RTCURL: "ws://127.0.0.1:7880",
			ParticipantToken: "eyJhbGciOiJIUzI1NiJ9.e30.sig", ExpiresAt: time.Now().Add(10 * time.Minute)}})
	if err != nil {
		t.Fatal(err)
	}
	if r := c.FailValid("POST", "/v1/calls/"+callID+"/answer", `{"action":"assistant"}`, 400, "parameter_invalid"); errParam(r) != "action" {
		t.Errorf("assistant answer without an assistant: param %q, want action", errParam(r))
	}
}

// checkVariables waits for the session's assistant dispatch and checks the call record's
// variables and the job's rendered greeting and system prompt; it returns the record.
func checkVariables(t *testing.T, c *contracttest.Contract, s *harness.Stack, sessionID, callID string, want map[string]string, greeting, prompt string) contracttest.Reply {
	t.Helper()
	var job persona.Job
	harness.WaitFor(t, 20*time.Second, "the assistant's dispatch", func() bool {
		var ok bool
		job, ok = dispatched(t, s, sessionID)
		return ok
	})
	if job.Version.Greeting != greeting || job.Version.SystemPrompt != prompt {
		t.Errorf("dispatched job greeting %q, system prompt %q; want %q, %q", job.Version.Greeting, job.Version.SystemPrompt, greeting, prompt)
	}
	rec := c.OK("GET", "/v1/calls/"+callID, "", 200)
	if got := strMap(rec.Body["variables"]); !maps.Equal(got, want) || rec.Body["variables"] == nil {
		t.Errorf("call %s variables = %v, want %v", callID, rec.Body["variables"], want)
	}
	return rec
}

// dispatched reads the persona job LiveKit holds for a room, if there is one yet.
func dispatched(t *testing.T, s *harness.Stack, room string) (persona.Job, bool) {
	t.Helper()
	cfg := s.LiveKit.Config()
	ds := lksdk.NewAgentDispatchServiceClient(s.LiveKit.HTTPURL(), cfg.APIKey, cfg.APISecret)
	list, err := ds.ListDispatch(context.Background(), &livekit.ListAgentDispatchRequest{Room: room})
	if err != nil {
		return persona.Job{}, false // the room is not there yet
	}
	for _, d := range list.AgentDispatches {
		if d.AgentName == persona.AgentName {
			var j persona.Job
			if err := json.Unmarshal([]byte(d.Metadata), &j); err != nil {
				t.Fatalf("job metadata %q: %v", d.Metadata, err)
			}
			return j, true
		}
	}
	return persona.Job{}, false
}

// ringIncoming places an inbound sim call from a handle on the stack's first line and
// returns its call.incoming.
func ringIncoming(t *testing.T, s *harness.Stack, recv *eventtest.Receiver, from string) callevent.CallIncoming {
	t.Helper()
	if _, err := s.Sim.Place(platformsim.PlaceRequest{From: from, To: s.Handles[0], Media: "audio"}); err != nil {
		t.Fatal(err)
	}
	var in callevent.CallIncoming
	recv.WaitFor(t, callevent.TypeCallIncoming, 10*time.Second, func(d json.RawMessage) bool {
		json.Unmarshal(d, &in)
		return in.From == from
	})
	return in
}

func errParam(r contracttest.Reply) string {
	e, _ := r.Body["error"].(map[string]any)
	p, _ := e["param"].(string)
	return p
}

func strs(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func strMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := make(map[string]string, len(m))
	for k, x := range m {
		s, _ := x.(string)
		out[k] = s
	}
	return out
}
