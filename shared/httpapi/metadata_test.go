package httpapi_test

// Metadata through HTTP: set on create, changed by each object's PATCH as Stripe does,
// shown everywhere the object is, and every bad input refused with a param that names
// it and nothing written. The session and call records are written directly (creating a
// session needs LiveKit: openapi_sessions_test.go creates one with metadata for real).

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	callrec "github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/controlplane"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/session"
)

func TestContractMetadata(t *testing.T) {
	st := newStack(t, nil)
	svc := &session.Service{Records: st.store, Rooms: controlplane.NoLiveKit{Public: "ws://127.0.0.1:7880"}}
	st.api.Extra = append(st.api.Extra, (&httpapi.Sessions{Service: svc}).Routes()...)
	srv := httptest.NewServer(st.api.Handler())
	t.Cleanup(srv.Close)
	c := &contract{t: t, doc: loadSpec(t), base: srv.URL, key: st.key, routes: st.api.Routes(), st: st,
		seen: map[string]map[int]bool{}}
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
	a := c.ok("POST", "/v1/assistants", `{"name":"Ada","metadata":{"team":"front-desk","crm_id":"42","skip":""}}`, 201)
	asst := a.str("id")
	wantMeta(t, "assistant create", a, map[string]string{"team": "front-desk", "crm_id": "42"})
	wantMeta(t, "assistant get", c.ok("GET", "/v1/assistants/"+asst, "", 200), map[string]string{"team": "front-desk", "crm_id": "42"})
	wantMeta(t, "assistant list", listItem(t, c.ok("GET", "/v1/assistants", "", 200), asst), map[string]string{"team": "front-desk", "crm_id": "42"})
	wantMeta(t, "assistant patch", c.ok("PATCH", "/v1/assistants/"+asst, `{"metadata":{"crm_id":"","tier":"gold"}}`, 200),
		map[string]string{"team": "front-desk", "tier": "gold"})
	wantMeta(t, "assistant patch of another field", c.ok("PATCH", "/v1/assistants/"+asst, `{"greeting":"Hi"}`, 200),
		map[string]string{"team": "front-desk", "tier": "gold"})
	wantMeta(t, "assistant patch {}", c.ok("PATCH", "/v1/assistants/"+asst, `{"metadata":{}}`, 200),
		map[string]string{"team": "front-desk", "tier": "gold"})
	wantMeta(t, "assistant without metadata", c.ok("POST", "/v1/assistants", `{"name":"Bare"}`, 201), map[string]string{})

	// Lines: only a PATCH sets it; null clears it.
	line := "/v1/lines/" + st.lineID
	wantMeta(t, "line before", c.ok("GET", line, "", 200), map[string]string{})
	wantMeta(t, "line patch", c.ok("PATCH", line, `{"metadata":{"team":"sales"},"name":"Sales"}`, 200), map[string]string{"team": "sales"})
	wantMeta(t, "line list", listItem(t, c.ok("GET", "/v1/lines", "", 200), st.lineID), map[string]string{"team": "sales"})

	// Sessions and calls: their PATCH changes metadata only, each its own.
	sesPath, callPath := "/v1/sessions/"+ses.ID, "/v1/calls/"+rec.ID
	wantMeta(t, "session get", c.ok("GET", sesPath, "", 200), map[string]string{"order_id": "6735"})
	wantMeta(t, "call get", c.ok("GET", callPath, "", 200), map[string]string{"order_id": "6735"})
	wantMeta(t, "session patch", c.ok("PATCH", sesPath, `{"metadata":{"agent":"sam"}}`, 200),
		map[string]string{"order_id": "6735", "agent": "sam"})
	wantMeta(t, "call after the session's patch", c.ok("GET", callPath, "", 200), map[string]string{"order_id": "6735"})
	wantMeta(t, "call patch", c.ok("PATCH", callPath, `{"metadata":{"order_id":"","ticket":"T-1042"}}`, 200),
		map[string]string{"ticket": "T-1042"})
	wantMeta(t, "session patch {}", c.ok("PATCH", sesPath, `{}`, 200), map[string]string{"order_id": "6735", "agent": "sam"})
	wantMeta(t, "call patch {}", c.ok("PATCH", callPath, `{}`, 200), map[string]string{"ticket": "T-1042"})
	wantMeta(t, "session list", listItem(t, c.ok("GET", "/v1/sessions", "", 200), ses.ID), map[string]string{"order_id": "6735", "agent": "sam"})
	wantMeta(t, "call list", listItem(t, c.ok("GET", "/v1/calls", "", 200), rec.ID), map[string]string{"ticket": "T-1042"})
	c.failValid("PATCH", sesPath, `{"metadata":{"x":"y"}}`, 404, "resource_not_found", other...)
	c.failValid("PATCH", callPath, `{"metadata":{"x":"y"}}`, 404, "resource_not_found", other...)
	c.failValid("PATCH", "/v1/sessions/"+ident.New("ses"), `{"metadata":{"x":"y"}}`, 404, "resource_not_found")
	c.failValid("PATCH", "/v1/calls/"+ident.New("call"), `{}`, 404, "resource_not_found")
	c.fail("PATCH", sesPath, `{"status":"ended"}`, 400, "parameter_unknown")
	c.fail("PATCH", callPath, `{"decision":"accept"}`, 400, "parameter_unknown")
	c.fail("PATCH", callPath, ``, 400, "invalid_json")

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
			got := c.fail(r.method, r.path, r.body, 400, "parameter_invalid")
			if e, _ := got.body["error"].(map[string]any); e["param"] != b.param {
				t.Errorf("%s %s metadata %.60s: param %v, want %q", r.method, r.path, b.meta, e["param"], b.param)
			}
		}
	}
	// null is refused on create (there is nothing to clear).
	c.fail("POST", "/v1/assistants", `{"name":"Refused","metadata":null}`, 400, "parameter_invalid")
	c.fail("POST", "/v1/sessions", `{"platform_handle":"+15550100009","metadata":null}`, 400, "parameter_invalid")
	// An update whose result passes 50 keys: the request alone is valid.
	fifty := map[string]string{}
	for i := range 50 {
		fifty[fmt.Sprintf("f%02d", i)] = "v"
	}
	fiftyJSON, _ := json.Marshal(fifty)
	c.failValid("PATCH", callPath, `{"metadata":`+string(fiftyJSON)+`}`, 400, "parameter_invalid")
	if after := snapshot(c, asst, st.lineID, ses.ID, rec.ID); after != before {
		t.Errorf("refused requests changed the records:\n%s\nwant\n%s", after, before)
	}
	if list := c.ok("GET", "/v1/assistants?limit=100", "", 200); len(list.body["data"].([]any)) != 2 {
		t.Errorf("refused creates made assistants: %s", list.raw)
	}

	// null clears every key.
	wantMeta(t, "call patch null", c.ok("PATCH", callPath, `{"metadata":null}`, 200), map[string]string{})
	wantMeta(t, "session patch null", c.ok("PATCH", sesPath, `{"metadata":null}`, 200), map[string]string{})
	wantMeta(t, "line patch null", c.ok("PATCH", line, `{"metadata":null}`, 200), map[string]string{})
	wantMeta(t, "assistant patch null", c.ok("PATCH", "/v1/assistants/"+asst, `{"metadata":null}`, 200), map[string]string{})
	// 50 keys fit.
	wantMeta(t, "call patch of 50 keys", c.ok("PATCH", callPath, `{"metadata":`+string(fiftyJSON)+`}`, 200), fifty)
}

