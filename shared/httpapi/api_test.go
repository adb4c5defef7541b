package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

type env struct {
	t      *testing.T
	srv    *httptest.Server
	store  *sqlite.Store
	key    string
	acctID string
	lineID string
	logs   *syncBuffer
}

// syncBuffer is a log sink the server's goroutines can share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// coreRoutes are the assistant, line and API key routes on s (voices: hosted voices;
// models: the models offered, LLM_MODELS; vision: those that accept images,
// LLM_VISION_MODELS).
func coreRoutes(tb testing.TB, s *sqlite.Store, voices, models []string, vision ...string) []httpapi.Route {
	return coreRoutesIn(tb, s, voices, models, vision, nil)
}

// coreRoutesIn is coreRoutes whose recogniser hears languages (STT_LANGUAGES; none for
// English only).
func coreRoutesIn(tb testing.TB, s *sqlite.Store, voices, models, vision, languages []string) []httpapi.Route {
	own := testAvatars(tb, s)
	return slices.Concat(
		(&httpapi.Assistants{Service: &assistant.Service{Store: s, HostedVoices: voices, Models: models, VisionModels: vision,
			Languages: languages, OwnAvatars: own, Now: time.Now}}).Routes(),
		(&httpapi.Avatars{Service: own}).Routes(),
		(&httpapi.Lines{Service: &line.Service{Store: s, Assistants: s, Now: time.Now}}).Routes(),
		(&httpapi.Keys{Accounts: s, Now: time.Now}).Routes())
}

