package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/events/webhook"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/decision"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

// hookEnv is the API with the webhook routes, a delivery worker on the same store and a
// customer receiver on 127.0.0.1.
type hookEnv struct {
	*env
	worker   *delivery.Worker
	other    string // another account's key
	mu       sync.Mutex
	received []*http.Request
	bodies   [][]byte
}

func newHookEnv(t *testing.T) *hookEnv {
	t.Helper()
	return newHookEnvWith(t, egress.Policy{AllowLoopback: true})
}

// newHookEnvWith is newHookEnv whose endpoint rules and deliveries apply dest.
func newHookEnvWith(t *testing.T, dest egress.Policy) *hookEnv {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "api.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	eps := &webhookendpoint.Service{Store: s, Destinations: dest}
	d := &delivery.Deliverer{Endpoints: eps, Client: delivery.NewClient(dest)}
	w := &delivery.Worker{Outbox: s, Log: s, Subscribers: eps, Deliverer: d, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	hooks := &httpapi.Webhooks{Endpoints: eps, Events: s, Redeliver: &delivery.OutboxRedeliverer{Outbox: s}}
	logs := &syncBuffer{}
	api, err := httpapi.New(s, s, slices.Concat(coreRoutes(t, s, nil, nil), hooks.Routes(), (&httpapi.CallAnswers{Decisions: s}).Routes()),
		httpapi.WithLog(slog.New(slog.NewJSONHandler(logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	accts := &account.Service{Store: s, Now: time.Now}
	a, key, err := accts.Create(ctx, "Acme", false)
	if err != nil {
		t.Fatal(err)
	}
	_, other, err := accts.Create(ctx, "Other", false)
	if err != nil {
		t.Fatal(err)
	}
	return &hookEnv{env: &env{t: t, srv: srv, store: s, key: key, acctID: a.ID, logs: logs}, worker: w, other: other}
}

func (h *hookEnv) receiver() string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.received = append(h.received, r)
		h.bodies = append(h.bodies, body)
		h.mu.Unlock()
	}))
	h.t.Cleanup(srv.Close)
	return srv.URL + "/hooks"
}

func (h *hookEnv) emit(typ string) callevent.Event {
	h.t.Helper()
	evt := callevent.Event{ID: ident.New("evt"), AccountID: h.acctID, Type: typ, CreatedAt: time.Now().UTC(),
		Data: json.RawMessage(`{"call_id":"call_1"}`)}
	ctx := context.Background()
	tx, err := h.store.DB().BeginTx(ctx, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := sqlite.InsertEvents(ctx, tx, []callevent.Event{evt}); err != nil {
		h.t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		h.t.Fatal(err)
	}
	return evt
}

func (h *hookEnv) deliver() {
	h.t.Helper()
	if _, err := h.worker.RunOnce(context.Background()); err != nil {
		h.t.Fatal(err)
	}
}

// last returns the last request the receiver got.
func (h *hookEnv) last() (http.Header, []byte, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.received) == 0 {
		return nil, nil, 0
	}
	return h.received[len(h.received)-1].Header, h.bodies[len(h.bodies)-1], len(h.received)
}

func TestWebhookEndpointsAndEventsOverHTTP(t *testing.T) {
	h := newHookEnv(t)
	url := h.receiver()
	r := h.do("POST", "/v1/webhook_endpoints", `{"url":"`+url+`","events":["call.ended"],"description":"prod"}`)
	if r.status != 201 {
		t.Fatalf("create = %d %s", r.status, r.raw)
	}
	id, _ := r.body["id"].(string)
	secret, _ := r.body["secret"].(string)
	if !ident.Valid("whep", id) || !strings.HasPrefix(secret, "whsec_") || r.body["object"] != "webhook_endpoint" ||
		r.body["status"] != "enabled" || r.body["url"] != url || r.body["description"] != "prod" {
		t.Fatalf("create body = %s", r.raw)
	}
	if evs := r.body["events"].([]any); len(evs) != 1 || evs[0] != "call.ended" {
		t.Errorf("events = %v", evs)
	}
	r = h.do("GET", "/v1/webhook_endpoints/"+id, "")
	if r.status != 200 || r.body["id"] != id {
		t.Fatalf("get = %d %s", r.status, r.raw)
	}
	if _, shown := r.body["secret"]; shown {
		t.Errorf("GET shows the secret: %s", r.raw)
	}
	if r := h.do("GET", "/v1/webhook_endpoints", ""); r.status != 200 || len(r.body["data"].([]any)) != 1 || r.body["has_more"] != false {
		t.Errorf("list = %d %s", r.status, r.raw)
	}

	// An event of the subscribed type arrives signed; another type does not.
	evt := h.emit(callevent.TypeCallEnded)
	h.emit(callevent.TypeCallAnswered)
	h.deliver()
	hdr, body, n := h.last()
	if n != 1 {
		t.Fatalf("receiver got %d requests, want 1", n)
	}
	if err := webhook.Verify(secret, hdr, body); err != nil {
		t.Errorf("Verify = %v", err)
	}
	r = h.do("GET", "/v1/events?type=call.ended", "")
	if r.status != 200 || len(r.body["data"].([]any)) != 1 || r.body["data"].([]any)[0].(map[string]any)["id"] != evt.ID {
		t.Fatalf("list events = %d %s", r.status, r.raw)
	}
	if r := h.do("GET", "/v1/events", ""); len(r.body["data"].([]any)) != 2 {
		t.Errorf("list all events = %s", r.raw)
	}
	r = h.do("GET", "/v1/events/"+evt.ID, "")
	atts, _ := r.body["attempts"].([]any)
	if r.status != 200 || r.body["type"] != "call.ended" || len(atts) != 1 {
		t.Fatalf("get event = %d %s", r.status, r.raw)
	}
	if a := atts[0].(map[string]any); a["outcome"] != "succeeded" || a["status_code"] != 200.0 || a["endpoint_id"] != id || a["attempt"] != 1.0 {
		t.Errorf("attempt = %v", a)
	}

	// Redeliver: same webhook-id, a second attempt logged.
	r = h.do("POST", "/v1/events/"+evt.ID+"/redeliver", "")
	if r.status != 202 {
		t.Fatalf("redeliver = %d %s", r.status, r.raw)
	}
	h.deliver()
	hdr2, _, n := h.last()
	if n != 2 || hdr2.Get(webhook.HeaderID) != evt.ID || hdr.Get(webhook.HeaderID) != evt.ID {
		t.Errorf("redelivery: %d requests, ids %q %q; want 2 and %s", n, hdr.Get(webhook.HeaderID), hdr2.Get(webhook.HeaderID), evt.ID)
	}
	if r := h.do("GET", "/v1/events/"+evt.ID, ""); len(r.body["attempts"].([]any)) != 2 {
		t.Errorf("attempts after redeliver = %s", r.raw)
	}

	// Rotation: the new secret is shown once; both sign for now.
	r = h.do("POST", "/v1/webhook_endpoints/"+id+"/rotate_secret", "")
	newSecret, _ := r.body["secret"].(string)
	if r.status != 200 || newSecret == secret || !strings.HasPrefix(newSecret, "whsec_") || r.body["previous_secret_expires_at"] == nil {
		t.Fatalf("rotate = %d %s", r.status, r.raw)
	}
	h.do("POST", "/v1/events/"+evt.ID+"/redeliver", `{"endpoint_id":"`+id+`"}`)
	h.deliver()
	hdr3, body3, _ := h.last()
	for _, s := range []string{secret, newSecret} {
		if err := webhook.Verify(s, hdr3, body3); err != nil {
			t.Errorf("after rotation, Verify with one of the two secrets = %v", err)
		}
	}

	// Another account sees none of it.
	for _, path := range []string{"/v1/webhook_endpoints/" + id, "/v1/events/" + evt.ID} {
		if r := h.do("GET", path, "", "Authorization", "Bearer "+h.other); r.status != 404 || errCode(r) != "resource_not_found" {
			t.Errorf("other account GET %s = %d %s", path, r.status, r.raw)
		}
	}
	if r := h.do("GET", "/v1/events", "", "Authorization", "Bearer "+h.other); len(r.body["data"].([]any)) != 0 {
		t.Errorf("other account lists events: %s", r.raw)
	}

	// Disabled endpoints are not redelivered to; enabling again works.
	if r := h.do("PATCH", "/v1/webhook_endpoints/"+id, `{"status":"disabled"}`); r.status != 200 || r.body["status"] != "disabled" || r.body["disabled_reason"] != "customer" {
		t.Errorf("disable = %d %s", r.status, r.raw)
	}
	if r := h.do("POST", "/v1/events/"+evt.ID+"/redeliver", ""); r.status != 409 || errCode(r) != "no_subscribed_endpoint" {
		t.Errorf("redeliver with no enabled endpoint = %d %s", r.status, r.raw)
	}
	if r := h.do("PATCH", "/v1/webhook_endpoints/"+id, `{"status":"enabled","events":["*"]}`); r.status != 200 || r.body["disabled_reason"] != nil || r.body["events"].([]any)[0] != "*" {
		t.Errorf("enable = %d %s", r.status, r.raw)
	}

	r = h.do("DELETE", "/v1/webhook_endpoints/"+id, "")
	if r.status != 200 || r.body["deleted"] != true || r.body["id"] != id {
		t.Errorf("delete = %d %s", r.status, r.raw)
	}
	if r := h.do("GET", "/v1/webhook_endpoints/"+id, ""); r.status != 404 {
		t.Errorf("get after delete = %d", r.status)
	}
}

func TestWebhookEndpointBadInput(t *testing.T) {
	h := newHookEnv(t)
	for _, tc := range []struct {
		name, method, path, body, code, param string
	}{
		{"no url", "POST", "/v1/webhook_endpoints", `{}`, "parameter_missing", "url"},
		{"ftp url", "POST", "/v1/webhook_endpoints", `{"url":"ftp://example.test/"}`, "parameter_invalid", "url"},
		{"relative url", "POST", "/v1/webhook_endpoints", `{"url":"/hooks"}`, "parameter_invalid", "url"},
		{"credentials in url", "POST", "/v1/webhook_endpoints", `{"url":"https://u:p@example.test/"}`, "parameter_invalid", "url"},
		{"unknown event", "POST", "/v1/webhook_endpoints", `{"url":"https://example.test/","events":["call.bogus"]}`, "parameter_invalid", "events"},
		{"empty events", "POST", "/v1/webhook_endpoints", `{"url":"https://example.test/","events":[]}`, "parameter_invalid", "events"},
		{"star and more", "POST", "/v1/webhook_endpoints", `{"url":"https://example.test/","events":["*","call.ended"]}`, "parameter_invalid", "events"},
		{"status on create", "POST", "/v1/webhook_endpoints", `{"url":"https://example.test/","status":"disabled"}`, "parameter_unknown", "status"},
		{"unknown field", "POST", "/v1/webhook_endpoints", `{"url":"https://example.test/","secret":"whsec_x"}`, "parameter_unknown", "secret"},
		{"bad status", "PATCH", "/v1/webhook_endpoints/" + ident.New("whep"), `{"status":"paused"}`, "parameter_invalid", "status"},
		{"missing endpoint", "GET", "/v1/webhook_endpoints/" + ident.New("whep"), ``, "resource_not_found", "id"},
		{"missing event", "GET", "/v1/events/" + ident.New("evt"), ``, "resource_not_found", "id"},
		{"unknown type filter", "GET", "/v1/events?type=call.bogus", ``, "parameter_invalid", "type"},
		{"bad cursor", "GET", "/v1/events?starting_after=whep_1", ``, "parameter_invalid", "starting_after"},
		{"redeliver missing", "POST", "/v1/events/" + ident.New("evt") + "/redeliver", ``, "resource_not_found", "id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(tc.method, tc.path, tc.body)
			e, _ := r.body["error"].(map[string]any)
			if errCode(r) != tc.code || e["param"] != tc.param {
				t.Errorf("%s %s %s = %d %s, want %s (%s)", tc.method, tc.path, tc.body, r.status, r.raw, tc.code, tc.param)
			}
		})
	}
	if r := h.do("GET", "/v1/webhook_endpoints", ""); len(r.body["data"].([]any)) != 0 {
		t.Errorf("bad input created endpoints: %s", r.raw)
	}
}