// snapshot is the records' state as the API shows them, to compare before and after.
func snapshot(c *contract, asst, lineID, sesID, callID string) string {
	c.t.Helper()
	var b strings.Builder
	for _, p := range []string{"/v1/assistants/" + asst, "/v1/lines/" + lineID, "/v1/sessions/" + sesID, "/v1/calls/" + callID} {
		b.Write(c.ok("GET", p, "", 200).raw)
		b.WriteByte('\n')
	}
	return b.String()
}

func listItem(t *testing.T, list reply, id string) reply {
	t.Helper()
	data, _ := list.body["data"].([]any)
	for _, it := range data {
		if m, _ := it.(map[string]any); m["id"] == id {
			return reply{body: m}
		}
	}
	t.Fatalf("%s not in the list %s", id, list.raw)
	return reply{}
}

func wantMeta(t *testing.T, what string, r reply, want map[string]string) {
	t.Helper()
	raw, ok := r.body["metadata"].(map[string]any)
	if !ok {
		t.Errorf("%s: metadata = %v, want an object", what, r.body["metadata"])
		return
	}
	got := map[string]string{}
	for k, v := range raw {
		s, ok := v.(string)
		if !ok {
			t.Errorf("%s: metadata[%s] = %v, want a string", what, k, v)
		}
		got[k] = s
	}
	if !maps.Equal(got, want) {
		t.Errorf("%s: metadata = %v, want %v", what, got, want)
	}
}