func newEnv(t *testing.T, limiter *httpapi.Limiter) *env {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "api.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	logs := &syncBuffer{}
	api, err := httpapi.New(s, s, coreRoutes(t, s, nil, nil), httpapi.WithLimiter(limiter), httpapi.WithLog(slog.New(slog.NewJSONHandler(logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	a, key, err := (&account.Service{Store: s, Now: time.Now}).Create(ctx, "Acme", false)
	if err != nil {
		t.Fatal(err)
	}
	l, err := (&line.Service{Store: s, Assistants: s, Now: time.Now}).Provision(ctx, a.ID, sim.Name, "+15550100001", "Main")
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, srv: srv, store: s, key: key, acctID: a.ID, lineID: l.ID, logs: logs}
}

type resp struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (e *env) do(method, path, body string, headers ...string) resp {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := resp{status: res.StatusCode, header: res.Header, raw: string(raw)}
	json.Unmarshal(raw, &out.body)
	return out
}

func errCode(r resp) string {
	e, _ := r.body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func TestAssistantLifecycleOverHTTP(t *testing.T) {
	e := newEnv(t, nil)
	r := e.do("POST", "/v1/assistants", `{"name":"Ada","system_prompt":"Be kind.","greeting":"Hi, I'm Ada.","avatar_id":"ava_iris"}`)
	if r.status != 201 {
		t.Fatalf("create = %d %s", r.status, r.raw)
	}
	id := r.body["id"].(string)
	if r.body["active_version_id"] != nil || r.body["status"] != "active" || r.body["object"] != "assistant" {
		t.Errorf("create body = %s", r.raw)
	}
	if fr := r.body["draft"].(map[string]any)["framing"].(map[string]any); fr["shot"] != "medium" || fr["position"] != "center" {
		t.Errorf("default framing = %v", fr)
	}
	if r := e.do("POST", "/v1/lines/"+e.lineID+"/assign", `{"assistant_id":"`+id+`"}`); r.status != 409 || errCode(r) != "assistant_not_published" {
		t.Errorf("assign unpublished = %d %s", r.status, r.raw)
	}
	r = e.do("POST", "/v1/assistants/"+id+"/publish", "")
	if r.status != 201 {
		t.Fatalf("publish = %d %s", r.status, r.raw)
	}
	v1 := r.body["versions"].([]any)[0].(map[string]any)
	if v1["number"] != 1.0 || r.body["active_version_id"] != v1["id"] {
		t.Errorf("publish body = %s", r.raw)
	}
	r = e.do("PATCH", "/v1/assistants/"+id, `{"greeting":"Hello again.","framing":{"shot":"wide"}}`)
	if r.status != 200 || r.body["draft"].(map[string]any)["greeting"] != "Hello again." {
		t.Fatalf("patch = %d %s", r.status, r.raw)
	}
	if fr := r.body["draft"].(map[string]any)["framing"].(map[string]any); fr["shot"] != "wide" || fr["position"] != "center" {
		t.Errorf("partial framing patch = %v", fr)
	}
	r = e.do("POST", "/v1/assistants/"+id+"/publish", "{}")
	vs := r.body["versions"].([]any)
	if len(vs) != 2 || vs[0].(map[string]any)["greeting"] != "Hi, I'm Ada." || vs[1].(map[string]any)["greeting"] != "Hello again." {
		t.Fatalf("second publish versions = %v", vs)
	}
	r = e.do("POST", "/v1/assistants/"+id+"/activate", `{"version_id":"`+v1["id"].(string)+`"}`)
	if r.status != 200 || r.body["active_version_id"] != v1["id"] {
		t.Errorf("activate = %d %s", r.status, r.raw)
	}
	r = e.do("POST", "/v1/lines/"+e.lineID+"/assign", `{"assistant_id":"`+id+`"}`)
	if r.status != 200 || r.body["assistant_id"] != id {
		t.Fatalf("assign = %d %s", r.status, r.raw)
	}
	if r := e.do("POST", "/v1/assistants/"+id+"/archive", ""); r.status != 409 || errCode(r) != "assistant_in_use" {
		t.Errorf("archive in use = %d %s", r.status, r.raw)
	}
	r = e.do("POST", "/v1/assistants/"+id+"/duplicate", `{"name":"Ada 2"}`)
	if r.status != 201 || r.body["name"] != "Ada 2" || len(r.body["versions"].([]any)) != 0 || r.body["draft"].(map[string]any)["greeting"] != "Hello again." {
		t.Errorf("duplicate = %d %s", r.status, r.raw)
	}
	r = e.do("PATCH", "/v1/lines/"+e.lineID, `{"assistant_id":null,"inbound_mode":"customer_decides","decision_timeout_seconds":5}`)
	if r.status != 200 || r.body["assistant_id"] != nil || r.body["inbound_mode"] != "customer_decides" || r.body["decision_timeout_seconds"] != 5.0 {
		t.Fatalf("unassign = %d %s", r.status, r.raw)
	}
	if r := e.do("POST", "/v1/assistants/"+id+"/archive", ""); r.status != 200 || r.body["status"] != "archived" {
		t.Errorf("archive = %d %s", r.status, r.raw)
	}
	for _, tc := range []struct{ method, path, body string }{
		{"PATCH", "/v1/assistants/" + id, `{"name":"x"}`},
		{"POST", "/v1/assistants/" + id + "/publish", ""},
	} {
		if r := e.do(tc.method, tc.path, tc.body); r.status != 409 || errCode(r) != "assistant_archived" {
			t.Errorf("%s %s on archived = %d %s", tc.method, tc.path, r.status, r.raw)
		}
	}
	if r := e.do("GET", "/v1/assistants?status=archived", ""); len(r.body["data"].([]any)) != 1 {
		t.Errorf("list archived = %s", r.raw)
	}
	if r := e.do("GET", "/v1/avatars", ""); r.status != 200 || len(r.body["data"].([]any)) < 3 {
		t.Errorf("avatars = %d %s", r.status, r.raw)
	}
}

func TestBadInputIsRefusedAndWritesNothing(t *testing.T) {
	e := newEnv(t, nil)
	big := `{"name":"` + strings.Repeat("a", httpapi.MaxBodyBytes) + `"}`
	cases := []struct {
		name, method, path, body string
		headers                  []string
		status                   int
		code, param              string
	}{
		{"malformed json", "POST", "/v1/assistants", `{"name":`, nil, 400, "invalid_json", ""},
		{"not an object", "POST", "/v1/assistants", `["x"]`, nil, 400, "invalid_json", ""},
		{"wrong type", "POST", "/v1/assistants", `{"name":5}`, nil, 400, "parameter_invalid", "name"},
		{"unknown field", "POST", "/v1/assistants", `{"name":"a","nmae":"b"}`, nil, 400, "parameter_unknown", "nmae"},
		{"field in the wrong case", "POST", "/v1/assistants", `{"NAME":"a"}`, nil, 400, "parameter_unknown", "NAME"},
		{"nested field in the wrong case", "POST", "/v1/assistants", `{"name":"a","framing":{"Shot":"wide"}}`, nil, 400, "parameter_unknown", "framing.Shot"},
		{"missing name", "POST", "/v1/assistants", `{"greeting":"hi"}`, nil, 400, "parameter_missing", "name"},
		{"null name", "POST", "/v1/assistants", `{"name":null}`, nil, 400, "parameter_invalid", "name"},
		{"trailing data", "POST", "/v1/assistants", `{"name":"a"} {}`, nil, 400, "invalid_json", ""},
		{"unknown avatar", "POST", "/v1/assistants", `{"name":"a","avatar_id":"ava_nope"}`, nil, 400, "parameter_invalid", "avatar_id"},
		{"unknown voice", "POST", "/v1/assistants", `{"name":"a","voice":"flite-nobody"}`, nil, 400, "parameter_invalid", "voice"},
		{"hosted voice not offered", "POST", "/v1/assistants", `{"name":"a","voice":"hosted-alloy"}`, nil, 400, "parameter_invalid", "voice"},
		{"model with a space", "POST", "/v1/assistants", `{"name":"a","model":"gpt 4o"}`, nil, 400, "parameter_invalid", "model"},
		{"model too long", "POST", "/v1/assistants", `{"name":"a","model":"` + strings.Repeat("m", 129) + `"}`, nil, 400, "parameter_invalid", "model"},
		{"bad framing", "POST", "/v1/assistants", `{"name":"a","framing":{"shot":"huge"}}`, nil, 400, "parameter_invalid", "framing.shot"},
		{"name too long", "POST", "/v1/assistants", `{"name":"` + strings.Repeat("n", 201) + `"}`, nil, 400, "parameter_invalid", "name"},
		{"oversize body", "POST", "/v1/assistants", big, nil, 413, "body_too_large", ""},
		{"wrong content type", "POST", "/v1/assistants", `{"name":"a"}`, []string{"Content-Type", "text/plain"}, 415, "unsupported_media_type", ""},
		{"unknown id", "GET", "/v1/assistants/asst_01jd0000000000000000000000", "", nil, 404, "resource_not_found", "id"},
		{"wrong method", "PUT", "/v1/assistants", "", nil, 405, "method_not_allowed", ""},
		{"unknown route", "GET", "/v1/nope", "", nil, 404, "route_not_found", ""},
		{"no key", "GET", "/v1/assistants", "", []string{"Authorization", ""}, 401, "api_key_missing", ""},
		{"wrong key", "GET", "/v1/assistants", "", []string{"Authorization", "Bearer sk_test_0000000000000000000000000000"}, 401, "api_key_invalid", ""},
		{"garbage key", "GET", "/v1/assistants", "", []string{"Authorization", "Bearer hunter2"}, 401, "api_key_invalid", ""},
		{"limit out of range", "GET", "/v1/assistants?limit=101", "", nil, 400, "parameter_invalid", "limit"},
		{"bad cursor", "GET", "/v1/lines?starting_after=asst_x", "", nil, 400, "parameter_invalid", "starting_after"},
		{"unknown query", "GET", "/v1/lines?colour=red", "", nil, 400, "parameter_unknown", "colour"},
		{"query on a body route", "POST", "/v1/assistants?name=x", `{"name":"a"}`, nil, 400, "parameter_unknown", "name"},
		{"timeout out of range", "PATCH", "/v1/lines/" + e.lineID, `{"decision_timeout_seconds":31}`, nil, 400, "parameter_invalid", "decision_timeout_seconds"},
		{"bad inbound mode", "PATCH", "/v1/lines/" + e.lineID, `{"inbound_mode":"maybe"}`, nil, 400, "parameter_invalid", "inbound_mode"},
		{"assign unknown assistant", "POST", "/v1/lines/" + e.lineID + "/assign", `{"assistant_id":"asst_nope"}`, nil, 404, "resource_not_found", "assistant_id"},
		{"publish incomplete", "POST", "/v1/assistants/ASSIST/publish", "", nil, 422, "draft_incomplete", "system_prompt"},
	}
	draft := e.do("POST", "/v1/assistants", `{"name":"Draft only"}`).body["id"].(string)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.method, strings.Replace(tc.path, "ASSIST", draft, 1), tc.body, tc.headers...)
			if r.status != tc.status || errCode(r) != tc.code {
				t.Fatalf("%s %s = %d %s, want %d %s", tc.method, tc.path, r.status, r.raw, tc.status, tc.code)
			}
			errObj := r.body["error"].(map[string]any)
			if p, _ := errObj["param"].(string); p != tc.param {
				t.Errorf("param = %q, want %q", p, tc.param)
			}
			if rid, _ := errObj["request_id"].(string); rid == "" || rid != r.header.Get("Request-Id") {
				t.Errorf("request_id %q, Request-Id header %q", rid, r.header.Get("Request-Id"))
			}
			if tc.status == 405 && r.header.Get("Allow") != "GET, POST" {
				t.Errorf("Allow = %q", r.header.Get("Allow"))
			}
		})
	}
	if r := e.do("GET", "/v1/assistants?status=all", ""); len(r.body["data"].([]any)) != 1 {
		t.Errorf("bad requests wrote assistants: %s", r.raw)
	}
	if r := e.do("GET", "/v1/lines/"+e.lineID, ""); r.body["decision_timeout_seconds"] != 10.0 || r.body["inbound_mode"] != "assistant" {
		t.Errorf("bad requests changed the line: %s", r.raw)
	}
}

