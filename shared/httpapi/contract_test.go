package httpapi_test

// The contract test drives the real handler stack (httptest server, SQLite store) through
// every route's successes and errors and validates each real response (status, headers,
// body) against openapi.yaml. Requests the server should accept are validated against the
// document too, so the request schemas cannot be stricter than the handlers.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/avatars/avatartest"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/decision"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/httpapi/contracttest"
	"github.com/bridgeline/bridgeline/shared/idempotency"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// contract is one test's client on the real handler stack (newStack): the contract
// checks of contracttest, with the stack behind them.
type contract struct {
	*contracttest.Contract
	st *stack
}

func newContract(t *testing.T, limiter *httpapi.Limiter) *contract {
	t.Helper()
	st := newStack(t, limiter)
	srv := httptest.NewServer(st.handler)
	t.Cleanup(srv.Close)
	return &contract{Contract: contracttest.New(t, srv.URL, st.key, st.api.Routes()), st: st}
}

// emit writes an event into the store's outbox as a state change would.
func (c *contract) emit(typ string, data any) string {
	c.T.Helper()
	raw, err := json.Marshal(data)
	if err != nil {
		c.T.Fatal(err)
	}
	evt := callevent.Event{ID: ident.New("evt"), AccountID: c.st.acctID, Type: typ, CreatedAt: time.Now().UTC(), Data: raw}
	ctx := context.Background()
	tx, err := c.st.store.DB().BeginTx(ctx, nil)
	if err != nil {
		c.T.Fatal(err)
	}
	if err := sqlite.InsertEvents(ctx, tx, []callevent.Event{evt}); err != nil {
		c.T.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		c.T.Fatal(err)
	}
	return evt.ID
}

