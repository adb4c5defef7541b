package contract_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	protologger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/ident"
)

// crossAccountBodies are request bodies that are valid apart from whose resource the path
// names, by route (method and pattern): account B's request must fail on ownership (404),
// not on its body ($version and $assistant are A's). A route missing here is sent with
// an empty JSON object.
var crossAccountBodies = map[string]string{
	"POST /v1/assistants/{id}/activate":      `{"version_id":"$version"}`,
	"POST /v1/assistants/{id}/draft/restore": `{"version_id":"$version"}`,
	"POST /v1/lines/{id}/assign":             `{"assistant_id":"$assistant"}`,
	"PATCH /v1/assistants/{id}":              `{"name":"stolen"}`,
	"PATCH /v1/lines/{id}":                   `{"name":"stolen"}`,
	"PATCH /v1/webhook_endpoints/{id}":       `{"description":"stolen"}`,
	"PATCH /v1/sip_trunks/{id}":              `{"name":"stolen"}`,
	"POST /v1/calls/{id}/transfer":           `{"to":"+15550107009"}`,
	"POST /v1/calls/{id}/answer":             `{"action":"decline"}`,
}

// TestCrossAccountMatrix is the cross-account matrix, generated from the route table:
// for every /v1 route whose path names a resource, account B sends the request with
// account A's resource id, and every answer must be 404 resource_not_found (never 403,
// 200 or anything that tells B the id exists). Afterwards A's resources are unchanged.
// It fails when a route's resource has no id of A to try, so a new route joins the
// matrix or the test says it cannot.
func TestCrossAccountMatrix(t *testing.T) {
	lksdk.SetLogger(protologger.GetDiscardLogger())
	s := harness.Start(t, harness.Options{})
	otherKey := harness.NewAccount(t, s)
	// The SIP trunk and line routes take live keys only (httpapi.LiveKeyOnly): A makes
	// its trunk with a live key, and B sends those routes with a live key of its own
	// (with a test key B gets 403 live_key_required whatever the id, which tells nothing
	// either).
	accts := &account.Service{Store: s.Store, Now: time.Now}
	liveA, _, err := accts.AddKey(context.Background(), s.AccountID, true)
	if err != nil {
		t.Fatal(err)
	}
	_, otherLive, err := accts.Create(context.Background(), "Other Live Co", true)
	if err != nil {
		t.Fatal(err)
	}
	do := func(key, method, path, body string) (int, map[string]any) {
		t.Helper()
		idem := ""
		if method == http.MethodPost {
			idem = ident.New("req")
		}
		status, raw, _ := request(t, s, key, method, path, body, idem)
		var out map[string]any
		json.Unmarshal(raw, &out)
		return status, out
	}
	mine := func(method, path, body string, want int) map[string]any {
		t.Helper()
		status, out := do(s.APIKey, method, path, body)
		if status != want {
			t.Fatalf("account A: %s %s = %d %v, want %d", method, path, status, out, want)
		}
		return out
	}

	// Account A's resources, one of each kind a /v1 path names.
	asst := mine("POST", "/v1/assistants", `{"name":"Mine","system_prompt":"Be brief.","greeting":"Hello.","avatar_id":"ava_iris","framing":{"shot":"medium","position":"center"}}`, 201)["id"].(string)
	version := mine("POST", "/v1/assistants/"+asst+"/publish", "", 201)["active_version_id"].(string)
	created0, trunkOut := do(liveA, "POST", "/v1/sip_trunks", `{"name":"Mine","inbound":{"allowed_addresses":["203.0.113.0/24"]}}`)
	if created0 != 201 {
		t.Fatalf("account A: POST /v1/sip_trunks = %d %v", created0, trunkOut)
	}
	trunk := trunkOut["id"].(string)
	hook := mine("POST", "/v1/webhook_endpoints", `{"url":"http://127.0.0.1:9/hooks","events":["call.ended"]}`, 201)["id"].(string)
	created := mine("POST", "/v1/sessions", `{"platform_handle":"+15550107001","media":"audio"}`, 201)
	ses, call := created["session_id"].(string), created["call_id"].(string)
	ended := mine("POST", "/v1/sessions", `{"platform_handle":"+15550107002","media":"audio"}`, 201)["session_id"].(string)
	mine("DELETE", "/v1/sessions/"+ended, "", 200)
	cmp := mine("POST", "/v1/campaigns", `{"assistant_id":"`+asst+`","recipients":[{"platform_handle":"+15550107003"}]}`, 201)["id"].(string)
	events := mine("GET", "/v1/events", "", 200)["data"].([]any)
	keys := mine("GET", "/v1/api_keys", "", 200)["data"].([]any)
	if len(events) == 0 || len(keys) == 0 {
		t.Fatalf("account A has %d events and %d keys, want some of each", len(events), len(keys))
	}
	ids := map[string]string{ // the path segment after /v1/ -> A's id
		"assistants":        asst,
		"lines":             s.Lines[harness.Line1].ID,
		"api_keys":          keys[0].(map[string]any)["id"].(string),
		"webhook_endpoints": hook,
		"events":            events[0].(map[string]any)["id"].(string),
		"sessions":          ses,
		"calls":             call,
		"sip_trunks":        trunk,
		"campaigns":         cmp,
		"avatars":           uploadAvatar(t, s, s.APIKey),
	}

	covered, non404 := 0, 0
	for _, r := range s.API.Routes() {
		if !strings.HasPrefix(r.Pattern, "/v1/") || !strings.Contains(r.Pattern, "{") {
			continue
		}
		kind, _, _ := strings.Cut(strings.TrimPrefix(r.Pattern, "/v1/"), "/")
		id, ok := ids[kind]
		if !ok {
			t.Errorf("%s %s: no id of account A for %q: add one to the matrix", r.Method, r.Pattern, kind)
			continue
		}
		path := strings.Replace(r.Pattern, "{id}", id, 1)
		if strings.Contains(path, "{") {
			t.Errorf("%s %s: a path parameter the matrix does not fill", r.Method, r.Pattern)
			continue
		}
		body := strings.NewReplacer("$version", version, "$assistant", asst).Replace(crossAccountBodies[r.Method+" "+r.Pattern])
		if body == "" && r.Method != http.MethodGet && r.Method != http.MethodDelete {
			body = `{}`
		}
		covered++
		key := otherKey
		if r.Keys.Mode == httpapi.LiveKeyOnly {
			key = otherLive
		}
		status, out := do(key, r.Method, path, body)
		code, _ := out["error"].(map[string]any)["code"].(string)
		if status != http.StatusNotFound || code != "resource_not_found" {
			non404++
			t.Errorf("account B: %s %s with A's id = %d %v, want 404 resource_not_found", r.Method, r.Pattern, status, out)
		}
	}
	fmt.Printf("cross-account matrix: %d routes with an id, %d answers other than 404 (goal 0)\n", covered, non404)
	if covered < len(ids) {
		t.Errorf("the matrix covered %d routes, fewer than the %d resource kinds", covered, len(ids))
	}

	// Nothing B sent changed A's resources.
	if got := mine("GET", "/v1/assistants/"+asst, "", 200); got["name"] != "Mine" || got["status"] == "archived" {
		t.Errorf("A's assistant after the matrix = %v", got)
	}
	if got := mine("GET", "/v1/lines/"+ids["lines"], "", 200); got["name"] == "stolen" {
		t.Errorf("A's line after the matrix = %v", got)
	}
	if got := mine("GET", "/v1/sessions/"+ses, "", 200); got["status"] != "ringing" && got["status"] != "active" {
		t.Errorf("A's session after the matrix = %v, want it live", got)
	}
	mine("GET", "/v1/webhook_endpoints/"+hook, "", 200)
	if got := mine("GET", "/v1/campaigns/"+cmp, "", 200); got["status"] != "draft" {
		t.Errorf("A's campaign after the matrix = %v, want it still a draft", got)
	}
	if got := mine("GET", "/v1/api_keys", "", 200)["data"].([]any); len(got) != len(keys) {
		t.Errorf("A's keys after the matrix = %d, want %d", len(got), len(keys))
	}
}