// TestRequestContentType: a request body is read as JSON only when it is sent as
// application/json; anything else, a missing Content-Type included, is 415 and writes
// nothing. An empty (or all-whitespace) body needs no Content-Type.
func TestRequestContentType(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct {
		ct   string // "" sends none
		want int
	}{
		{"application/json", 201},
		{"application/json; charset=utf-8", 201},
		{"Application/JSON", 201},
		{"", 415},
		{"application/jsonp", 415},
		{"application/json-patch+json", 415},
		{"text/plain", 415},
		{"application/x-www-form-urlencoded", 415},
		{"multipart/form-data; boundary=x", 415},
		{"application/json; charset", 415}, // not a media type
	} {
		r := e.do("POST", "/v1/assistants", `{"name":"ct `+tc.ct+`"}`, "Content-Type", tc.ct)
		if r.status != tc.want || (tc.want == 415 && errCode(r) != "unsupported_media_type") {
			t.Errorf("POST /v1/assistants with Content-Type %q = %d %s, want %d", tc.ct, r.status, r.raw, tc.want)
		}
	}
	list := e.do("GET", "/v1/assistants?status=all&limit=100", "")
	if n := len(list.body["data"].([]any)); n != 3 {
		t.Errorf("%d assistants written, want 3 (the application/json ones only)", n)
	}
	id := list.body["data"].([]any)[0].(map[string]any)["id"].(string)
	for _, body := range []string{"", " \n"} {
		req, _ := http.NewRequest("POST", e.srv.URL+"/v1/assistants/"+id+"/duplicate", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+e.key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 201 {
			t.Errorf("POST duplicate with body %q and no Content-Type = %d, want 201", body, res.StatusCode)
		}
	}
}

func TestOtherAccountsResourcesAreNotFound(t *testing.T) {
	e := newEnv(t, nil)
	id := e.do("POST", "/v1/assistants", `{"name":"Mine"}`).body["id"].(string)
	_, otherKey, err := (&account.Service{Store: e.store, Now: time.Now}).Create(context.Background(), "Other", false)
	if err != nil {
		t.Fatal(err)
	}
	other := *e
	other.key = otherKey
	for _, p := range []struct{ method, path, body string }{
		{"GET", "/v1/assistants/" + id, ""},
		{"PATCH", "/v1/assistants/" + id, `{"name":"stolen"}`},
		{"POST", "/v1/assistants/" + id + "/archive", ""},
		{"GET", "/v1/lines/" + e.lineID, ""},
		{"PATCH", "/v1/lines/" + e.lineID, `{"name":"stolen"}`},
	} {
		if r := other.do(p.method, p.path, p.body); r.status != 404 || errCode(r) != "resource_not_found" {
			t.Errorf("other account %s %s = %d %s, want 404", p.method, p.path, r.status, r.raw)
		}
	}
	if r := other.do("GET", "/v1/assistants", ""); len(r.body["data"].([]any)) != 0 {
		t.Errorf("other account lists %s", r.raw)
	}
	if r := e.do("GET", "/v1/assistants/"+id, ""); r.body["name"] != "Mine" {
		t.Errorf("owner sees %s", r.raw)
	}
}

func TestIdempotencyKey(t *testing.T) {
	e := newEnv(t, nil)
	body := `{"name":"Once"}`
	first := e.do("POST", "/v1/assistants", body, "Idempotency-Key", "k-1")
	again := e.do("POST", "/v1/assistants", body, "Idempotency-Key", "k-1")
	// The replay is the first answer without the tool secret, shown once.
	want := maps.Clone(first.body)
	delete(want, "tool_secret")
	if first.status != 201 || again.status != 201 || first.body["tool_secret"] == nil || !reflect.DeepEqual(again.body, want) ||
		again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %s / %d %s", first.status, first.raw, again.status, again.raw)
	}
	if r := e.do("POST", "/v1/assistants", `{"name":"Twice"}`, "Idempotency-Key", "k-1"); r.status != 422 || errCode(r) != "idempotency_key_reused" {
		t.Errorf("reuse with other body = %d %s", r.status, r.raw)
	}
	if r := e.do("POST", "/v1/assistants", body, "Idempotency-Key", strings.Repeat("k", 256)); r.status != 400 || errCode(r) != "idempotency_key_invalid" {
		t.Errorf("long key = %d %s", r.status, r.raw)
	}
	// Concurrent requests with one key create exactly one assistant.
	var wg sync.WaitGroup
	statuses := make(chan int, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses <- e.do("POST", "/v1/assistants", `{"name":"Race"}`, "Idempotency-Key", "k-race").status
		}()
	}
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != 201 && s != 409 {
			t.Errorf("concurrent status %d, want 201 or 409", s)
		}
	}
	n := 0
	for _, a := range e.do("GET", "/v1/assistants?limit=100", "").body["data"].([]any) {
		if a.(map[string]any)["name"] == "Race" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("concurrent same-key creates made %d assistants, want 1", n)
	}
}