func TestContractAssistantsAndLines(t *testing.T) {
	c := newContract(t, nil)
	unknownAsst, unknownLine := ident.New("asst"), ident.New("line")

	full := `{"name":"Ada","system_prompt":"Be kind.","greeting":"Hi, I'm Ada.","avatar_id":"ava_iris","framing":{"shot":"close_up"}}`
	first := c.OK("POST", "/v1/assistants", full, 201, "Idempotency-Key", "create-ada")
	ada := first.Str("id")
	again := c.OK("POST", "/v1/assistants", full, 201, "Idempotency-Key", "create-ada")
	// The replay is the first answer without the tool secret, shown once.
	wantAgain := maps.Clone(first.Body)
	delete(wantAgain, "tool_secret")
	if again.Header.Get("Idempotent-Replayed") != "true" || first.Body["tool_secret"] == nil || !reflect.DeepEqual(again.Body, wantAgain) {
		t.Errorf("replay: Idempotent-Replayed %q, body %s, want the first body without tool_secret %s", again.Header.Get("Idempotent-Replayed"), again.Raw, first.Raw)
	}
	c.FailValid("POST", "/v1/assistants", `{"name":"Eve"}`, 422, "idempotency_key_reused", "Idempotency-Key", "create-ada")
	c.Fail("POST", "/v1/assistants", `{"name":"Eve"}`, 400, "idempotency_key_invalid", "Idempotency-Key", strings.Repeat("k", 256))
	draft := c.OK("POST", "/v1/assistants", `{"name":"Draft only"}`, 201).Str("id")
	c.OK("POST", "/v1/assistants", `{"name":"Empty strings","system_prompt":"","greeting":"","avatar_id":""}`, 201)

	for _, k := range []struct{ body, code string }{
		{`{"name":`, "invalid_json"},
		{`["x"]`, "invalid_json"},
		{`{"name":"a"} {}`, "invalid_json"},
		{`{"greeting":"hi"}`, "parameter_missing"},
		{`{"name":5}`, "parameter_invalid"},
		{`{"name":null}`, "parameter_invalid"},
		{`{"name":"   "}`, "parameter_invalid"},
		{`{"name":"` + strings.Repeat("n", 201) + `"}`, "parameter_invalid"},
		{`{"name":"a","greeting":"` + strings.Repeat("g", 2001) + `"}`, "parameter_invalid"},
		{`{"name":"a","system_prompt":"` + strings.Repeat("p", 20001) + `"}`, "parameter_invalid"},
		{`{"name":"a","framing":{"shot":"huge"}}`, "parameter_invalid"},
		{`{"name":"a","framing":{"position":"up"}}`, "parameter_invalid"},
		{`{"name":"a","nmae":"b"}`, "parameter_unknown"},
		{`{"name":"a","voice":null}`, "parameter_invalid"},
		{`{"name":"a","model":"` + strings.Repeat("m", 129) + `"}`, "parameter_invalid"},
		{`{"name":"a","model":"gpt 4"}`, "parameter_invalid"},
	} {
		c.Fail("POST", "/v1/assistants", k.body, 400, k.code)
	}
	c.FailValid("POST", "/v1/assistants", `{"name":"a","avatar_id":"ava_nope"}`, 400, "parameter_invalid")
	c.FailValid("POST", "/v1/assistants", `{"name":"a","voice":"hosted-echo"}`, 400, "parameter_invalid")
	// A model the operator does not offer (LLM_MODELS), at create and at a draft update.
	c.FailValid("POST", "/v1/assistants", `{"name":"a","model":"gpt-4.5-preview"}`, 400, "parameter_invalid")
	c.FailValid("PATCH", "/v1/assistants/"+ada, `{"model":"gpt-4.5-preview"}`, 400, "parameter_invalid")
	c.Fail("POST", "/v1/assistants", `{"name":"`+strings.Repeat("a", httpapi.MaxBodyBytes)+`"}`, 413, "body_too_large")
	c.Fail("POST", "/v1/assistants", `{"name":"a"}`, 415, "unsupported_media_type", "Content-Type", "text/plain")
	c.Fail("GET", "/v1/assistants", "", 401, "api_key_missing", "Authorization", "")
	c.Fail("GET", "/v1/assistants", "", 401, "api_key_invalid", "Authorization", "Bearer sk_test_0000000000000000000000000000")

	// Lists and gets.
	list := c.OK("GET", "/v1/assistants?limit=2", "", 200)
	if list.Body["has_more"] != true || len(list.Body["data"].([]any)) != 2 {
		t.Errorf("limit=2 of 3 = %s", list.Raw)
	}
	c.OK("GET", "/v1/assistants?status=all&starting_after="+ada, "", 200)
	c.OK("GET", "/v1/assistants?status=archived", "", 200)
	c.Fail("GET", "/v1/assistants?limit=0", "", 400, "parameter_invalid")
	c.Fail("GET", "/v1/assistants?limit=101", "", 400, "parameter_invalid")
	c.Fail("GET", "/v1/assistants?status=gone", "", 400, "parameter_invalid")
	c.Fail("GET", "/v1/assistants?starting_after=line_x", "", 400, "parameter_invalid")
	c.Fail("GET", "/v1/assistants?colour=red", "", 400, "parameter_unknown")
	c.OK("GET", "/v1/assistants/"+ada, "", 200)
	c.FailValid("GET", "/v1/assistants/"+unknownAsst, "", 404, "resource_not_found")
	c.Fail("GET", "/v1/assistants/"+ada+"?expand=versions", "", 400, "parameter_unknown")

	// Draft edits.
	r := c.OK("PATCH", "/v1/assistants/"+ada, `{"greeting":"Hello again.","framing":{"position":"left"}}`, 200)
	if fr, _ := r.Body["draft"].(map[string]any)["framing"].(map[string]any); fr["shot"] != "close_up" || fr["position"] != "left" {
		t.Errorf("partial framing PATCH = %v, want close_up/left", fr)
	}
	c.OK("PATCH", "/v1/assistants/"+ada, `{}`, 200)
	c.Fail("PATCH", "/v1/assistants/"+ada, `{"name":null}`, 400, "parameter_invalid")
	c.Fail("PATCH", "/v1/assistants/"+ada, `{"draft":{}}`, 400, "parameter_unknown")
	c.Fail("PATCH", "/v1/assistants/"+ada, ``, 400, "invalid_json")
	c.FailValid("PATCH", "/v1/assistants/"+unknownAsst, `{"name":"x"}`, 404, "resource_not_found")

	// Publish, activate, duplicate.
	v1 := c.OK("POST", "/v1/assistants/"+ada+"/publish", "", 201)
	c.OK("POST", "/v1/assistants/"+ada+"/publish", "{}", 201)
	vs, _ := v1.Body["versions"].([]any)
	if len(vs) != 1 {
		t.Fatalf("publish versions = %s", v1.Raw)
	}
	ver1 := vs[0].(map[string]any)["id"].(string)
	c.FailValid("POST", "/v1/assistants/"+draft+"/publish", "", 422, "draft_incomplete")
	c.FailValid("POST", "/v1/assistants/"+unknownAsst+"/publish", "", 404, "resource_not_found")
	c.Fail("POST", "/v1/assistants/"+ada+"/publish", `{"force":true}`, 400, "parameter_unknown")
	c.OK("POST", "/v1/assistants/"+ada+"/activate", `{"version_id":"`+ver1+`"}`, 200)
	c.OK("GET", "/v1/assistants/"+ada+"/quality", "", 200)
	c.FailValid("GET", "/v1/assistants/"+unknownAsst+"/quality", "", 404, "resource_not_found")
	c.Fail("GET", "/v1/assistants/"+ada+"/quality?version=1", "", 400, "parameter_unknown")
	c.Fail("POST", "/v1/assistants/"+ada+"/activate", `{}`, 400, "parameter_missing")
	c.FailValid("POST", "/v1/assistants/"+ada+"/activate", `{"version_id":"`+ident.New("ver")+`"}`, 404, "resource_not_found")
	c.OK("POST", "/v1/assistants/"+ada+"/duplicate", "", 201)
	c.OK("POST", "/v1/assistants/"+ada+"/duplicate", `{"name":"Ada 2"}`, 201)
	// A voice (local or hosted) and a model go from the draft into the version and into a
	// duplicate's draft; empty strings clear them.
	c.OK("PATCH", "/v1/assistants/"+ada, `{"voice":"hosted-nova","model":"meta-llama/Llama-3.1-8B-Instruct"}`, 200)
	voiced := c.OK("POST", "/v1/assistants/"+ada+"/publish", "", 201)
	vs, _ = voiced.Body["versions"].([]any)
	if v := vs[len(vs)-1].(map[string]any); v["voice"] != "hosted-nova" || v["model"] != "meta-llama/Llama-3.1-8B-Instruct" {
		t.Errorf("published version = %v, want the draft's voice and model", v)
	}
	dup := c.OK("POST", "/v1/assistants/"+ada+"/duplicate", "", 201)
	if d := dup.Body["draft"].(map[string]any); d["voice"] != "hosted-nova" || d["model"] != "meta-llama/Llama-3.1-8B-Instruct" {
		t.Errorf("duplicate's draft = %v, want the voice and model copied", d)
	}
	cleared := c.OK("PATCH", "/v1/assistants/"+ada, `{"voice":"flite-rms","model":""}`, 200)
	if d := cleared.Body["draft"].(map[string]any); d["voice"] != "flite-rms" || d["model"] != "" {
		t.Errorf("draft after PATCH = %v, want voice flite-rms and no model", d)
	}
	c.Fail("POST", "/v1/assistants/"+ada+"/duplicate", `{"name":""}`, 400, "parameter_invalid")

	// Restore the draft from version 1: its content comes back, versions stay.
	restored := c.OK("POST", "/v1/assistants/"+ada+"/draft/restore", `{"version_id":"`+ver1+`"}`, 200)
	if d := restored.Body["draft"].(map[string]any); d["greeting"] != "Hello again." || d["voice"] != "" || d["model"] != "" {
		t.Errorf("restored draft = %v, want version 1's greeting without voice or model", d)
	}
	if vc := restored.Body["version_count"]; vc != float64(3) {
		t.Errorf("after restore version_count = %v, want 3", vc)
	}
	c.Fail("POST", "/v1/assistants/"+ada+"/draft/restore", `{}`, 400, "parameter_missing")
	c.Fail("POST", "/v1/assistants/"+ada+"/draft/restore", `{"version_id":"asst_1"}`, 400, "parameter_invalid")
	c.Fail("POST", "/v1/assistants/"+ada+"/draft/restore", `{"version_id":"`+ver1+`","greeting":"x"}`, 400, "parameter_unknown")
	c.FailValid("POST", "/v1/assistants/"+ada+"/draft/restore", `{"version_id":"`+ident.New("ver")+`"}`, 404, "resource_not_found")
	c.FailValid("POST", "/v1/assistants/"+unknownAsst+"/draft/restore", `{"version_id":"`+ver1+`"}`, 404, "resource_not_found")

	// Versions, newest first, paged.
	if r := c.OK("GET", "/v1/assistants/"+ada+"/versions?limit=1", "", 200); r.Body["has_more"] != true {
		t.Errorf("versions?limit=1 = %s, want has_more", r.Raw)
	}
	c.OK("GET", "/v1/assistants/"+ada+"/versions?starting_after="+ver1, "", 200)
	c.Fail("GET", "/v1/assistants/"+ada+"/versions?starting_after=asst_x", "", 400, "parameter_invalid")
	c.Fail("GET", "/v1/assistants/"+ada+"/versions?limit=0", "", 400, "parameter_invalid")
	c.FailValid("GET", "/v1/assistants/"+unknownAsst+"/versions", "", 404, "resource_not_found")
	c.FailValid("POST", "/v1/assistants/"+unknownAsst+"/duplicate", "", 404, "resource_not_found")

	// Avatars.
	c.OK("GET", "/v1/avatars", "", 200)
	c.Fail("GET", "/v1/avatars?limit=1", "", 400, "parameter_unknown")

	// Voices: the local ones, then this deployment's hosted ones (alloy, nova).
	voices := c.OK("GET", "/v1/voices", "", 200)
	var ids []string
	defaults := map[string]string{}
	for _, v := range voices.Body["data"].([]any) {
		v := v.(map[string]any)
		ids = append(ids, v["id"].(string))
		for _, a := range v["default_for_avatars"].([]any) {
			defaults[a.(string)] = v["id"].(string)
		}
	}
	if len(ids) != len(persona.LocalVoices)+2 || ids[0] != persona.LocalVoices[0].ID || ids[len(ids)-1] != "hosted-nova" {
		t.Errorf("voices = %v, want the local voices then hosted-alloy, hosted-nova", ids)
	}
	for _, av := range persona.Avatars {
		if defaults[av.ID] != persona.AvatarVoices[av.ID] || defaults[av.ID] == "" {
			t.Errorf("avatar %s: default voice %q in GET /v1/voices, want %q", av.ID, defaults[av.ID], persona.AvatarVoices[av.ID])
		}
	}
	c.Fail("GET", "/v1/voices?limit=1", "", 400, "parameter_unknown")

	// Models: the ones the operator offers (LLM_MODELS), in its order.
	models := c.OK("GET", "/v1/models", "", 200)
	var modelIDs []string
	for _, m := range models.Body["data"].([]any) {
		modelIDs = append(modelIDs, m.(map[string]any)["id"].(string))
	}
	if strings.Join(modelIDs, ",") != "meta-llama/Llama-3.1-8B-Instruct,gpt-4o-mini" {
		t.Errorf("models = %v, want the offered meta-llama/Llama-3.1-8B-Instruct, gpt-4o-mini", modelIDs)
	}
	for _, m := range models.Body["data"].([]any) {
		if m := m.(map[string]any); m["vision"] != (m["id"] == "gpt-4o-mini") {
			t.Errorf("model %v: vision %v, want true for gpt-4o-mini only (LLM_VISION_MODELS)", m["id"], m["vision"])
		}
	}
	c.Fail("GET", "/v1/models?limit=1", "", 400, "parameter_unknown")

	// Lines.
	c.OK("GET", "/v1/lines", "", 200)
	c.OK("GET", "/v1/lines?limit=1&starting_after="+c.st.lineID, "", 200)
	c.Fail("GET", "/v1/lines?starting_after=asst_x", "", 400, "parameter_invalid")
	c.OK("GET", "/v1/lines/"+c.st.lineID, "", 200)
	c.FailValid("GET", "/v1/lines/"+unknownLine, "", 404, "resource_not_found")
	line := "/v1/lines/" + c.st.lineID
	c.FailValid("POST", line+"/assign", `{"assistant_id":"`+draft+`"}`, 409, "assistant_not_published")
	c.FailValid("POST", line+"/assign", `{"assistant_id":"`+unknownAsst+`"}`, 404, "resource_not_found")
	c.Fail("POST", line+"/assign", `{}`, 400, "parameter_missing")
	c.FailValid("POST", "/v1/lines/"+unknownLine+"/assign", `{"assistant_id":"`+ada+`"}`, 404, "resource_not_found")
	// A version pin: assign with version_id, PATCH it, and the ways a pin is refused.
	if r := c.OK("POST", line+"/assign", `{"assistant_id":"`+ada+`","version_id":"`+ver1+`"}`, 200); r.Str("version_id") != ver1 {
		t.Errorf("assign with version_id = %s, want version_id %s", r.Raw, ver1)
	}
	if r := c.OK("PATCH", line, `{"version_id":null}`, 200); r.Body["version_id"] != nil {
		t.Errorf("unpin = %s, want version_id null", r.Raw)
	}
	if r := c.OK("PATCH", line, `{"version_id":"`+ver1+`"}`, 200); r.Str("version_id") != ver1 {
		t.Errorf("PATCH version_id = %s, want %s", r.Raw, ver1)
	}
	dupVer := c.OK("POST", "/v1/assistants/"+c.OK("POST", "/v1/assistants/"+ada+"/duplicate", "", 201).Str("id")+"/publish", "", 201).Str("active_version_id")
	c.FailValid("PATCH", line, `{"version_id":"`+dupVer+`"}`, 400, "parameter_invalid")
	c.FailValid("POST", line+"/assign", `{"assistant_id":"`+ada+`","version_id":"`+ident.New("ver")+`"}`, 404, "resource_not_found")
	c.Fail("POST", line+"/assign", `{"assistant_id":"`+ada+`","version_id":"asst_1"}`, 400, "parameter_invalid")
	c.Fail("PATCH", line, `{"version_id":""}`, 400, "parameter_invalid")
	if r := c.OK("POST", line+"/assign", `{"assistant_id":"`+ada+`"}`, 200); r.Str("assistant_id") != ada || r.Body["version_id"] != nil {
		t.Errorf("assign = %s, want the assistant without a pin", r.Raw)
	} else if _, ok := r.Body["warnings"]; ok {
		t.Errorf("assign on an assistant line = %s, want no warnings", r.Raw)
	}
	// Assigned on a line that does not let the assistant answer every call: assigned,
	// with a warning that names the mode and the PATCH that changes it; GET has none.
	for _, k := range []struct{ patch, says string }{
		{`{"inbound_mode":"customer_decides","on_decision_timeout":"decline"}`, "inbound_mode is customer_decides"},
		{`{"inbound_mode":"customer_decides","on_decision_timeout":"assistant"}`, "nobody answers before answer_by"},
		{`{"inbound_mode":"disabled"}`, "inbound_mode is disabled"},
	} {
		c.OK("PATCH", line, k.patch, 200)
		r := c.OK("POST", line+"/assign", `{"assistant_id":"`+ada+`"}`, 200)
		ws, _ := r.Body["warnings"].([]any)
		w, _ := func() (map[string]any, bool) {
			if len(ws) != 1 {
				return nil, false
			}
			m, ok := ws[0].(map[string]any)
			return m, ok
		}()
		msg, _ := w["message"].(string)
		if r.Str("assistant_id") != ada || w["code"] != "inbound_mode_not_assistant" || !strings.Contains(msg, k.says) ||
			!strings.Contains(msg, `{"inbound_mode": "assistant"}`) {
			t.Errorf("assign after %s = %s, want the assistant and one inbound_mode_not_assistant warning saying %q", k.patch, r.Raw, k.says)
		}
		if g := c.OK("GET", line, "", 200); g.Body["warnings"] != nil {
			t.Errorf("GET line = %s, want no warnings", g.Raw)
		}
	}
	c.OK("PATCH", line, `{"inbound_mode":"assistant","on_decision_timeout":"decline"}`, 200)
	c.FailValid("POST", "/v1/assistants/"+ada+"/archive", "", 409, "assistant_in_use")
	c.OK("PATCH", line, `{"name":"Front desk","inbound_mode":"customer_decides","decision_timeout_seconds":5,"on_decision_timeout":"assistant","assistant_id":null}`, 200)
	c.OK("PATCH", line, `{"assistant_id":"`+ada+`"}`, 200)
	c.OK("PATCH", line, `{"assistant_id":null}`, 200)
	c.FailValid("PATCH", line, `{"assistant_id":"`+draft+`"}`, 409, "assistant_not_published")
	c.Fail("PATCH", line, `{"decision_timeout_seconds":31}`, 400, "parameter_invalid")
	c.Fail("PATCH", line, `{"decision_timeout_seconds":"5"}`, 400, "parameter_invalid")
	c.Fail("PATCH", line, `{"inbound_mode":"maybe"}`, 400, "parameter_invalid")
	c.Fail("PATCH", line, `{"inbound_mode":null}`, 400, "parameter_invalid")
	c.Fail("PATCH", line, `{"handle":"+1555"}`, 400, "parameter_unknown")
	c.FailValid("PATCH", "/v1/lines/"+unknownLine, `{"name":"x"}`, 404, "resource_not_found")

	// Tools, the call settings and the tool secret: shown by the create and each
	// rotation only, never by a read.
	tooled := c.OK("POST", "/v1/assistants", `{"name":"Tooled","system_prompt":"Help.","greeting":"Hi.","avatar_id":"ava_iris",`+
		`"tools":[{"name":"lookup_order","description":"Finds an order.","url":"https://example.com/tools",`+
		`"parameters":{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}}],`+
		`"idle_timeout_seconds":45,"max_duration_seconds":600}`, 201)
	firstSecret := tooled.Str("tool_secret")
	if !strings.HasPrefix(firstSecret, "whsec_") {
		t.Errorf("create = %s, want a tool_secret", tooled.Raw)
	}
	tooledPath := "/v1/assistants/" + tooled.Str("id")
	if r := c.OK("GET", tooledPath, "", 200); r.Body["tool_secret"] != nil ||
		!strings.Contains(string(r.Raw), `"timeout_ms":5000`) || !strings.Contains(string(r.Raw), `"idle_timeout_seconds":45`) {
		t.Errorf("GET = %s, want the tools with their default timeout and no tool_secret", r.Raw)
	}
	if r := c.OK("POST", tooledPath+"/rotate_tool_secret", "", 200); r.Str("tool_secret") == "" || r.Str("tool_secret") == firstSecret {
		t.Errorf("rotate_tool_secret = %s, want a new tool_secret", r.Raw)
	}
	c.FailValid("POST", "/v1/assistants/"+unknownAsst+"/rotate_tool_secret", "", 404, "resource_not_found")
	if r := c.OK("POST", tooledPath+"/publish", "", 201); !strings.Contains(string(r.Raw), `"tools":[{"name":"lookup_order"`) {
		t.Errorf("publish = %s, want the tools in the version", r.Raw)
	}
	c.Fail("PATCH", tooledPath, `{"tools":[{"name":"end_call","url":"https://example.com/"}]}`, 400, "parameter_invalid")
	if r := c.Fail("PATCH", tooledPath, `{"tools":[{"name":"x","url":"https://example.com/","headers":{}}]}`, 400, "parameter_unknown"); !strings.Contains(string(r.Raw), `"param":"tools[0].headers"`) {
		t.Errorf("unknown tool field = %s, want param tools[0].headers", r.Raw)
	}
	c.Fail("PATCH", tooledPath, `{"tools":[{"name":"x","url":"http://169.254.169.254/latest"}]}`, 400, "url_not_allowed")
	c.Fail("PATCH", tooledPath, `{"tools":[{"name":"x","url":"https://example.com/","parameters":{"type":"object","required":7}}]}`, 400, "parameter_invalid")
	c.Fail("PATCH", tooledPath, `{"tools":null}`, 400, "parameter_invalid")
	c.Fail("PATCH", tooledPath, `{"idle_timeout_seconds":5}`, 400, "parameter_invalid")
	c.Fail("PATCH", tooledPath, `{"max_duration_seconds":86401}`, 400, "parameter_invalid")
	if r := c.OK("PATCH", tooledPath, `{"tools":[],"max_duration_seconds":null}`, 200); !strings.Contains(string(r.Raw), `"tools":[],"idle_timeout_seconds":45,"max_duration_seconds":null`) {
		t.Errorf("PATCH = %s, want no tools and no limit in the draft", r.Raw)
	}

	// Noise suppression: on by default, turned off and on by PATCH, never null.
	if d := c.OK("GET", tooledPath, "", 200).Body["draft"].(map[string]any); d["noise_suppression"] != true {
		t.Errorf("draft's noise_suppression = %v, want true by default", d["noise_suppression"])
	}
	if d := c.OK("PATCH", tooledPath, `{"noise_suppression":false}`, 200).Body["draft"].(map[string]any); d["noise_suppression"] != false || d["idle_timeout_seconds"] != float64(45) {
		t.Errorf("draft after noise_suppression false = %v, want it off and the other settings kept", d)
	}
	c.Fail("PATCH", tooledPath, `{"noise_suppression":null}`, 400, "parameter_invalid")
	c.Fail("PATCH", tooledPath, `{"noise_suppression":"off"}`, 400, "parameter_invalid")
	if d := c.OK("PATCH", tooledPath, `{"noise_suppression":true}`, 200).Body["draft"].(map[string]any); d["noise_suppression"] != true {
		t.Errorf("draft after noise_suppression true = %v, want it on", d["noise_suppression"])
	}

	// Interruption: adaptive by default, set whole, normalised, published with the
	// version, null brings back the default.
	if d := c.OK("GET", tooledPath, "", 200).Body["draft"].(map[string]any); !reflect.DeepEqual(d["interruption"],
		map[string]any{"mode": "adaptive", "min_words": float64(1), "acknowledgements": []any{}}) {
		t.Errorf("draft's interruption = %v, want the default", d["interruption"])
	}
	if d := c.OK("PATCH", tooledPath, `{"interruption":{"min_words":2,"acknowledgements":[" Sure  Thing ","gotcha","gotcha"]}}`, 200).Body["draft"].(map[string]any); !reflect.DeepEqual(d["interruption"],
		map[string]any{"mode": "adaptive", "min_words": float64(2), "acknowledgements": []any{"sure thing", "gotcha"}}) {
		t.Errorf("draft's interruption = %v, want it set and normalised", d["interruption"])
	}
	pub := c.OK("POST", tooledPath+"/publish", "", 201)
	var published any
	for _, v := range pub.Body["versions"].([]any) {
		if v := v.(map[string]any); v["id"] == pub.Str("active_version_id") {
			published = v["interruption"]
		}
	}
	if in, _ := published.(map[string]any); in == nil || in["min_words"] != float64(2) {
		t.Errorf("published version's interruption = %v, want the draft's", published)
	}
	if r := c.Fail("PATCH", tooledPath, `{"interruption":{"mode":"never"}}`, 400, "parameter_invalid"); !strings.Contains(string(r.Raw), `"param":"interruption.mode"`) {
		t.Errorf("bad mode = %s, want param interruption.mode", r.Raw)
	}
	c.Fail("PATCH", tooledPath, `{"interruption":{"min_words":11}}`, 400, "parameter_invalid")
	c.Fail("PATCH", tooledPath, `{"interruption":{"acknowledgements":["one two three four five"]}}`, 400, "parameter_invalid")
	c.Fail("PATCH", tooledPath, `{"interruption":{"mode":"off","eager":true}}`, 400, "parameter_unknown")
	if d := c.OK("PATCH", tooledPath, `{"interruption":null}`, 200).Body["draft"].(map[string]any); d["interruption"].(map[string]any)["min_words"] != float64(1) {
		t.Errorf("draft's interruption after null = %v, want the default", d["interruption"])
	}

	// Vision: off by default; a mode it does not know is 400; a draft with vision
	// publishes only with a model that accepts images (LLM_VISION_MODELS): 400
	// model_lacks_vision on model otherwise, before anything is published.
	if d := c.OK("GET", tooledPath, "", 200).Body["draft"].(map[string]any); d["vision"] != "off" {
		t.Errorf("draft's vision = %v, want off by default", d["vision"])
	}
	c.Fail("PATCH", tooledPath, `{"vision":"eyes"}`, 400, "parameter_invalid")
	c.Fail("PATCH", tooledPath, `{"vision":null}`, 400, "parameter_invalid")
	if d := c.OK("PATCH", tooledPath, `{"vision":"camera_and_screen"}`, 200).Body["draft"].(map[string]any); d["vision"] != "camera_and_screen" {
		t.Errorf("draft's vision after PATCH = %v, want camera_and_screen", d["vision"])
	}
	before := len(c.OK("GET", tooledPath, "", 200).Body["versions"].([]any))
	if r := c.FailValid("POST", tooledPath+"/publish", "", 400, "model_lacks_vision"); !strings.Contains(string(r.Raw), `"param":"model"`) {
		t.Errorf("publish with vision and no model = %s, want param model", r.Raw)
	}
	c.OK("PATCH", tooledPath, `{"model":"meta-llama/Llama-3.1-8B-Instruct"}`, 200)
	if r := c.FailValid("POST", tooledPath+"/publish", "", 400, "model_lacks_vision"); !strings.Contains(string(r.Raw), "gpt-4o-mini") {
		t.Errorf("publish with vision on a text model = %s, want the refusal to name the model that accepts images", r.Raw)
	}
	if n := len(c.OK("GET", tooledPath, "", 200).Body["versions"].([]any)); n != before {
		t.Errorf("%d versions after the refused publishes, want %d", n, before)
	}
	c.OK("PATCH", tooledPath, `{"model":"gpt-4o-mini"}`, 200)
	seeing := c.OK("POST", tooledPath+"/publish", "", 201)
	sv := seeing.Body["versions"].([]any)
	if v := sv[len(sv)-1].(map[string]any); v["vision"] != "camera_and_screen" || v["model"] != "gpt-4o-mini" {
		t.Errorf("published version's vision %v on model %v, want camera_and_screen on gpt-4o-mini", v["vision"], v["model"])
	}
	c.OK("PATCH", tooledPath, `{"vision":"off","model":""}`, 200)

	// Recording: off by default, published with the version, restored and duplicated
	// with the draft (a session's own: TestSessionRecordingRefused).
	if d := c.OK("GET", tooledPath, "", 200).Body["draft"].(map[string]any); d["recording"] != "off" {
		t.Errorf("draft's recording = %v, want off by default", d["recording"])
	}
	recorded := c.OK("POST", "/v1/assistants", `{"name":"Recorded","system_prompt":"Help.","greeting":"Hi.","avatar_id":"ava_iris","recording":"audio"}`, 201)
	recPath := "/v1/assistants/" + recorded.Str("id")
	recVer := c.OK("POST", recPath+"/publish", "", 201)
	if v := recVer.Body["versions"].([]any)[0].(map[string]any); v["recording"] != "audio" {
		t.Errorf("published version's recording = %v, want audio", v["recording"])
	}
	if d := c.OK("PATCH", recPath, `{"recording":"off"}`, 200).Body["draft"].(map[string]any); d["recording"] != "off" {
		t.Errorf("PATCH recording off: draft's = %v", d["recording"])
	}
	if d := c.OK("POST", recPath+"/draft/restore", `{"version_id":"`+recVer.Str("active_version_id")+`"}`, 200).Body["draft"].(map[string]any); d["recording"] != "audio" {
		t.Errorf("restored draft's recording = %v, want the version's audio", d["recording"])
	}
	if d := c.OK("POST", recPath+"/duplicate", "", 201).Body["draft"].(map[string]any); d["recording"] != "audio" {
		t.Errorf("duplicate's recording = %v, want audio", d["recording"])
	}
	c.Fail("PATCH", recPath, `{"recording":"video"}`, 400, "parameter_invalid")
	c.Fail("PATCH", recPath, `{"recording":null}`, 400, "parameter_invalid")

	// Archive and what an archived assistant refuses.
	if r := c.OK("POST", "/v1/assistants/"+ada+"/archive", "", 200); r.Str("status") != "archived" {
		t.Errorf("archive = %s", r.Raw)
	}
	c.OK("POST", "/v1/assistants/"+ada+"/archive", "{}", 200)
	c.FailValid("POST", "/v1/assistants/"+unknownAsst+"/archive", "", 404, "resource_not_found")
	c.Fail("POST", "/v1/assistants/"+ada+"/archive", `[]`, 400, "invalid_json")
	c.FailValid("PATCH", "/v1/assistants/"+ada, `{"name":"x"}`, 409, "assistant_archived")
	c.FailValid("POST", "/v1/assistants/"+ada+"/publish", "", 409, "assistant_archived")
	c.FailValid("POST", "/v1/assistants/"+ada+"/activate", `{"version_id":"`+ver1+`"}`, 409, "assistant_archived")
	c.FailValid("POST", "/v1/assistants/"+ada+"/draft/restore", `{"version_id":"`+ver1+`"}`, 409, "assistant_archived")
	c.FailValid("POST", line+"/assign", `{"assistant_id":"`+ada+`"}`, 409, "assistant_archived")

	// Another account's ids are 404s.
	other := []string{"Authorization", "Bearer " + c.st.otherKey}
	c.FailValid("GET", "/v1/assistants/"+draft, "", 404, "resource_not_found", other...)
	c.FailValid("GET", line, "", 404, "resource_not_found", other...)
	c.FailValid("PATCH", line, `{"name":"stolen"}`, 404, "resource_not_found", other...)

	// A request with this Idempotency-Key still running: 409, nothing changes.
	body := `{"name":"Held"}`
	k, err := c.st.store.KeyByHash(context.Background(), account.HashKey(c.st.key))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if _, inserted, err := c.st.store.BeginIdempotent(context.Background(), idempotency.Record{
		AccountID: c.st.acctID, Key: "held", RequestHash: httpapi.IdempotencyHash("POST", "/v1/assistants", k.ID, []byte(body)),
		CreatedAt: now, ExpiresAt: now.Add(time.Hour),
	}, now); err != nil || !inserted {
		t.Fatalf("hold an idempotency key: inserted=%v err=%v", inserted, err)
	}
	c.FailValid("POST", "/v1/assistants", body, 409, "idempotency_key_in_use", "Idempotency-Key", "held")

	// Routing answers before auth.
	r = c.Fail("PUT", "/v1/assistants", "", 405, "method_not_allowed", "Authorization", "")
	if r.Header.Get("Allow") != "GET, POST" {
		t.Errorf("Allow = %q, want GET, POST", r.Header.Get("Allow"))
	}
	c.Fail("DELETE", "/v1/assistants/"+ada, "", 405, "method_not_allowed")
	c.Fail("GET", "/v1/nope", "", 404, "route_not_found", "Authorization", "")

	// Own avatars: a character sheet upload, a read with preview URLs, a delete, and
	// their refusals.
	sheet := func(drop string) (string, string) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		m := avatartest.Manifest()
		delete(m["anchors"].(map[string]any), drop)
		mw.WriteField("sheet", string(avatartest.JSON(m)))
		for name, f := range avatartest.Files() {
			if name != drop {
				w, _ := mw.CreateFormFile(name, name+".png")
				w.Write(f)
			}
		}
		mw.Close()
		return b.String(), mw.FormDataContentType()
	}
	body, ct := sheet("")
	own := c.OK("POST", "/v1/avatars", body, 201, "Content-Type", ct).Str("id")
	spare := c.OK("POST", "/v1/avatars", body, 201, "Content-Type", ct).Str("id")
	noEyes, ct2 := sheet("eyes_closed")
	c.Fail("POST", "/v1/avatars", noEyes, 400, "parameter_missing", "Content-Type", ct2)
	c.Fail("POST", "/v1/avatars", `{"name":"json"}`, 415, "unsupported_media_type")
	if g := c.OK("GET", "/v1/avatars/"+own, "", 200); g.Body["previews_expire_at"] == nil {
		t.Errorf("GET /v1/avatars/%s has no previews: %s", own, g.Raw)
	}
	c.OK("GET", "/v1/avatars/ava_iris", "", 200)
	c.FailValid("GET", "/v1/avatars/"+ident.New("ava"), "", 404, "resource_not_found")
	c.FailValid("GET", "/v1/avatars/"+own, "", 404, "resource_not_found", other...)
	withOwn := c.OK("POST", "/v1/assistants", `{"name":"Mascot","system_prompt":"Be kind.","greeting":"Hi.","avatar_id":"`+own+`"}`, 201).Str("id")
	c.OK("POST", "/v1/assistants/"+withOwn+"/publish", "", 201)
	c.FailValid("DELETE", "/v1/avatars/"+own, "", 409, "avatar_in_use")
	c.FailValid("DELETE", "/v1/avatars/ava_iris", "", 400, "parameter_invalid")
	c.FailValid("DELETE", "/v1/avatars/"+spare, "", 404, "resource_not_found", other...)
	c.OK("DELETE", "/v1/avatars/"+spare, "", 204)
	c.FailValid("DELETE", "/v1/avatars/"+spare, "", 404, "resource_not_found")

	c.RequireCoverage(contracttest.Prefixed("/v1/assistants", "/v1/avatars", "/v1/voices", "/v1/models", "/v1/lines"))
}