// TestWebhookEndpointLimit: the 17th endpoint of an account is 409
// webhook_endpoint_limit_reached, its own code (not a generic conflict), and creates nothing.
func TestWebhookEndpointLimit(t *testing.T) {
	h := newHookEnv(t)
	for i := range webhookendpoint.MaxPerAccount {
		if r := h.do("POST", "/v1/webhook_endpoints", fmt.Sprintf(`{"url":"https://example.test/%d"}`, i)); r.status != 201 {
			t.Fatalf("create %d = %d %s", i, r.status, r.raw)
		}
	}
	r := h.do("POST", "/v1/webhook_endpoints", `{"url":"https://example.test/over"}`)
	if r.status != 409 || errCode(r) != "webhook_endpoint_limit_reached" {
		t.Errorf("create past the limit = %d %s, want 409 webhook_endpoint_limit_reached", r.status, r.raw)
	}
	if r := h.do("GET", "/v1/webhook_endpoints?limit=100", ""); len(r.body["data"].([]any)) != webhookendpoint.MaxPerAccount {
		t.Errorf("endpoints after the refused create: got %d, want %d", len(r.body["data"].([]any)), webhookendpoint.MaxPerAccount)
	}
}

// customer_decides over HTTP: call.incoming is acknowledged without an answer, then
// POST /v1/calls/{id}/answer decides; a different second answer is 409.
func TestAnswerCallOverHTTP(t *testing.T) {
	h := newHookEnv(t)
	url := h.receiver() // acknowledges with 200 and no body
	if r := h.do("POST", "/v1/webhook_endpoints", `{"url":"`+url+`","events":["call.incoming"]}`); r.status != 201 {
		t.Fatalf("create endpoint = %d %s", r.status, r.raw)
	}
	eps := &webhookendpoint.Service{Store: h.store, Destinations: egress.Policy{AllowLoopback: true}}
	asker := &decision.Asker{Store: h.store, Events: h.store, Subscribers: eps, Deliverer: &delivery.Deliverer{Endpoints: eps, Client: delivery.NewClient(egress.Policy{AllowLoopback: true})}}
	callID := ident.New("call")
	in := decision.Incoming{AccountID: h.acctID, CallID: callID, LineID: ident.New("line"), From: "sim:bob", To: "+15550100001",
		Media: "video", Timeout: 10 * time.Second, Session: callevent.Session{SessionID: ident.New("ses"), CallID: callID,
			RTCURL: "ws://127.0.0.1:7880", ParticipantToken: "jwt", ExpiresAt: time.Now().Add(10 * time.Minute)}}
	if rec, err := asker.Post(context.Background(), in, 5*time.Second); err != nil || rec.Decision != "" {
		t.Fatalf("Post = %s, %v; want the call still undecided after an acknowledgement without an answer", rec.Decision, err)
	}
	if _, _, n := h.last(); n != 1 {
		t.Fatalf("call.incoming deliveries = %d, want 1", n)
	}
	if r := h.do("POST", "/v1/calls/"+ident.New("call")+"/answer", `{"action":"accept"}`); r.status != 404 {
		t.Errorf("answer unknown call = %d %s", r.status, r.raw)
	}
	if r := h.do("POST", "/v1/calls/"+callID+"/answer", `{"action":"accept"}`, "Authorization", "Bearer "+h.other); r.status != 404 {
		t.Errorf("answer from another account = %d %s", r.status, r.raw)
	}
	if r := h.do("POST", "/v1/calls/"+callID+"/answer", `{}`); r.status != 400 || errCode(r) != "parameter_missing" {
		t.Errorf("answer without action = %d %s", r.status, r.raw)
	}
	r := h.do("POST", "/v1/calls/"+callID+"/answer", `{"action":"accept"}`)
	if r.status != 201 || r.body["participant_token"] != "jwt" || r.body["call_id"] != callID || r.body["rtc_url"] != "ws://127.0.0.1:7880" {
		t.Fatalf("accept = %d %s", r.status, r.raw)
	}
	if rec, err := asker.Get(context.Background(), callID); err != nil || rec.Decision != "accept" || rec.Source != "api" {
		t.Errorf("recorded decision %s from %s (%v), want accept from api", rec.Decision, rec.Source, err)
	}
	if r := h.do("POST", "/v1/calls/"+callID+"/answer", `{"action":"decline"}`); r.status != 409 || errCode(r) != "call_already_answered" {
		t.Errorf("second, different answer = %d %s", r.status, r.raw)
	}
	if r := h.do("POST", "/v1/calls/"+callID+"/answer", `{"action":"accept"}`); r.status != 201 {
		t.Errorf("repeated accept = %d %s", r.status, r.raw)
	}
	// call.incoming is in the event log with its attempt.
	r = h.do("GET", "/v1/events?type=call.incoming", "")
	if len(r.body["data"].([]any)) != 1 {
		t.Fatalf("events = %s", r.raw)
	}
	id := r.body["data"].([]any)[0].(map[string]any)["id"].(string)
	if r := h.do("POST", "/v1/events/"+id+"/redeliver", ""); r.status != 409 {
		t.Errorf("redeliver call.incoming = %d %s", r.status, r.raw)
	}
}

