package contract_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	protologger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/idempotency"
	"github.com/bridgeline/bridgeline/shared/ident"
)

// secretText is what a credential looks like in a JSON body: an API key, a webhook
// signing secret, or a JWT (a participant token; `eyJ` is `{"` in base64).
var secretText = regexp.MustCompile(`sk_(test|live)_[0-9A-Za-z]{8,}|whsec_[0-9A-Za-z+/=]{8,}|eyJ[0-9A-Za-z_-]+\.[0-9A-Za-z_-]+\.[0-9A-Za-z_-]*`)

// request sends one request to the stack with an API key, a JSON body (or none) and an
// Idempotency-Key (or none), and returns the answer.
func request(t *testing.T, s *harness.Stack, key, method, path, body, idem string) (int, []byte, http.Header) {
	t.Helper()
	return requestAs(t, s, key, method, path, "application/json", body, idem)
}

// requestAs is request with a body of the content type given (a multipart upload).
func requestAs(t *testing.T, s *harness.Stack, key, method, path, contentType, body, idem string) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, resp.Header
}

// exchange is one idempotent request as the test sent it and what it got back.
type exchange struct {
	route, path, body, key string
	contentType            string // "": JSON
	apiKey                 string // the API key that sent it
	status                 int
	raw                    []byte
}