func TestContractWebhookEndpointsAndEvents(t *testing.T) {
	c := newContract(t, nil)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)
	unknownEp, unknownEvt := ident.New("whep"), ident.New("evt")

	created := c.OK("POST", "/v1/webhook_endpoints", `{"url":"`+receiver.URL+`/hooks","events":["call.ended","call.answered"],"description":"prod"}`, 201)
	ep := created.Str("id")
	c.OK("POST", "/v1/webhook_endpoints", `{"url":"https://example.test/all"}`, 201)
	c.OK("POST", "/v1/webhook_endpoints", `{"url":"https://example.test/star","events":["*"]}`, 201)
	for _, k := range []struct{ body, code string }{
		{`{}`, "parameter_missing"},
		{`{"url":"ftp://example.test/"}`, "parameter_invalid"},
		{`{"url":"https://example.test/","events":[]}`, "parameter_invalid"},
		{`{"url":"https://example.test/","events":["*","call.ended"]}`, "parameter_invalid"},
		{`{"url":"https://example.test/","events":["call.bogus"]}`, "parameter_invalid"},
		{`{"url":"https://example.test/","status":"disabled"}`, "parameter_unknown"},
		{`{"url":"https://example.test/","secret":"whsec_x"}`, "parameter_unknown"},
	} {
		c.Fail("POST", "/v1/webhook_endpoints", k.body, 400, k.code)
	}
	c.FailValid("POST", "/v1/webhook_endpoints", `{"url":"https://u:p@example.test/"}`, 400, "parameter_invalid")

	c.OK("GET", "/v1/webhook_endpoints", "", 200)
	c.OK("GET", "/v1/webhook_endpoints?limit=1&starting_after="+ep, "", 200)
	c.Fail("GET", "/v1/webhook_endpoints?starting_after=evt_1", "", 400, "parameter_invalid")
	if r := c.OK("GET", "/v1/webhook_endpoints/"+ep, "", 200); strings.Contains(string(r.Raw), "whsec_") {
		t.Errorf("GET shows a secret: %s", r.Raw)
	}
	c.FailValid("GET", "/v1/webhook_endpoints/"+unknownEp, "", 404, "resource_not_found")
	c.OK("PATCH", "/v1/webhook_endpoints/"+ep, `{"description":"production","events":["call.ended","call.incoming","call.answered"]}`, 200)
	c.Fail("PATCH", "/v1/webhook_endpoints/"+ep, `{"status":"paused"}`, 400, "parameter_invalid")
	c.FailValid("PATCH", "/v1/webhook_endpoints/"+unknownEp, `{"status":"enabled"}`, 404, "resource_not_found")
	rot := c.OK("POST", "/v1/webhook_endpoints/"+ep+"/rotate_secret", "", 200)
	if rot.Str("secret") == created.Str("secret") || rot.Body["previous_secret_expires_at"] == nil {
		t.Errorf("rotate = %s", rot.Raw)
	}
	c.FailValid("POST", "/v1/webhook_endpoints/"+unknownEp+"/rotate_secret", "", 404, "resource_not_found")

	// Events, delivered for real so the attempts are real.
	answeredAt := time.Now().UTC()
	ended := c.emit(callevent.TypeCallEnded, callevent.CallEnded{CallID: ident.New("call"), SessionID: ident.New("ses"),
		Direction: "outbound", From: "+15550100001", To: "+15550100002", Media: "video", HandledBy: "customer",
		StartedAt: answeredAt.Add(-time.Minute), AnsweredAt: &answeredAt, EndedAt: answeredAt.Add(time.Minute),
		DurationMS: 60000, EndReason: "deleted", EndedBy: "customer"})
	incomingCall := ident.New("call")
	incoming := c.emit(callevent.TypeCallIncoming, callevent.CallIncoming{CallID: incomingCall, LineID: c.st.lineID,
		From: "+15550100009", To: "+15550100001", Media: "audio", AnswerBy: time.Now().Add(10 * time.Second),
		Session: callevent.Session{SessionID: ident.New("ses"), CallID: incomingCall, RTCURL: "ws://127.0.0.1:7880",
			ParticipantToken: "eyJhbGciOiJIUzI1NiJ9.e30.sig", ExpiresAt: time.Now().Add(10 * time.Minute)}})
	if _, err := c.st.worker.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.OK("GET", "/v1/events", "", 200)
	c.OK("GET", "/v1/events?type=call.ended&limit=1", "", 200)
	c.OK("GET", "/v1/events?starting_after="+ended, "", 200)
	c.Fail("GET", "/v1/events?type=call.bogus", "", 400, "parameter_invalid")
	c.Fail("GET", "/v1/events?starting_after=whep_1", "", 400, "parameter_invalid")
	if r := c.OK("GET", "/v1/events/"+ended, "", 200); len(r.Body["attempts"].([]any)) == 0 {
		t.Errorf("event has no attempts after delivery: %s", r.Raw)
	}
	c.FailValid("GET", "/v1/events/"+unknownEvt, "", 404, "resource_not_found")
	c.OK("POST", "/v1/events/"+ended+"/redeliver", "", 202)
	c.OK("POST", "/v1/events/"+ended+"/redeliver", `{"endpoint_id":"`+ep+`"}`, 202)
	c.FailValid("POST", "/v1/events/"+ended+"/redeliver", `{"endpoint_id":"`+unknownEp+`"}`, 404, "resource_not_found")
	c.FailValid("POST", "/v1/events/"+incoming+"/redeliver", "", 409, "event_not_redeliverable")
	c.FailValid("POST", "/v1/events/"+unknownEvt+"/redeliver", "", 404, "resource_not_found")
	c.Fail("POST", "/v1/events/"+ended+"/redeliver", `{"endpoint":"x"}`, 400, "parameter_unknown")

	c.OK("PATCH", "/v1/webhook_endpoints/"+ep, `{"status":"disabled"}`, 200)
	c.FailValid("POST", "/v1/events/"+ended+"/redeliver", `{"endpoint_id":"`+ep+`"}`, 409, "webhook_endpoint_disabled")
	c.OK("DELETE", "/v1/webhook_endpoints/"+ep, "", 200)
	c.FailValid("DELETE", "/v1/webhook_endpoints/"+ep, "", 404, "resource_not_found")
	c.Fail("DELETE", "/v1/webhook_endpoints/"+unknownEp+"?force=1", "", 400, "parameter_unknown")

	c.RequireCoverage(contracttest.Prefixed("/v1/webhook_endpoints", "/v1/events"))
}