// TestWebhookSSRFOverHTTP: with the production policy, an internal URL is refused at
// create and update with 400 url_not_allowed, a live key cannot register plain http, and
// an endpoint that points inside anyway (stored before the check, or a name that
// resolves inside) gets a blocked_destination attempt in GET /v1/events/{id}, with no
// status code and no duration, while the receiver sees nothing.
func TestWebhookSSRFOverHTTP(t *testing.T) {
	h := newHookEnvWith(t, egress.Policy{})
	inside := h.receiver() // http://127.0.0.1:port/hooks
	for _, u := range []string{inside, "http://169.254.169.254/latest/meta-data/", "http://10.0.0.5/hooks",
		"http://[::ffff:127.0.0.1]:8080/", "http://100.64.0.1/", "http://[fd00::1]/", "http://localhost:8080/"} {
		r := h.do("POST", "/v1/webhook_endpoints", `{"url":"`+u+`"}`)
		if r.status != 400 || r.body["error"].(map[string]any)["code"] != "url_not_allowed" {
			t.Errorf("create %s = %d %s, want 400 url_not_allowed", u, r.status, r.raw)
		}
	}
	r := h.do("POST", "/v1/webhook_endpoints", `{"url":"https://hooks.example.com/in"}`)
	if r.status != 201 {
		t.Fatalf("create public = %d %s", r.status, r.raw)
	}
	id, _ := r.body["id"].(string)
	if r := h.do("PATCH", "/v1/webhook_endpoints/"+id, `{"url":"http://169.254.169.254/"}`); r.status != 400 ||
		r.body["error"].(map[string]any)["code"] != "url_not_allowed" {
		t.Errorf("update to metadata = %d %s, want 400 url_not_allowed", r.status, r.raw)
	}

	live, _, err := account.NewKey(h.acctID, true, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := h.store.AddKey(context.Background(), account.KeyFromText(h.acctID, live, time.Now())); err != nil {
		t.Fatal(err)
	}
	// Plain http is refused whatever the key's mode: a test key's endpoint receives the
	// account's live events too (call.incoming with its room token).
	for name, key := range map[string]string{"live key": live, "test key": h.key} {
		r = h.do("POST", "/v1/webhook_endpoints", `{"url":"http://hooks.example.com/in"}`, "Authorization", "Bearer "+key)
		if r.status != 400 || r.body["error"].(map[string]any)["code"] != "url_not_allowed" {
			t.Errorf("%s, http URL = %d %s, want 400 url_not_allowed", name, r.status, r.raw)
		}
		r = h.do("PATCH", "/v1/webhook_endpoints/"+id, `{"url":"http://hooks.example.com/in"}`, "Authorization", "Bearer "+key)
		if r.status != 400 || r.body["error"].(map[string]any)["code"] != "url_not_allowed" {
			t.Errorf("%s, update to an http URL = %d %s, want 400 url_not_allowed", name, r.status, r.raw)
		}
	}

	// An endpoint stored pointing inside, as one made before this check was.
	ctx := context.Background()
	now := time.Now().UTC()
	ep := webhookendpoint.Endpoint{ID: ident.New("whep"), AccountID: h.acctID, URL: inside, Status: webhookendpoint.StatusEnabled,
		Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", Events: []string{callevent.TypeCallEnded}, Revision: 1, CreatedAt: now, UpdatedAt: now}
	if err := h.store.CreateWebhookEndpoint(ctx, ep, webhookendpoint.MaxPerAccount); err != nil {
		t.Fatal(err)
	}
	evt := h.emit(callevent.TypeCallEnded)
	h.deliver()
	if _, _, n := h.last(); n != 0 {
		t.Errorf("receiver got %d requests, want 0", n)
	}
	r = h.do("GET", "/v1/events/"+evt.ID, "")
	atts, _ := r.body["attempts"].([]any)
	var blocked map[string]any
	for _, a := range atts {
		if a := a.(map[string]any); a["endpoint_id"] == ep.ID {
			blocked = a
		}
	}
	if blocked == nil {
		t.Fatalf("get event = %d %s: no attempt to %s", r.status, r.raw, ep.ID)
	}
	if blocked["error"] != "blocked_destination" || blocked["status_code"] != nil || blocked["duration_ms"] != float64(0) ||
		blocked["outcome"] != "failed" {
		t.Errorf("attempt = %v, want error blocked_destination, status_code null, duration_ms 0, outcome failed", blocked)
	}
}

// TestSecretNotKeptInIdempotencyRecord: create and rotate_secret show the secret once;
// the idempotency table never holds it, and a replay answers the same object without it.
func TestSecretNotKeptInIdempotencyRecord(t *testing.T) {
	h := newHookEnv(t)
	url := h.receiver()
	body := `{"url":"` + url + `"}`
	first := h.do("POST", "/v1/webhook_endpoints", body, "Idempotency-Key", "create-1")
	secret, _ := first.body["secret"].(string)
	if first.status != http.StatusCreated || !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("create = %d %s", first.status, first.raw)
	}
	id := first.body["id"].(string)
	rot := h.do("POST", "/v1/webhook_endpoints/"+id+"/rotate_secret", "", "Idempotency-Key", "rotate-1")
	rotated, _ := rot.body["secret"].(string)
	if rot.status != http.StatusOK || !strings.HasPrefix(rotated, "whsec_") {
		t.Fatalf("rotate = %d %s", rot.status, rot.raw)
	}
	rows, err := h.store.DB().Query(`SELECT key, body FROM idempotency`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var stored []byte
		rows.Scan(&key, &stored)
		if strings.Contains(string(stored), secret) || strings.Contains(string(stored), rotated) || strings.Contains(string(stored), "whsec_") {
			t.Errorf("idempotency record %s holds a secret: %s", key, stored)
		}
	}
	for _, tc := range []struct{ path, key string }{{"/v1/webhook_endpoints", "create-1"}, {"/v1/webhook_endpoints/" + id + "/rotate_secret", "rotate-1"}} {
		b := body
		if tc.key == "rotate-1" {
			b = ""
		}
		replay := h.do("POST", tc.path, b, "Idempotency-Key", tc.key)
		if _, has := replay.body["secret"]; has || replay.header.Get("Idempotent-Replayed") != "true" || replay.body["id"] != id {
			t.Errorf("replay of %s = %d %s; want the same endpoint, replayed, without secret", tc.path, replay.status, replay.raw)
		}
	}
}

// TestRedeliveryCapped: an event is redelivered at most delivery.MaxRedeliveries times;
// the next request is 409 event_not_redeliverable and queues nothing, so the event's
// attempts stay bounded and redeliver is no amplifier of signed POSTs.
func TestRedeliveryCapped(t *testing.T) {
	h := newHookEnv(t)
	if r := h.do("POST", "/v1/webhook_endpoints", `{"url":"`+h.receiver()+`"}`); r.status != 201 {
		t.Fatalf("create = %d %s", r.status, r.raw)
	}
	evt := h.emit(callevent.TypeCallEnded)
	h.deliver()
	for i := range delivery.MaxRedeliveries {
		if r := h.do("POST", "/v1/events/"+evt.ID+"/redeliver", ""); r.status != 202 {
			t.Fatalf("redeliver %d = %d %s", i+1, r.status, r.raw)
		}
	}
	h.deliver()
	r := h.do("POST", "/v1/events/"+evt.ID+"/redeliver", "")
	if r.status != 409 || errCode(r) != "event_not_redeliverable" {
		t.Errorf("redeliver %d = %d %s, want 409 event_not_redeliverable", delivery.MaxRedeliveries+1, r.status, r.raw)
	}
	h.deliver()
	if _, _, n := h.last(); n != 1+delivery.MaxRedeliveries {
		t.Errorf("receiver got %d requests, want %d", n, 1+delivery.MaxRedeliveries)
	}

	// GET /v1/events/{id} pages the attempts: 11 in pages of 5, oldest first.
	var seen []string
	after := ""
	for page := 1; ; page++ {
		r := h.do("GET", "/v1/events/"+evt.ID+"?attempts_limit=5"+after, "")
		if r.status != 200 {
			t.Fatalf("page %d = %d %s", page, r.status, r.raw)
		}
		as, _ := r.body["attempts"].([]any)
		more, _ := r.body["has_more_attempts"].(bool)
		if len(as) > 5 || len(as) == 0 || page > 3 {
			t.Fatalf("page %d: %d attempts, has_more_attempts %v", page, len(as), more)
		}
		for _, a := range as {
			seen = append(seen, a.(map[string]any)["id"].(string))
		}
		if !more {
			break
		}
		after = "&attempts_starting_after=" + seen[len(seen)-1]
	}
	if len(seen) != 1+delivery.MaxRedeliveries || !slices.IsSorted(seen) || len(slices.Compact(slices.Clone(seen))) != len(seen) {
		t.Errorf("paged attempts = %v, want %d distinct, oldest first", seen, 1+delivery.MaxRedeliveries)
	}
	if r := h.do("GET", "/v1/events/"+evt.ID, ""); len(r.body["attempts"].([]any)) != 1+delivery.MaxRedeliveries || r.body["has_more_attempts"] != false {
		t.Errorf("default page = %s, want all %d attempts (page size 20), has_more_attempts false", r.raw, 1+delivery.MaxRedeliveries)
	}
	for _, q := range []string{"attempts_limit=0", "attempts_limit=101", "attempts_starting_after=evt_1", "limit=5"} {
		if r := h.do("GET", "/v1/events/"+evt.ID+"?"+q, ""); r.status != 400 {
			t.Errorf("GET ?%s = %d, want 400", q, r.status)
		}
	}
}