// TestIdempotencyRecordsHoldNoSecret runs every POST route of the route table with an
// Idempotency-Key on the whole stack (SQLite, livekit-server, the sim) and reads the
// record the idempotency table kept for it: no record holds a secret, neither one the
// answer carried (a new API key, a webhook signing secret, a participant token) nor
// anything shaped like one. A replay with the same key answers the same object: without
// the API key or the signing secret (shown once), with a participant token minted anew
// (a session's create and token routes) or the call's own (an accept). A POST route the
// test has no request for fails it, so a new route joins the check.
//
// Then the replay is the first key's only: another key of the account, of the other mode
// (an sk_test_ key that learned the Idempotency-Key an sk_live_ key used) or of the same,
// gets 422 idempotency_key_reused and nothing of the first answer.
func TestIdempotencyRecordsHoldNoSecret(t *testing.T) {
	lksdk.SetLogger(protologger.GetDiscardLogger())
	s := harness.Start(t, harness.Options{LocalDelivery: true})
	ctx := context.Background()
	send := func(key, method, path, body, idem string) (int, []byte, http.Header) {
		t.Helper()
		return request(t, s, key, method, path, body, idem)
	}
	var done []exchange
	// The SIP trunk and line routes take live keys only: sent with one of the account's.
	sipKey, _, err := (&account.Service{Store: s.Store, Now: time.Now}).AddKey(ctx, s.AccountID, true)
	if err != nil {
		t.Fatal(err)
	}
	post := func(route, path, body string, want int) map[string]any {
		t.Helper()
		x := exchange{route: route, path: path, body: body, key: ident.New("idem"), apiKey: s.APIKey}
		if strings.HasPrefix(route, "POST /v1/sip_trunks") || route == "POST /v1/lines" {
			x.apiKey = sipKey
		}
		x.status, x.raw, _ = send(x.apiKey, http.MethodPost, path, body, x.key)
		if x.status != want {
			t.Fatalf("POST %s = %d %s, want %d", path, x.status, x.raw, want)
		}
		done = append(done, x)
		var out map[string]any
		json.Unmarshal(x.raw, &out)
		return out
	}
	get := func(path string) map[string]any {
		t.Helper()
		status, raw, _ := send(s.APIKey, http.MethodGet, path, "", "")
		if status != http.StatusOK {
			t.Fatalf("GET %s = %d %s", path, status, raw)
		}
		var out map[string]any
		json.Unmarshal(raw, &out)
		return out
	}

	// One request per POST route, in an order that makes what the next one names.
	asst := post("POST /v1/assistants", "/v1/assistants", `{"name":"Ada","system_prompt":"Be brief.","greeting":"Hello.","avatar_id":"ava_iris"}`, 201)["id"].(string)
	version := post("POST /v1/assistants/{id}/publish", "/v1/assistants/"+asst+"/publish", "", 201)["active_version_id"].(string)
	post("POST /v1/assistants/{id}/activate", "/v1/assistants/"+asst+"/activate", `{"version_id":"`+version+`"}`, 200)
	post("POST /v1/assistants/{id}/draft/restore", "/v1/assistants/"+asst+"/draft/restore", `{"version_id":"`+version+`"}`, 200)
	dup := post("POST /v1/assistants/{id}/duplicate", "/v1/assistants/"+asst+"/duplicate", "", 201)["id"].(string)
	post("POST /v1/assistants/{id}/rotate_tool_secret", "/v1/assistants/"+asst+"/rotate_tool_secret", "", 200)
	post("POST /v1/assistants/{id}/archive", "/v1/assistants/"+dup+"/archive", "", 200)
	post("POST /v1/lines/{id}/assign", "/v1/lines/"+s.Lines[harness.Line2].ID+"/assign", `{"assistant_id":"`+asst+`"}`, 200)
	post("POST /v1/api_keys", "/v1/api_keys", "", 201)
	recv := eventtest.NewReceiver(t)
	recv.AnswerIncoming(func(callevent.CallIncoming) string { return "" }) // the answer comes through the API
	hook := post("POST /v1/webhook_endpoints", "/v1/webhook_endpoints", `{"url":"`+recv.URL+`","events":["call.incoming","call.ended"]}`, 201)
	recv.SetSecret(hook["secret"].(string))
	post("POST /v1/webhook_endpoints/{id}/rotate_secret", "/v1/webhook_endpoints/"+hook["id"].(string)+"/rotate_secret", "", 200)
	ses := post("POST /v1/sessions", "/v1/sessions", `{"platform_handle":"+15550107101","media":"audio"}`, 201)["session_id"].(string)
	post("POST /v1/sessions/{id}/tokens", "/v1/sessions/"+ses+"/tokens", `{"name":"Agent Smith"}`, 201)
	cmp := post("POST /v1/campaigns", "/v1/campaigns", `{"assistant_id":"`+asst+`","recipients":[{"platform_handle":"sim:busy"}],"settings":{"window":{"start":"00:00","end":"00:01"}}}`, 201)["id"].(string)
	// An avatar of the account's own: a multipart upload.
	sheet, sheetType := avatarSheet()
	x := exchange{route: "POST /v1/avatars", path: "/v1/avatars", body: sheet, contentType: sheetType, key: ident.New("idem"), apiKey: s.APIKey}
	if x.status, x.raw, _ = requestAs(t, s, x.apiKey, http.MethodPost, x.path, x.contentType, x.body, x.key); x.status != 201 {
		t.Fatalf("POST /v1/avatars = %d %s, want 201", x.status, x.raw)
	}
	done = append(done, x)
	// A file of recipients uploaded to the draft.
	up := exchange{route: "POST /v1/campaigns/{id}/recipients", path: "/v1/campaigns/" + cmp + "/recipients",
		body: "platform_handle\nsim:no_answer\n", contentType: "text/csv", key: ident.New("idem"), apiKey: s.APIKey}
	if up.status, up.raw, _ = requestAs(t, s, up.apiKey, http.MethodPost, up.path, up.contentType, up.body, up.key); up.status != 200 {
		t.Fatalf("POST %s = %d %s, want 200", up.path, up.status, up.raw)
	}
	done = append(done, up)
	// A window open one minute a day: the steps meet no dial and no completion.
	for _, step := range []string{"start", "pause", "resume", "cancel"} {
		post("POST /v1/campaigns/{id}/"+step, "/v1/campaigns/"+cmp+"/"+step, "", 200)
	}
	if live := get("/v1/sessions/" + ses); live["status"] == "ended" {
		t.Fatalf("session %s ended before the replays", ses)
	}
	// A call.ended to redeliver: another session, ended.
	status, raw, _ := send(s.APIKey, http.MethodPost, "/v1/sessions", `{"platform_handle":"+15550107102","media":"audio"}`, "")
	var second struct {
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal(raw, &second); status != 201 {
		t.Fatalf("second session = %d %s", status, raw)
	}
	if status, raw, _ := send(s.APIKey, http.MethodDelete, "/v1/sessions/"+second.SessionID, "", ""); status != 200 {
		t.Fatalf("DELETE second session = %d %s", status, raw)
	}
	evts := get("/v1/events?type=call.ended&limit=1")["data"].([]any)
	if len(evts) == 0 {
		t.Fatal("no call.ended event to redeliver")
	}
	post("POST /v1/events/{id}/redeliver", "/v1/events/"+evts[0].(map[string]any)["id"].(string)+"/redeliver", "", 202)
	// An inbound call on a customer_decides line, accepted through the API.
	if status, raw, _ := send(s.APIKey, http.MethodPatch, "/v1/lines/"+s.Lines[harness.Line1].ID, `{"inbound_mode":"customer_decides","decision_timeout_seconds":20}`, ""); status != 200 {
		t.Fatalf("PATCH line = %d %s", status, raw)
	}
	if status, raw, err := s.Request(http.MethodPost, "/sim/calls", map[string]any{"from": "+15551230000", "to": harness.Line1, "media": "audio"}, ""); err != nil || status != 201 {
		t.Fatalf("POST /sim/calls = %d %s, %v", status, raw, err)
	}
	in := recv.WaitFor(t, callevent.TypeCallIncoming, 10*time.Second, nil)
	var incoming callevent.CallIncoming
	json.Unmarshal(in.Event.Data, &incoming)
	post("POST /v1/calls/{id}/answer", "/v1/calls/"+incoming.CallID+"/answer", `{"action":"accept"}`, 201)
	// A SIP trunk and a line on it (no SIP bridge here: LiveKit is left alone), and a
	// transfer, which a sim call refuses.
	trunk := post("POST /v1/sip_trunks", "/v1/sip_trunks", `{"name":"Provider","inbound":{"allowed_addresses":["203.0.113.0/24"]}}`, 201)["id"].(string)
	post("POST /v1/lines", "/v1/lines", `{"platform":"sip","handle":"+15550107150","sip_trunk_id":"`+trunk+`"}`, 201)
	post("POST /v1/calls/{id}/transfer", "/v1/calls/"+incoming.CallID+"/transfer", `{"to":"+15550107151"}`, 409)

	// Every POST route that takes a key was sent.
	sent := map[string]bool{}
	for _, x := range done {
		sent[x.route] = true
	}
	for _, r := range s.API.Routes() {
		if r.Method == http.MethodPost && !r.Public && !sent["POST "+r.Pattern] {
			t.Errorf("POST %s: no request in this test; add one, so its idempotency record is checked", r.Pattern)
		}
	}

	omitted := map[string][]string{ // route -> secret fields its answer carries
		"POST /v1/assistants":                           {"tool_secret"},
		"POST /v1/assistants/{id}/duplicate":            {"tool_secret"},
		"POST /v1/assistants/{id}/rotate_tool_secret":   {"tool_secret"},
		"POST /v1/api_keys":                             {"key"},
		"POST /v1/webhook_endpoints":                    {"secret"},
		"POST /v1/webhook_endpoints/{id}/rotate_secret": {"secret"},
		"POST /v1/sessions":                             {"participant_token"},
		"POST /v1/sessions/{id}/tokens":                 {"participant_token"},
		"POST /v1/calls/{id}/answer":                    {"participant_token"},
		"POST /v1/sip_trunks":                           {"inbound.password"},
	}
	records, secretsSeen, leaked := 0, 0, 0
	for _, x := range done {
		var first map[string]any
		json.Unmarshal(x.raw, &first)
		var secrets []string
		for _, m := range secretText.FindAllString(string(x.raw), -1) {
			secrets = append(secrets, m)
		}
		for _, f := range omitted[x.route] {
			obj, field := first, f
			if top, sub, nested := strings.Cut(f, "."); nested {
				obj, _ = first[top].(map[string]any)
				field = sub
			}
			v, _ := obj[field].(string)
			if v == "" {
				t.Errorf("%s: the first answer has no %s: %s", x.route, f, x.raw)
				continue
			}
			if !secretText.MatchString(v) {
				secrets = append(secrets, v) // not shaped like a key: checked by its value
			}
		}
		secretsSeen += len(secrets)
		rec, inserted, err := s.Store.BeginIdempotent(ctx, idempotency.Record{AccountID: s.AccountID, Key: x.key,
			RequestHash: "probe", CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}, time.Now())
		if err != nil || inserted || rec.Status != x.status {
			t.Fatalf("%s: stored record = %d (inserted %v, %v), want the answer's %d", x.route, rec.Status, inserted, err, x.status)
		}
		records++
		for _, sec := range secrets {
			if strings.Contains(string(rec.Body), sec) {
				leaked++
				t.Errorf("%s: the idempotency record holds a secret of the answer (%.12s...): %s", x.route, sec, rec.Body)
			}
		}
		if m := secretText.FindString(string(rec.Body)); m != "" {
			t.Errorf("%s: the idempotency record holds something shaped like a secret (%.12s...)", x.route, m)
		}

		// The replay: the same key and body, the same object; secrets left out or fresh.
		ctype := x.contentType
		if ctype == "" {
			ctype = "application/json"
		}
		status, raw, h := requestAs(t, s, x.apiKey, http.MethodPost, x.path, ctype, x.body, x.key)
		var again map[string]any
		json.Unmarshal(raw, &again)
		if status != x.status || h.Get("Idempotent-Replayed") != "true" || again["id"] != first["id"] || again["session_id"] != first["session_id"] {
			t.Errorf("%s: replay = %d (replayed %q) %s, want %d and the first object", x.route, status, h.Get("Idempotent-Replayed"), raw, x.status)
		}
		switch x.route {
		case "POST /v1/api_keys", "POST /v1/webhook_endpoints", "POST /v1/webhook_endpoints/{id}/rotate_secret",
			"POST /v1/assistants", "POST /v1/assistants/{id}/duplicate", "POST /v1/assistants/{id}/rotate_tool_secret":
			f := omitted[x.route][0]
			if _, has := again[f]; has {
				t.Errorf("%s: the replay shows %s, shown only in the first answer", x.route, f)
			}
		case "POST /v1/sip_trunks":
			if in, _ := again["inbound"].(map[string]any); in == nil || in["password"] != nil || in["password_set"] != true {
				t.Errorf("%s: the replay's inbound %v, want password_set and no password (shown only in the first answer)", x.route, again["inbound"])
			}
		case "POST /v1/sessions", "POST /v1/sessions/{id}/tokens":
			tok, _ := again["participant_token"].(string)
			if tok == "" || tok == first["participant_token"] || again["participant_identity"] == first["participant_identity"] {
				t.Errorf("%s: replay token %.16q identity %v, want a fresh token of its own identity", x.route, tok, again["participant_identity"])
			}
			if again["watch_only"] != first["watch_only"] || again["participant_name"] != first["participant_name"] {
				t.Errorf("%s: replay watch_only %v name %v, want the first's %v %v", x.route, again["watch_only"], again["participant_name"], first["watch_only"], first["participant_name"])
			}
		case "POST /v1/calls/{id}/answer":
			if again["participant_token"] != first["participant_token"] {
				t.Errorf("%s: replay token differs from the call's", x.route)
			}
		default:
			if len(secrets) > 0 {
				t.Errorf("%s: the answer carries %d secret(s) the route does not leave out of its record", x.route, len(secrets))
			}
		}
	}
	fmt.Printf("idempotency records: %d POST routes, %d records read, %d secrets in their answers, %d of them in the records (goal 0)\n",
		len(sent), records, secretsSeen, leaked)

	// The session ended since: its create's replay still answers with a token (of a
	// room that is gone), as the first answer did.
	if status, raw, _ := send(s.APIKey, http.MethodDelete, "/v1/sessions/"+ses, "", ""); status != 200 {
		t.Fatalf("DELETE session = %d %s", status, raw)
	}
	for _, x := range done {
		if x.route == "POST /v1/sessions" {
			status, raw, _ := send(s.APIKey, http.MethodPost, x.path, x.body, x.key)
			var again map[string]any
			json.Unmarshal(raw, &again)
			if tok, _ := again["participant_token"].(string); status != 201 || tok == "" || again["status"] == "ended" {
				t.Errorf("replay of an ended session's create = %d %s, want 201 with a token and the first answer's status", status, raw)
			}
		}
	}

	// A replay is the first API key's only.
	accts := &account.Service{Store: s.Store, Now: time.Now}
	liveKey, _, err := accts.AddKey(ctx, s.AccountID, true)
	if err != nil {
		t.Fatal(err)
	}
	otherTestKey, _, err := accts.AddKey(ctx, s.AccountID, false)
	if err != nil {
		t.Fatal(err)
	}
	idem := ident.New("idem")
	status, raw, _ = send(liveKey, http.MethodPost, "/v1/api_keys", "", idem)
	if status != 201 || !strings.Contains(string(raw), `"key":"sk_live_`) {
		t.Fatalf("live key's POST /v1/api_keys = %d %s", status, raw)
	}
	for name, key := range map[string]string{"an sk_test_ key": s.APIKey, "another sk_test_ key": otherTestKey} {
		status, raw, h := send(key, http.MethodPost, "/v1/api_keys", "", idem)
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		json.Unmarshal(raw, &e)
		if status != 422 || e.Error.Code != "idempotency_key_reused" || h.Get("Idempotent-Replayed") != "" || secretText.Match(raw) {
			t.Errorf("%s replaying the live key's Idempotency-Key = %d %s, want 422 idempotency_key_reused", name, status, raw)
		}
	}
	if status, raw, h := send(liveKey, http.MethodPost, "/v1/api_keys", "", idem); status != 201 || h.Get("Idempotent-Replayed") != "true" || secretText.Match(raw) {
		t.Errorf("the live key's own replay = %d %s, want 201 replayed without the key", status, raw)
	}
}