func TestContractCallAnswer(t *testing.T) {
	c := newContract(t, nil)
	ctx := context.Background()
	ring := func(answerBy time.Time) string {
		t.Helper()
		callID := ident.New("call")
		err := c.st.store.CreateDecision(ctx, decision.Record{CallID: callID, AccountID: c.st.acctID, LineID: c.st.lineID,
			EventID: ident.New("evt"), AnswerBy: answerBy, CreatedAt: time.Now().UTC(),
			Session: callevent.Session{SessionID: ident.New("ses"), CallID: callID, RTCURL: "ws://127.0.0.1:7880",
				ParticipantToken: "eyJhbGciOiJIUzI1NiJ9.e30.sig", ExpiresAt: time.Now().Add(10 * time.Minute)}})
		if err != nil {
			t.Fatal(err)
		}
		return "/v1/calls/" + callID + "/answer"
	}
	accepted := ring(time.Now().Add(time.Minute))
	if r := c.OK("POST", accepted, `{"action":"accept"}`, 201); r.Str("participant_token") == "" {
		t.Errorf("accept = %s", r.Raw)
	}
	c.OK("POST", accepted, `{"action":"accept"}`, 201)
	c.FailValid("POST", accepted, `{"action":"decline"}`, 409, "call_already_answered")
	declined := ring(time.Now().Add(time.Minute))
	c.OK("POST", declined, `{"action":"decline"}`, 200)
	c.FailValid("POST", ring(time.Now().Add(-time.Second)), `{"action":"accept"}`, 409, "call_not_answerable")
	c.FailValid("POST", "/v1/calls/"+ident.New("call")+"/answer", `{"action":"accept"}`, 404, "resource_not_found")
	// A call GET finds but nobody is asked about (outbound, or inbound on an assistant
	// line) is not answerable, and the message says what the call is; another account's
	// call stays unknown.
	for _, k := range []struct{ direction, status string }{
		{call.Outbound, call.StatusActive}, {call.Outbound, call.StatusEnded}, {call.Inbound, call.StatusEnded},
	} {
		cr := call.Call{ID: ident.New("call"), AccountID: c.st.acctID, Direction: k.direction, LineID: c.st.lineID,
			From: "+15550100001", To: "+15550100002", Media: "video", Status: k.status, Platform: "sim",
			PlatformCallID: ident.New("sim"), StartedAt: time.Now().UTC()}
		if err := c.st.store.SaveCall(ctx, cr, nil); err != nil {
			t.Fatal(err)
		}
		r := c.FailValid("POST", "/v1/calls/"+cr.ID+"/answer", `{"action":"accept"}`, 409, "call_not_answerable")
		msg, _ := r.Body["error"].(map[string]any)["message"].(string)
		if !strings.Contains(msg, k.direction) || !strings.Contains(msg, "status is "+k.status) {
			t.Errorf("answer %s %s call: message %q names neither direction nor status", k.direction, k.status, msg)
		}
		c.FailValid("POST", "/v1/calls/"+cr.ID+"/answer", `{"action":"accept"}`, 404, "resource_not_found", "Authorization", "Bearer "+c.st.otherKey)
	}
	c.FailValid("POST", accepted, `{"action":"accept"}`, 404, "resource_not_found", "Authorization", "Bearer "+c.st.otherKey)
	c.Fail("POST", declined, `{}`, 400, "parameter_missing")
	c.Fail("POST", declined, `{"action":"maybe"}`, 400, "parameter_invalid")
	c.Fail("POST", declined, `{"action":"accept","reason":"x"}`, 400, "parameter_unknown")
	c.RequireCoverage(contracttest.Prefixed("/v1/calls/{id}/answer"))
}

