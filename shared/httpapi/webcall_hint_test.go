package httpapi_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/httpapi/contracttest"
	"github.com/bridgeline/bridgeline/shared/session"
)

// TestSessionWebCallWithoutMode: a body with an assistant and nothing to dial but no
// mode is a web call that forgot its mode. The answer says what a web call is (mode
// assistant with an assistant_id) instead of asking for a platform_handle; a body
// with neither still asks for the handle. Nothing is created.
func TestSessionWebCallWithoutMode(t *testing.T) {
	st := newStack(t, nil)
	svc, err := session.New(st.store, session.NoRooms{Public: "ws://127.0.0.1:7880"})
	if err != nil {
		t.Fatal(err)
	}
	api := st.api.With((&httpapi.Sessions{Service: svc}).Routes()...)
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	c := &contract{Contract: contracttest.New(t, srv.URL, st.key, api.Routes()), st: st}
	asst := c.OK("POST", "/v1/assistants", `{"name":"Ada","system_prompt":"Help.","greeting":"Hi.","avatar_id":"ava_iris"}`, 201).Str("id")
	c.OK("POST", "/v1/assistants/"+asst+"/publish", "", 201)

	for _, tc := range []struct {
		name, body, param string
		says              []string
	}{
		{"assistant, no mode", `{"assistant_id":"` + asst + `","media":"video"}`, "mode",
			[]string{`"mode": "assistant"`, "assistant_id", "web call"}},
		{"nothing at all", `{}`, "platform_handle", []string{"platform_handle is required"}},
	} {
		r := c.Fail("POST", "/v1/sessions", tc.body, 400, "parameter_missing")
		e, _ := r.Body["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if e["param"] != tc.param {
			t.Errorf("%s: param %v, want %s", tc.name, e["param"], tc.param)
		}
		for _, w := range tc.says {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: message %q lacks %q", tc.name, msg, w)
			}
		}
	}
	// With "mode": "human" given, what is missing is the handle to dial.
	c.Fail("POST", "/v1/sessions", `{"mode":"human","assistant_id":"`+asst+`"}`, 400, "parameter_missing")
	if r := c.OK("GET", "/v1/sessions", "", 200); len(r.Body["data"].([]any)) != 0 {
		t.Errorf("sessions after refused creates: %s", r.Raw)
	}
}
