package httpapi_test

import (
	"net/http/httptest"
	"testing"

	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/httpapi/contracttest"
	"github.com/bridgeline/bridgeline/shared/session"
)

// A session's recording is off or audio, and for mode assistant only: every other value
// is refused before anything is created (creating one needs LiveKit: e2e/sessions).
func TestSessionRecordingRefused(t *testing.T) {
	st := newStack(t, nil)
	svc, err := session.New(st.store, session.NoRooms{Public: "ws://127.0.0.1:7880"})
	if err != nil {
		t.Fatal(err)
	}
	api := st.api.With((&httpapi.Sessions{Service: svc}).Routes()...)
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	c := &contract{Contract: contracttest.New(t, srv.URL, st.key, api.Routes()), st: st}
	asst := c.OK("POST", "/v1/assistants", `{"name":"Recorded","system_prompt":"Help.","greeting":"Hi.","avatar_id":"ava_iris"}`, 201).Str("id")
	c.OK("POST", "/v1/assistants/"+asst+"/publish", "", 201)
	for _, body := range []string{
		`{"platform_handle":"+15550100009","recording":"audio"}`,
		`{"mode":"assistant","assistant_id":"` + asst + `","platform_handle":"+15550100009","recording":"on"}`,
		`{"mode":"assistant","assistant_id":"` + asst + `","platform_handle":"+15550100009","recording":""}`,
		`{"mode":"assistant","assistant_id":"` + asst + `","platform_handle":"+15550100009","recording":null}`,
	} {
		r := c.Fail("POST", "/v1/sessions", body, 400, "parameter_invalid")
		if e, _ := r.Body["error"].(map[string]any); e["param"] != "recording" {
			t.Errorf("%s: param %v, want recording", body, e["param"])
		}
	}
	if r := c.OK("GET", "/v1/sessions", "", 200); len(r.Body["data"].([]any)) != 0 {
		t.Errorf("sessions after refused creates: %s", r.Raw)
	}
}
