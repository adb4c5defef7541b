package httpapi_test

// Metadata through HTTP: set on create, changed by each object's PATCH as Stripe does,
// shown everywhere the object is, and every bad input refused with a param that names
// it and nothing written. The session and call records are written directly (creating a
// session needs LiveKit: openapi_sessions_test.go creates one with metadata for real).

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	callrec "github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/httpapi/contracttest"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/session"
)

func TestContractMetadata(t *testing.T) {
	st := newStack(t, nil)
	svc, err := session.New(st.store, session.NoRooms{Public: "ws://127.0.0.1:7880"})
	if err != nil {
		t.Fatal(err)
	}
	api := st.api.With((&httpapi.Sessions{Service: svc}).Routes()...)
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	c := &contract{Contract: contracttest.New(t, srv.URL, st.key, api.Routes()), st: st}
	other := []string{"Authorization", "Bearer " + st.otherKey}

	// A session and its call, as POST /v1/sessions writes them.
	now := time.Now().UTC().Truncate(time.Millisecond)
	ses := session.Session{ID: ident.New("ses"), AccountID: st.acctID, LineID: st.lineID, Mode: session.ModeHuman,
		Media: "video", PlatformHandle: "+15557654321", Status: session.StatusRinging, CreatedAt: now,
		Metadata: map[string]string{"order_id": "6735"}}
	rec := callrec.Call{ID: ident.New("call"), AccountID: st.acctID, Direction: callrec.Outbound, LineID: st.lineID,
		From: "+15550100001", To: ses.PlatformHandle, Media: "video", Status: callrec.StatusRinging,
		HandledBy: callrec.HandledByCustomer, SessionID: ses.ID, Platform: "sim", StartedAt: now, Metadata: ses.Metadata.Clone()}
	ses.CallID = rec.ID
	if err := st.store.SaveSession(t.Context(), ses, rec, nil); err != nil {
		t.Fatal(err)
	}

	// Assistants: create, read, list, patch (merge, remove, clear), other fields keep it.
	a := c.OK("POST", "/v1/assistants", `{"name":"Ada","metadata":{"team":"front-desk","crm_id":"42","skip":""}}`, 201)
	asst := a.Str("id")
	contracttest.WantMeta(t, "assistant create", a, map[string]string{"team": "front-desk", "crm_id": "42"})
	contracttest.WantMeta(t, "assistant get", c.OK("GET", "/v1/assistants/"+asst, "", 200), map[string]string{"team": "front-desk", "crm_id": "42"})
	contracttest.WantMeta(t, "assistant list", listItem(t, c.OK("GET", "/v1/assistants", "", 200), asst), map[string]string{"team": "front-desk", "crm_id": "42"})
	contracttest.WantMeta(t, "assistant patch", c.OK("PATCH", "/v1/assistants/"+asst, `{"metadata":{"crm_id":"","tier":"gold"}}`, 200),
		map[string]string{"team": "front-desk", "tier": "gold"})
	contracttest.WantMeta(t, "assistant patch of another field", c.OK("PATCH", "/v1/assistants/"+asst, `{"greeting":"Hi"}`, 200),
		map[string]string{"team": "front-desk", "tier": "gold"})
	contracttest.WantMeta(t, "assistant patch {}", c.OK("PATCH", "/v1/assistants/"+asst, `{"metadata":{}}`, 200),
		map[string]string{"team": "front-desk", "tier": "gold"})
	contracttest.WantMeta(t, "assistant without metadata", c.OK("POST", "/v1/assistants", `{"name":"Bare"}`, 201), map[string]string{})

	// Lines: only a PATCH sets it; null clears it.
	line := "/v1/lines/" + st.lineID
	contracttest.WantMeta(t, "line before", c.OK("GET", line, "", 200), map[string]string{})
	contracttest.WantMeta(t, "line patch", c.OK("PATCH", line, `{"metadata":{"team":"sales"},"name":"Sales"}`, 200), map[string]string{"team": "sales"})
	contracttest.WantMeta(t, "line list", listItem(t, c.OK("GET", "/v1/lines", "", 200), st.lineID), map[string]string{"team": "sales"})

	// Sessions and calls: their PATCH changes metadata only, each its own.
	sesPath, callPath := "/v1/sessions/"+ses.ID, "/v1/calls/"+rec.ID
	contracttest.WantMeta(t, "session get", c.OK("GET", sesPath, "", 200), map[string]string{"order_id": "6735"})
	contracttest.WantMeta(t, "call get", c.OK("GET", callPath, "", 200), map[string]string{"order_id": "6735"})
	contracttest.WantMeta(t, "session patch", c.OK("PATCH", sesPath, `{"metadata":{"agent":"sam"}}`, 200),
		map[string]string{"order_id": "6735", "agent": "sam"})
	contracttest.WantMeta(t, "call after the session's patch", c.OK("GET", callPath, "", 200), map[string]string{"order_id": "6735"})
	contracttest.WantMeta(t, "call patch", c.OK("PATCH", callPath, `{"metadata":{"order_id":"","ticket":"T-1042"}}`, 200),
		map[string]string{"ticket": "T-1042"})
	contracttest.WantMeta(t, "session patch {}", c.OK("PATCH", sesPath, `{}`, 200), map[string]string{"order_id": "6735", "agent": "sam"})
	contracttest.WantMeta(t, "call patch {}", c.OK("PATCH", callPath, `{}`, 200), map[string]string{"ticket": "T-1042"})
	contracttest.WantMeta(t, "session list", listItem(t, c.OK("GET", "/v1/sessions", "", 200), ses.ID), map[string]string{"order_id": "6735", "agent": "sam"})
	contracttest.WantMeta(t, "call list", listItem(t, c.OK("GET", "/v1/calls", "", 200), rec.ID), map[string]string{"ticket": "T-1042"})
	c.FailValid("PATCH", sesPath, `{"metadata":{"x":"y"}}`, 404, "resource_not_found", other...)
	c.FailValid("PATCH", callPath, `{"metadata":{"x":"y"}}`, 404, "resource_not_found", other...)
	c.FailValid("PATCH", "/v1/sessions/"+ident.New("ses"), `{"metadata":{"x":"y"}}`, 404, "resource_not_found")
	c.FailValid("PATCH", "/v1/calls/"+ident.New("call"), `{}`, 404, "resource_not_found")
	c.Fail("PATCH", sesPath, `{"status":"ended"}`, 400, "parameter_unknown")
	c.Fail("PATCH", callPath, `{"decision":"accept"}`, 400, "parameter_unknown")
	c.Fail("PATCH", callPath, ``, 400, "invalid_json")

	// Bad metadata, on every route that takes it: 400 naming the parameter, nothing written.
	long := strings.Repeat("k", 41)
	tooMany := map[string]string{}
	for i := range 51 {
		tooMany[fmt.Sprintf("k%02d", i)] = "v"
	}
	tooManyJSON, _ := json.Marshal(tooMany)
	bad := []struct{ meta, param string }{
		{`"order 6735"`, "metadata"},
		{`["a"]`, "metadata"},
		{`{"k":1}`, "metadata[k]"},
		{`{"k":true}`, "metadata[k]"},
		{`{"k":{"a":"b"}}`, "metadata[k]"},
		{`{"k":["a"]}`, "metadata[k]"},
		{`{"k":null}`, "metadata[k]"},
		{`{"":"v"}`, "metadata"},
		{`{"  ":"v"}`, "metadata"},
		{`{"a[b]":"v"}`, "metadata[a[b]]"},
		{`{"` + long + `":"v"}`, "metadata[" + long + "]"},
		{`{"k":"` + strings.Repeat("v", 501) + `"}`, "metadata[k]"},
		{string(tooManyJSON), "metadata"},
	}
	before := snapshot(c, asst, st.lineID, ses.ID, rec.ID)
	for _, b := range bad {
		for _, r := range []struct{ method, path, body string }{
			{"POST", "/v1/assistants", `{"name":"Refused","metadata":` + b.meta + `}`},
			{"PATCH", "/v1/assistants/" + asst, `{"name":"Refused","metadata":` + b.meta + `}`},
			{"PATCH", line, `{"name":"Refused","metadata":` + b.meta + `}`},
			{"POST", "/v1/sessions", `{"platform_handle":"+15550100009","metadata":` + b.meta + `}`},
			{"PATCH", sesPath, `{"metadata":` + b.meta + `}`},
			{"PATCH", callPath, `{"metadata":` + b.meta + `}`},
		} {
			got := c.Fail(r.method, r.path, r.body, 400, "parameter_invalid")
			if e, _ := got.Body["error"].(map[string]any); e["param"] != b.param {
				t.Errorf("%s %s metadata %.60s: param %v, want %q", r.method, r.path, b.meta, e["param"], b.param)
			}
		}
	}
	// null is refused on create (there is nothing to clear).
	c.Fail("POST", "/v1/assistants", `{"name":"Refused","metadata":null}`, 400, "parameter_invalid")
	c.Fail("POST", "/v1/sessions", `{"platform_handle":"+15550100009","metadata":null}`, 400, "parameter_invalid")
	// An update whose result passes 50 keys: the request alone is valid.
	fifty := map[string]string{}
	for i := range 50 {
		fifty[fmt.Sprintf("f%02d", i)] = "v"
	}
	fiftyJSON, _ := json.Marshal(fifty)
	c.FailValid("PATCH", callPath, `{"metadata":`+string(fiftyJSON)+`}`, 400, "parameter_invalid")
	if after := snapshot(c, asst, st.lineID, ses.ID, rec.ID); after != before {
		t.Errorf("refused requests changed the records:\n%s\nwant\n%s", after, before)
	}
	if list := c.OK("GET", "/v1/assistants?limit=100", "", 200); len(list.Body["data"].([]any)) != 2 {
		t.Errorf("refused creates made assistants: %s", list.Raw)
	}

	// null clears every key.
	contracttest.WantMeta(t, "call patch null", c.OK("PATCH", callPath, `{"metadata":null}`, 200), map[string]string{})
	contracttest.WantMeta(t, "session patch null", c.OK("PATCH", sesPath, `{"metadata":null}`, 200), map[string]string{})
	contracttest.WantMeta(t, "line patch null", c.OK("PATCH", line, `{"metadata":null}`, 200), map[string]string{})
	contracttest.WantMeta(t, "assistant patch null", c.OK("PATCH", "/v1/assistants/"+asst, `{"metadata":null}`, 200), map[string]string{})
	// 50 keys fit.
	contracttest.WantMeta(t, "call patch of 50 keys", c.OK("PATCH", callPath, `{"metadata":`+string(fiftyJSON)+`}`, 200), fifty)
}

// snapshot is the records' state as the API shows them, to compare before and after.
func snapshot(c *contract, asst, lineID, sesID, callID string) string {
	c.T.Helper()
	var b strings.Builder
	for _, p := range []string{"/v1/assistants/" + asst, "/v1/lines/" + lineID, "/v1/sessions/" + sesID, "/v1/calls/" + callID} {
		b.Write(c.OK("GET", p, "", 200).Raw)
		b.WriteByte('\n')
	}
	return b.String()
}

func listItem(t *testing.T, list contracttest.Reply, id string) contracttest.Reply {
	t.Helper()
	data, _ := list.Body["data"].([]any)
	for _, it := range data {
		if m, _ := it.(map[string]any); m["id"] == id {
			return contracttest.Reply{Body: m}
		}
	}
	t.Fatalf("%s not in the list %s", id, list.Raw)
	return contracttest.Reply{}
}