func TestRateLimit(t *testing.T) {
	e := newEnv(t, httpapi.NewLimiter(0.001, 3))
	var got []int
	for range 5 {
		got = append(got, e.do("GET", "/v1/lines", "").status)
	}
	if fmt.Sprint(got) != "[200 200 200 429 429]" {
		t.Fatalf("statuses = %v, want three 200s then 429s", got)
	}
	// Another key of the same account shares its limit (making keys does not multiply
	// it); another account has a limit of its own.
	text, k, err := account.NewKey(e.acctID, false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.AddKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	if r := e.do("GET", "/v1/lines", "", "Authorization", "Bearer "+text); r.status != 429 {
		t.Errorf("second key of the account = %d, want 429 (limits are per account)", r.status)
	}
	_, other, err := (&account.Service{Store: e.store, Now: time.Now}).Create(context.Background(), "Other Co", false)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.do("GET", "/v1/lines", "", "Authorization", "Bearer "+other); r.status != 200 {
		t.Errorf("another account = %d, want 200", r.status)
	}
	r := e.do("GET", "/v1/lines", "")
	if r.header.Get("Retry-After") == "" || errCode(r) != "rate_limited" || r.body["error"].(map[string]any)["type"] != "rate_limit_error" {
		t.Errorf("429 = %v %s", r.header, r.raw)
	}
}

func TestPagination(t *testing.T) {
	e := newEnv(t, nil)
	var ids []string
	for i := range 7 {
		ids = append(ids, e.do("POST", "/v1/assistants", fmt.Sprintf(`{"name":"A%d"}`, i)).body["id"].(string))
	}
	var seen []string
	after := ""
	for page := 0; page < 10; page++ {
		q := "/v1/assistants?limit=3"
		if after != "" {
			q += "&starting_after=" + after
		}
		r := e.do("GET", q, "")
		for _, a := range r.body["data"].([]any) {
			seen = append(seen, a.(map[string]any)["id"].(string))
		}
		if r.body["has_more"] != true {
			break
		}
		after = seen[len(seen)-1]
	}
	var want []string
	for i := len(ids) - 1; i >= 0; i-- {
		want = append(want, ids[i])
	}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("pages = %v, want newest first %v", seen, want)
	}
}

func TestKeyNeverInLogsOrResponses(t *testing.T) {
	e := newEnv(t, nil)
	var bodies []string
	for _, p := range []struct{ method, path, body string }{
		{"GET", "/v1/lines", ""},
		{"POST", "/v1/assistants", `{"name":"Logged"}`},
		{"POST", "/v1/assistants", `{"name":`},
		{"GET", "/v1/nope", ""},
	} {
		bodies = append(bodies, e.do(p.method, p.path, p.body).raw)
	}
	logs := e.logs.String()
	if !strings.Contains(logs, `"path":"/v1/assistants"`) || !strings.Contains(logs, e.acctID) {
		t.Fatalf("request log lines missing: %s", logs)
	}
	secret := strings.TrimPrefix(e.key, "sk_test_")
	for _, b := range append(bodies, logs) {
		if strings.Contains(b, secret) {
			t.Fatalf("the API key appears in %q", b)
		}
	}
}