// TestContractFieldNamesAreExact: API.md refuses unknown fields so typos are caught, at
// any depth and in any letter case. encoding/json alone matches names case-insensitively
// ({"NAME": ...} sets name) and Nullable decodes nested objects without
// DisallowUnknownFields, so Decode must check the keys itself.
func TestContractFieldNamesAreExact(t *testing.T) {
	c := newContract(t, nil)
	for _, k := range []struct{ method, path, body string }{
		{"POST", "/v1/assistants", `{"NAME":"a"}`},
		{"POST", "/v1/assistants", `{"name":"a","Greeting":"hi"}`},
		{"POST", "/v1/assistants", `{"name":"a","framing":{"zoom":2}}`},
		{"POST", "/v1/assistants", `{"name":"a","framing":{"Shot":"wide"}}`},
		{"PATCH", "/v1/lines/" + c.st.lineID, `{"Inbound_Mode":"disabled"}`},
		{"POST", "/v1/webhook_endpoints", `{"URL":"https://example.test/"}`},
	} {
		c.Fail(k.method, k.path, k.body, 400, "parameter_unknown")
	}
	if r := c.OK("GET", "/v1/assistants", "", 200); len(r.Body["data"].([]any)) != 0 {
		t.Errorf("refused bodies created assistants: %s", r.Raw)
	}
}

// TestContractRateLimitAndInternalError covers the two statuses only a configured limiter
// or a failing store produce.
func TestContractRateLimitAndInternalError(t *testing.T) {
	c := newContract(t, httpapi.NewLimiter(0.001, 1))
	c.OK("GET", "/v1/lines", "", 200)
	r := c.Fail("GET", "/v1/lines", "", 429, "rate_limited")
	if r.Header.Get("Retry-After") == "" {
		t.Errorf("429 without Retry-After: %v", r.Header)
	}

	broken := newContract(t, nil)
	broken.st.store.Close()
	for _, k := range []contracttest.Call{
		{Method: "GET", Path: "/v1/assistants", Status: 500, Code: "internal_error"},
		{Method: "POST", Path: "/v1/assistants", Body: `{"name":"x"}`, Status: 500, Code: "internal_error"},
	} {
		r := broken.Do(k)
		if msg := r.Body["error"].(map[string]any)["message"]; msg != "internal error" {
			t.Errorf("500 message = %q, want only \"internal error\"", msg)
		}
	}
}
