package lambda_test

// TestFunctionsUnderLambdaRuntime runs every function's real bootstrap the way Lambda
// does (a process polling the Runtime API) and hands it real API Gateway HTTP API v2
// events (testdata/), with the authorizer in front as API Gateway chains it: the
// authorizer function's answer becomes the request's requestContext.authorizer.lambda.
// Each function runs with exactly the environment template.yaml gives it, against
// DynamoDB Local through a recording proxy, and moto for EventBridge and SQS; at the
// end, every table and action a function used must be granted to it in template.yaml,
// and every grant must have been used.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/bridgeline/bridgeline/e2e/internal/runtimeapi"
	"github.com/bridgeline/bridgeline/events/awsbus"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/events/webhook"
	"github.com/bridgeline/bridgeline/functions/functiontest"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/decision"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/joinpage"
	"github.com/bridgeline/bridgeline/shared/levelmeter"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/store/dynamo"
	"github.com/bridgeline/bridgeline/shared/store/dynamo/dynamolocal"
)

// stack is one test's deployment: tables, queues, a bus, and the function processes.
type stack struct {
	t         testing.TB
	ctx       context.Context
	store     *dynamo.Store
	dynamoURL string
	motoURL   string
	refs      map[string]string // template logical id -> this test's name or URL
	logical   map[string]string // physical table name -> logical id
	mu        sync.Mutex
	procs     map[string]*runtimeapi.Process
	recs      map[string]*recorder
	// overrides are environment entries a test puts after a function's template
	// environment (shorter windows and limits).
	overrides map[string][]string
}

func newStack(t testing.TB) *stack {
	t.Helper()
	endpoint := dynamolocal.Endpoint(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	prefix := strings.ToLower(ident.New("t")) + "-"
	tables := dynamo.TablesWithPrefix(prefix)
	store, err := dynamo.Open(ctx, dynamo.Config{Tables: tables, Endpoint: endpoint, Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.DeleteTables(context.Background()) })
	s := &stack{t: t, ctx: ctx, store: store, dynamoURL: endpoint, refs: map[string]string{}, logical: map[string]string{},
		procs: map[string]*runtimeapi.Process{}, recs: map[string]*recorder{}, overrides: map[string][]string{}}
	for table, name := range tables {
		s.refs[table.LogicalID()] = name
		s.logical[name] = table.LogicalID()
	}
	s.refs["MaxSessionMinutes"] = "60"
	s.refs["SIPPublicHost"] = "sip.example.test"
	s.refs["SIPPublicPort"] = "5061"
	s.refs["MaxConcurrentSessions"] = "20"
	s.refs["AssistantDispatchTimeoutSeconds"] = "15"
	s.refs["JoinPageURL"] = "" // the template's default: join_url from each request's host
	// The recording functions open the bucket only to presign or delete a stored file;
	// the scenario's calls have none (shared/httpapi's TestCallRecordingS3 runs the
	// bucket on moto).
	s.refs["RecordingsBucket"] = "bridgeline-test-recordings"
	return s
}

// withBus starts moto and makes the event path's bus, rule and queues as template.yaml
// declares them.
func (s *stack) withBus() {
	t := s.t
	s.motoURL = eventtest.StartMoto(t)
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	q := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(s.motoURL) })
	eb := eventbridge.NewFromConfig(cfg, func(o *eventbridge.Options) { o.BaseEndpoint = aws.String(s.motoURL) })
	queue := func(name string) (url, arn string) {
		out, err := q.CreateQueue(s.ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		attrs, err := q.GetQueueAttributes(s.ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{"QueueArn"}})
		if err != nil {
			t.Fatal(err)
		}
		return *out.QueueUrl, attrs.Attributes["QueueArn"]
	}
	deliveryURL, deliveryARN := queue("bridgeline-test-delivery")
	dlqURL, _ := queue("bridgeline-test-delivery-dlq")
	transferURL, _ := queue("bridgeline-test-transfers")
	if _, err := eb.CreateEventBus(s.ctx, &eventbridge.CreateEventBusInput{Name: aws.String("bridgeline-test")}); err != nil {
		t.Fatal(err)
	}
	pattern := ruleTargets(t)
	if _, err := eb.PutRule(s.ctx, &eventbridge.PutRuleInput{Name: aws.String("delivery"), EventBusName: aws.String("bridgeline-test"), EventPattern: aws.String(pattern)}); err != nil {
		t.Fatal(err)
	}
	if _, err := eb.PutTargets(s.ctx, &eventbridge.PutTargetsInput{Rule: aws.String("delivery"), EventBusName: aws.String("bridgeline-test"),
		Targets: []ebtypes.Target{{Id: aws.String("delivery-queue"), Arn: aws.String(deliveryARN)}}}); err != nil {
		t.Fatal(err)
	}
	// The KMS key that seals webhook secrets (WebhookSecretsKey): create and rotate seal
	// with it through moto, webhook-deliver and platform-sim open with it.
	key, err := kms.NewFromConfig(cfg, func(o *kms.Options) { o.BaseEndpoint = aws.String(s.motoURL) }).
		CreateKey(s.ctx, &kms.CreateKeyInput{Description: aws.String("bridgeline-test webhook secrets")})
	if err != nil {
		t.Fatal(err)
	}
	s.refs["WebhookSecretsKey"] = aws.ToString(key.KeyMetadata.KeyId)
	s.refs["EventBus"] = "bridgeline-test"
	s.refs["DeliveryQueue"] = deliveryURL
	s.refs["DeliveryDeadLetterQueue"] = dlqURL
	s.refs["TransferQueue"] = transferURL
}

// ruleTargets returns the delivery rule's event pattern from template.yaml, and checks
// it is the one events/awsbus publishes to.
func ruleTargets(t testing.TB) string {
	r := functiontest.Template(t).Resources["DeliveryRule"]
	b, err := json.Marshal(r.Properties["EventPattern"])
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	json.Unmarshal(b, &got)
	json.Unmarshal([]byte(awsbus.RulePattern), &want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("DeliveryRule pattern = %s, want awsbus.RulePattern %s", b, awsbus.RulePattern)
	}
	return string(b)
}

// proc returns the running process of a function, starting it with the environment
// template.yaml gives it.
func (s *stack) proc(name string) *runtimeapi.Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.procs[name]; ok {
		return p
	}
	rec := newRecorder(s.t, s.dynamoURL, s.logical)
	env := append(append(templateEnv(s.t, name, s.refs), awsEnv(rec.URL, s.motoURL)...), s.overrides[name]...)
	p := startFunction(s.t, name, env)
	s.procs[name], s.recs[name] = p, rec
	return p
}

func (s *stack) invoke(name string, event []byte) []byte {
	s.t.Helper()
	p := s.proc(name)
	r, err := p.Invoke(s.ctx, event)
	if err != nil {
		s.t.Fatalf("%s: %v", name, err)
	}
	if r.Err != "" {
		s.t.Fatalf("%s answered an error %s: %s\nlog:\n%s", name, r.Err, r.Payload, p.Output())
	}
	return r.Payload
}

// authorize runs the authorizer function on an Authorization header and returns its
// simple response.
func (s *stack) authorize(header string) events.APIGatewayV2CustomAuthorizerSimpleResponse {
	s.t.Helper()
	ev := readJSON(s.t, "http-api-v2-authorizer.json")
	ev["identitySource"] = []any{header}
	ev["headers"].(map[string]any)["authorization"] = header
	b, _ := json.Marshal(ev)
	var resp events.APIGatewayV2CustomAuthorizerSimpleResponse
	if err := json.Unmarshal(s.invoke("authorizer", b), &resp); err != nil {
		s.t.Fatal(err)
	}
	return resp
}

// request is one API call through a function.
type request struct {
	fn      string
	method  string
	pattern string // the route's path as API Gateway's route key has it
	path    string
	query   string
	body    string
	base64  bool // the body is binary: API Gateway hands it base64-encoded
	headers map[string]string
	auth    map[string]any // the authorizer's context
}

type response struct {
	status  int
	headers map[string]string
	body    []byte
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("response body %q: %v", r.body, err)
	}
	return v
}

// httpEvent builds the API Gateway HTTP API (payload 2.0) event of a request from
// testdata: route key, raw path and query, headers, body, path parameter and the
// authorizer's context. A request to an /internal/ receiver gets the event of the
// private InternalApi instead (restEvent). Both answers decode as an
// events.APIGatewayV2HTTPResponse (status, headers, body and its encoding are named
// alike in payloads 1.0 and 2.0).
func httpEvent(t testing.TB, rq request) []byte {
	t.Helper()
	if strings.HasPrefix(rq.pattern, "/internal/") {
		return restEvent(t, rq)
	}
	ev := readJSON(t, "http-api-v2-request.json")
	routeKey := rq.method + " " + rq.pattern
	ev["routeKey"] = routeKey
	ev["rawPath"] = rq.path
	ev["rawQueryString"] = rq.query
	headers := ev["headers"].(map[string]any)
	for k, v := range rq.headers {
		headers[strings.ToLower(k)] = v
	}
	if rq.body == "" {
		delete(ev, "body")
		delete(headers, "content-type")
		delete(headers, "content-length")
	} else {
		ev["body"] = rq.body
		if rq.base64 {
			ev["body"], ev["isBase64Encoded"] = base64.StdEncoding.EncodeToString([]byte(rq.body)), true
		}
		headers["content-length"] = strconv.Itoa(len(rq.body))
	}
	if rq.query != "" {
		qs := map[string]any{}
		vals, _ := url.ParseQuery(rq.query)
		for k, v := range vals {
			qs[k] = strings.Join(v, ",")
		}
		ev["queryStringParameters"] = qs
	}
	if i := strings.Index(rq.pattern, "{id}"); i >= 0 {
		id, _, _ := strings.Cut(rq.path[i:], "/")
		ev["pathParameters"] = map[string]any{"id": id}
	}
	rc := ev["requestContext"].(map[string]any)
	rc["routeKey"] = routeKey
	rc["http"].(map[string]any)["method"] = rq.method
	rc["http"].(map[string]any)["path"] = rq.path
	rc["authorizer"] = map[string]any{"lambda": rq.auth}
	return mustJSON(t, ev)
}

// restEvent builds the REST API (payload 1.0) event the private InternalApi
// (template.yaml) sends a receiver, from testdata: resource and path (without the
// stage), method, headers and body, from inside the fleets' VPC through its endpoint.
func restEvent(t testing.TB, rq request) []byte {
	t.Helper()
	if rq.query != "" || strings.Contains(rq.pattern, "{") {
		t.Fatalf("%s %s: internal receivers take no query and no path parameter", rq.method, rq.pattern)
	}
	ev := readJSON(t, "rest-api-v1-private.json")
	ev["resource"], ev["path"], ev["httpMethod"] = rq.pattern, rq.path, rq.method
	rc := ev["requestContext"].(map[string]any)
	rc["resourcePath"], rc["httpMethod"] = rq.pattern, rq.method
	rc["path"] = "/" + rc["stage"].(string) + rq.path
	headers := ev["headers"].(map[string]any)
	for k, v := range rq.headers {
		headers[http.CanonicalHeaderKey(k)] = v
	}
	if rq.body == "" {
		delete(headers, "Content-Type")
	} else {
		ev["body"] = rq.body
		headers["Content-Length"] = strconv.Itoa(len(rq.body))
	}
	return mustJSON(t, multiValueHeaders(ev))
}

// multiValueHeaders sets a REST API event's multiValueHeaders from its headers, as API
// Gateway sends both (aws-lambda-go-api-proxy reads only the former when present).
func multiValueHeaders(ev map[string]any) map[string]any {
	mv := map[string]any{}
	for k, v := range ev["headers"].(map[string]any) {
		mv[k] = []any{v}
	}
	ev["multiValueHeaders"] = mv
	return ev
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// call runs a request's event through the function and decodes its proxy response.
func (s *stack) call(rq request) response {
	t := s.t
	t.Helper()
	var out events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(s.invoke(rq.fn, httpEvent(t, rq)), &out); err != nil {
		t.Fatal(err)
	}
	body := []byte(out.Body)
	if out.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(out.Body); err != nil {
			t.Fatal(err)
		}
	}
	headers := out.Headers
	if len(headers) == 0 {
		// Payload 1.0 (the private InternalApi): the adapter answers multiValueHeaders.
		headers = map[string]string{}
		for k, v := range out.MultiValueHeaders {
			headers[k] = strings.Join(v, ",")
		}
	}
	return response{status: out.StatusCode, headers: headers, body: body}
}

// logOf returns a function's log once it holds the response's request line (the log
// travels through a pipe and may trail the response by a moment).
func (s *stack) logOf(fn string, resp response) string {
	id := resp.headers["Request-Id"]
	p := s.proc(fn)
	for range 50 {
		if id == "" || strings.Contains(p.Output(), id) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return p.Output()
}

// expect calls and checks the status, returning the decoded JSON body.
func (s *stack) expect(rq request, status int) map[string]any {
	s.t.Helper()
	resp := s.call(rq)
	if resp.status != status {
		s.t.Fatalf("%s %s via %s: status %d, want %d; body %s\nlog:\n%s", rq.method, rq.path, rq.fn, resp.status, status, resp.body, s.logOf(rq.fn, resp))
	}
	if resp.headers["Request-Id"] == "" && resp.headers["request-id"] == "" {
		s.t.Errorf("%s %s: no Request-Id header in %v", rq.method, rq.path, resp.headers)
	}
	return resp.json(s.t)
}

func TestFunctionsUnderLambdaRuntime(t *testing.T) {
	s := newStack(t)
	s.withBus()
	s.withAvatarBucket()
	lk, gw := s.withLiveKit()
	ctx := s.ctx

	// An account with a key and a line, made the way `bridgeline admin` makes them.
	acct, key, err := (&account.Service{Store: s.store, Now: time.Now}).Create(ctx, "Runtime Co", false)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := (&line.Service{Store: s.store, Assistants: s.store, Now: time.Now}).Provision(ctx, acct.ID, "sim", "+15550109999", "Front desk")
	if err != nil {
		t.Fatal(err)
	}

	// The authorizer: a good key carries the account; a malformed or unknown one is
	// denied (API Gateway answers 403 and caches the deny: issue 10).
	good := s.authorize("Bearer " + key)
	if !good.IsAuthorized || good.Context["account_id"] != acct.ID || good.Context["account_name"] != "Runtime Co" {
		t.Fatalf("authorizer(good key) = %+v, want account %s", good, acct.ID)
	}
	for _, header := range []string{"Bearer sk_test_" + strings.Repeat("Z", 32), "Bearer not-a-key", "Basic dXNlcjpwYXNz"} {
		if bad := s.authorize(header); bad.IsAuthorized {
			t.Errorf("authorizer(%q) = %+v, want a deny", header, bad)
		}
	}
	auth := good.Context

	const ctJSON = "application/json"
	post := func(fn, pattern, path, body string) request {
		return request{fn: fn, method: http.MethodPost, pattern: pattern, path: path, body: body, auth: auth,
			headers: map[string]string{"Content-Type": ctJSON, "Idempotency-Key": ident.New("idem")}}
	}
	get := func(fn, pattern, path string) request {
		return request{fn: fn, method: http.MethodGet, pattern: pattern, path: path, auth: auth}
	}
	patch := func(fn, pattern, path, body string) request {
		return request{fn: fn, method: http.MethodPatch, pattern: pattern, path: path, body: body, auth: auth,
			headers: map[string]string{"Content-Type": ctJSON}}
	}

	// API keys: make one, list, revoke it. The authorizer then passes the revoked key
	// with its error, and the function answers the documented 401: on AWS a revoked key
	// stops working once the authorizer's cached allow expires (ReauthorizeEvery).
	made := s.expect(post("api-keys-create", "/v1/api_keys", "/v1/api_keys", `{}`), http.StatusCreated)
	second, secondID := made["key"].(string), made["id"].(string)
	if !s.authorize("Bearer " + second).IsAuthorized {
		t.Fatalf("authorizer(new key) denied it")
	}
	keys := s.expect(get("api-keys-list", "/v1/api_keys", "/v1/api_keys"), http.StatusOK)
	if data := keys["data"].([]any); len(data) != 2 || data[0].(map[string]any)["id"] != secondID {
		t.Errorf("api keys = %v, want the new key first of two", keys)
	}
	del := request{fn: "api-keys-delete", method: http.MethodDelete, pattern: "/v1/api_keys/{id}", path: "/v1/api_keys/" + secondID, auth: auth}
	if rev := s.expect(del, http.StatusOK); rev["revoked_at"] == nil {
		t.Errorf("revoke = %v, want revoked_at", rev)
	}
	revoked := s.authorize("Bearer " + second)
	if !revoked.IsAuthorized || revoked.Context["account_id"] != nil || revoked.Context["auth_error"] != "api_key_invalid" {
		t.Errorf("authorizer(revoked key) = %+v, want passed on with auth_error and no account", revoked)
	}
	rq := post("assistants-create", "/v1/assistants", "/v1/assistants", `{"name":"Ada"}`)
	rq.auth = revoked.Context
	errBody := s.expect(rq, http.StatusUnauthorized)["error"].(map[string]any)
	if errBody["type"] != "authentication_error" || errBody["code"] != "api_key_invalid" || errBody["message"] != "this API key was revoked" || errBody["request_id"] == "" {
		t.Errorf("revoked key error = %v, want authentication_error api_key_invalid (revoked) with a request id", errBody)
	}
	last := keys["data"].([]any)[1].(map[string]any)["id"].(string)
	del.path = "/v1/api_keys/" + last
	if code := s.expect(del, http.StatusConflict)["error"].(map[string]any)["code"]; code != "last_api_key" {
		t.Errorf("revoking the last key: code %v, want last_api_key", code)
	}

	// Assistants: create (and its idempotent replay), list, get, edit, publish, activate,
	// duplicate, archive.
	create := post("assistants-create", "/v1/assistants", "/v1/assistants",
		`{"name":"Ada","system_prompt":"You are helpful.","greeting":"Hello!","avatar_id":"ava_maya","voice":"hosted-nova","model":"llama3.1:8b",`+
			`"transfer_destinations":[{"to":"+15550109999","description":"the front desk"}]}`)
	a := s.expect(create, http.StatusCreated)
	asstID := a["id"].(string)
	if rot := s.expect(post("assistants-rotate-tool-secret", "/v1/assistants/{id}/rotate_tool_secret",
		"/v1/assistants/"+asstID+"/rotate_tool_secret", ""), http.StatusOK); !strings.HasPrefix(fmt.Sprint(rot["tool_secret"]), "whsec_") {
		t.Errorf("rotate_tool_secret = %v, want a whsec_ tool secret", rot)
	}
	if replay := s.expect(create, http.StatusCreated); replay["id"] != asstID {
		t.Errorf("idempotent replay id = %v, want %s", replay["id"], asstID)
	}
	list := s.expect(get("assistants-list", "/v1/assistants", "/v1/assistants"), http.StatusOK)
	if data := list["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != asstID {
		t.Errorf("assistants list = %v, want [%s]", list, asstID)
	}
	s.expect(get("assistants-get", "/v1/assistants/{id}", "/v1/assistants/"+asstID), http.StatusOK)
	s.expect(patch("assistants-update", "/v1/assistants/{id}", "/v1/assistants/"+asstID, `{"greeting":"Hi there!"}`), http.StatusOK)
	pub := s.expect(post("assistants-publish", "/v1/assistants/{id}/publish", "/v1/assistants/"+asstID+"/publish", ""), http.StatusCreated)
	versions := pub["versions"].([]any)
	if len(versions) != 1 || pub["active_version_id"] != versions[0].(map[string]any)["id"] {
		t.Fatalf("publish = %v, want one active version", pub)
	}
	verID := versions[0].(map[string]any)["id"].(string)
	vlist := s.expect(get("assistants-versions-list", "/v1/assistants/{id}/versions", "/v1/assistants/"+asstID+"/versions"), http.StatusOK)
	if data := vlist["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != verID {
		t.Errorf("versions list = %v, want [%s]", vlist, verID)
	}
	// The quality of the version: no call counted yet, the version listed (its aggregate
	// item read from the calls table by key).
	qlist := s.expect(get("assistants-quality", "/v1/assistants/{id}/quality", "/v1/assistants/"+asstID+"/quality"), http.StatusOK)
	if data := qlist["data"].([]any); len(data) != 1 || data[0].(map[string]any)["version_id"] != verID || data[0].(map[string]any)["calls"] != float64(0) {
		t.Errorf("quality = %v, want [%s] without calls", qlist, verID)
	}
	// The voice is one of the hosted voices this deployment's TTS_VOICES offers.
	if v := versions[0].(map[string]any); v["voice"] != "hosted-nova" || v["model"] != "llama3.1:8b" {
		t.Errorf("published version = %v, want voice hosted-nova and model llama3.1:8b", v)
	}
	s.expect(post("assistants-activate", "/v1/assistants/{id}/activate", "/v1/assistants/"+asstID+"/activate",
		`{"version_id":"`+verID+`"}`), http.StatusOK)
	s.expect(post("assistants-draft-restore", "/v1/assistants/{id}/draft/restore", "/v1/assistants/"+asstID+"/draft/restore",
		`{"version_id":"`+verID+`"}`), http.StatusOK)
	dup := s.expect(post("assistants-duplicate", "/v1/assistants/{id}/duplicate", "/v1/assistants/"+asstID+"/duplicate", `{}`), http.StatusCreated)
	dupID := dup["id"].(string)
	if d := dup["draft"].(map[string]any); d["voice"] != "hosted-nova" || d["model"] != "llama3.1:8b" {
		t.Errorf("duplicate's draft = %v, want the voice and model copied", d)
	}
	s.expect(get("avatars-list", "/v1/avatars", "/v1/avatars"), http.StatusOK)
	voices := map[string]bool{}
	for _, v := range s.expect(get("voices-list", "/v1/voices", "/v1/voices"), http.StatusOK)["data"].([]any) {
		voices[v.(map[string]any)["id"].(string)] = true
	}
	if !voices["flite-slt"] || !voices["hosted-alloy"] || !voices["hosted-nova"] || voices["hosted-echo"] {
		t.Errorf("voices = %v, want the local voices and hosted-alloy, hosted-nova (TTS_VOICES)", voices)
	}
	var models []string
	for _, m := range s.expect(get("models-list", "/v1/models", "/v1/models"), http.StatusOK)["data"].([]any) {
		models = append(models, m.(map[string]any)["id"].(string))
	}
	if strings.Join(models, ",") != testLLMModels {
		t.Errorf("models = %v, want %s (LLM_MODELS)", models, testLLMModels)
	}
	// A model the deployment does not offer is refused at a draft update.
	if e := s.expect(patch("assistants-update", "/v1/assistants/{id}", "/v1/assistants/"+dupID, `{"model":"gpt-4.5-preview"}`),
		http.StatusBadRequest)["error"].(map[string]any); e["param"] != "model" {
		t.Errorf("an unoffered model: error %v, want on model", e)
	}

	// The join page: public (no authorizer context), no tables; the page carries the
	// deployment's rtc_url, and the livekit-client bundle is served when make built it in.
	page := s.call(request{fn: "join-page", method: http.MethodGet, pattern: "/join/{file}", path: "/join/call"})
	if page.status != http.StatusOK || !strings.Contains(string(page.body), `name="bridgeline-rtc-url" content="`+lk.WSURL()) ||
		!strings.HasPrefix(page.headers["Content-Type"], "text/html") {
		t.Errorf("GET /join/call via join-page = %d %v %.200s, want the page with LIVEKIT_PUBLIC_URL", page.status, page.headers, page.body)
	}
	sdk := s.call(request{fn: "join-page", method: http.MethodGet, pattern: "/join/{file}", path: "/join/" + joinpage.SDKFile})
	built, err := os.ReadFile(filepath.Join(functiontest.Root(t), "shared", "joinpage", "assets", joinpage.SDKFile))
	switch {
	case err == nil && (sdk.status != http.StatusOK || !bytes.Equal(sdk.body, built)):
		t.Errorf("GET /join/%s via join-page = %d (%d bytes), want the %d bytes make built in", joinpage.SDKFile, sdk.status, len(sdk.body), len(built))
	case err != nil && sdk.status != http.StatusNotFound:
		t.Errorf("GET /join/%s via join-page without the bundle built = %d, want 404 saying so", joinpage.SDKFile, sdk.status)
	}
	if m := s.call(request{fn: "join-page", method: http.MethodGet, pattern: "/join/{file}", path: "/join/" + levelmeter.File}); m.status != http.StatusOK || !bytes.Equal(m.body, levelmeter.JS) {
		t.Errorf("GET /join/%s via join-page = %d (%d bytes), want the level meter the page loads", levelmeter.File, m.status, len(m.body))
	}

	// Lines: list, get, assign, re-point and unassign, then archive the copy.
	lines := s.expect(get("lines-list", "/v1/lines", "/v1/lines"), http.StatusOK)
	if data := lines["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != ln.ID {
		t.Errorf("lines list = %v, want [%s]", lines, ln.ID)
	}
	s.expect(get("lines-get", "/v1/lines/{id}", "/v1/lines/"+ln.ID), http.StatusOK)
	assigned := s.expect(post("lines-assign", "/v1/lines/{id}/assign", "/v1/lines/"+ln.ID+"/assign", `{"assistant_id":"`+asstID+`"}`), http.StatusOK)
	if assigned["assistant_id"] != asstID {
		t.Errorf("assign = %v, want assistant %s", assigned, asstID)
	}
	s.expect(patch("lines-update", "/v1/lines/{id}", "/v1/lines/"+ln.ID, `{"assistant_id":"`+asstID+`","name":"Desk"}`), http.StatusOK)
	unassigned := s.expect(patch("lines-update", "/v1/lines/{id}", "/v1/lines/"+ln.ID, `{"assistant_id":null}`), http.StatusOK)
	if unassigned["assistant_id"] != nil {
		t.Errorf("unassign = %v, want no assistant", unassigned)
	}
	// A SIP trunk and a SIP line on it (this livekit-server has no SIP bridge: the sync
	// to LiveKit fails, is logged, and is left to the sweeper's reconcile); a trunk that
	// carries a line cannot go. SIP routes take live keys only: the test key is refused
	// by the function itself, and the account's live key goes on.
	liveKey, _, err := (&account.Service{Store: s.store, Now: time.Now}).AddKey(ctx, acct.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	liveAuth := s.authorize("Bearer " + liveKey).Context
	live := func(rq request) request { rq.auth = liveAuth; return rq }
	if code := s.expect(get("sip-trunks-list", "/v1/sip_trunks", "/v1/sip_trunks"), http.StatusForbidden)["error"].(map[string]any)["code"]; code != "live_key_required" {
		t.Errorf("test key listing SIP trunks: code %v, want live_key_required", code)
	}
	tr := s.expect(live(post("sip-trunks-create", "/v1/sip_trunks", "/v1/sip_trunks",
		`{"name":"Provider","inbound":{"allowed_addresses":["203.0.113.0/24"]},"outbound":{"address":"198.51.100.20","transport":"udp","username":"bridgeline","password":"s3cret-pass"}}`)),
		http.StatusCreated)
	trID, _ := tr["id"].(string)
	if tr["origination_uri"] != "sip:sip.example.test:5061" {
		t.Errorf("trunk origination_uri = %v, want sip:sip.example.test:5061 (SIPPublicHost, SIPPublicPort)", tr["origination_uri"])
	}
	if out, _ := tr["outbound"].(map[string]any); out["password_set"] != true || strings.Contains(fmt.Sprint(tr), "s3cret-pass") {
		t.Errorf("trunk = %v, want its password set and never shown", tr)
	}
	s.expect(live(get("sip-trunks-list", "/v1/sip_trunks", "/v1/sip_trunks")), http.StatusOK)
	s.expect(live(get("sip-trunks-get", "/v1/sip_trunks/{id}", "/v1/sip_trunks/"+trID)), http.StatusOK)
	s.expect(live(patch("sip-trunks-update", "/v1/sip_trunks/{id}", "/v1/sip_trunks/"+trID, `{"name":"Provider (main)"}`)), http.StatusOK)
	sipLine := s.expect(live(post("lines-create", "/v1/lines", "/v1/lines",
		`{"platform":"sip","handle":"+15550108888","sip_trunk_id":"`+trID+`","assistant_id":"`+asstID+`"}`)), http.StatusCreated)
	if sipLine["sip_trunk_id"] != trID || sipLine["platform"] != "sip" {
		t.Errorf("SIP line = %v, want one on %s", sipLine, trID)
	}
	remove := func(fn, pattern, path string) request {
		return request{fn: fn, method: http.MethodDelete, pattern: pattern, path: path, auth: auth}
	}
	s.expect(live(remove("sip-trunks-delete", "/v1/sip_trunks/{id}", "/v1/sip_trunks/"+trID)), http.StatusConflict)
	s.expect(live(remove("lines-delete", "/v1/lines/{id}", "/v1/lines/"+sipLine["id"].(string))), http.StatusOK)
	s.expect(live(remove("sip-trunks-delete", "/v1/sip_trunks/{id}", "/v1/sip_trunks/"+trID)), http.StatusOK)

	archived := s.expect(post("assistants-archive", "/v1/assistants/{id}/archive", "/v1/assistants/"+dupID+"/archive", ""), http.StatusOK)
	if archived["status"] != "archived" {
		t.Errorf("archive = %v", archived)
	}

	// Webhook endpoints, pointing at a receiver on this machine.
	received := make(chan *http.Request, 4)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		received <- r.Clone(context.Background())
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	ep := s.expect(post("webhook-endpoints-create", "/v1/webhook_endpoints", "/v1/webhook_endpoints",
		`{"url":"`+receiver.URL+`/hooks","events":["call.ended"]}`), http.StatusCreated)
	epID := ep["id"].(string)
	// A second endpoint whose receiver is gone (410): delivery disables it.
	gone := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) }))
	defer gone.Close()
	goneEP := s.expect(post("webhook-endpoints-create", "/v1/webhook_endpoints", "/v1/webhook_endpoints",
		`{"url":"`+gone.URL+`/hooks","events":["call.ended"]}`), http.StatusCreated)
	s.expect(get("webhook-endpoints-list", "/v1/webhook_endpoints", "/v1/webhook_endpoints"), http.StatusOK)
	s.expect(get("webhook-endpoints-get", "/v1/webhook_endpoints/{id}", "/v1/webhook_endpoints/"+epID), http.StatusOK)
	s.expect(patch("webhook-endpoints-update", "/v1/webhook_endpoints/{id}", "/v1/webhook_endpoints/"+epID, `{"description":"ops"}`), http.StatusOK)
	rotated := s.expect(post("webhook-endpoints-rotate-secret", "/v1/webhook_endpoints/{id}/rotate_secret",
		"/v1/webhook_endpoints/"+epID+"/rotate_secret", ""), http.StatusOK)
	secret, _ := rotated["secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("rotate_secret = %v, want a whsec_ secret", rotated)
	}

	// The event path: a call.ended written to the events table (as a store transaction
	// writes it) goes through event-relay to the bus, the rule puts it on the delivery
	// queue, and webhook-deliver posts it, signed, to the endpoint.
	evt := callevent.Event{ID: ident.New("evt"), AccountID: acct.ID, Type: callevent.TypeCallEnded,
		CreatedAt: time.Now().UTC().Truncate(time.Millisecond), Data: []byte(`{"call_id":"call_1","end_reason":"remote_hangup"}`)}
	put, err := s.store.EventPut(evt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.store.Client().TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{put}}); err != nil {
		t.Fatal(err)
	}
	s.relay(evt)
	msg := s.receiveDelivery()
	s.deliver(msg)
	select {
	case r := <-received:
		body, _ := io.ReadAll(r.Body)
		if err := webhook.Verify(secret, r.Header, body); err != nil {
			t.Errorf("delivered webhook does not verify with the endpoint's secret: %v", err)
		}
		if r.Header.Get("webhook-id") != evt.ID {
			t.Errorf("webhook-id = %q, want %s", r.Header.Get("webhook-id"), evt.ID)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("webhook-deliver posted nothing to the endpoint")
	}

	disabled := s.expect(get("webhook-endpoints-get", "/v1/webhook_endpoints/{id}", "/v1/webhook_endpoints/"+goneEP["id"].(string)), http.StatusOK)
	if disabled["status"] != "disabled" {
		t.Errorf("endpoint answering 410 = %v, want disabled", disabled)
	}

	// The event log through the API, and a redelivery onto the queue.
	evList := s.expect(get("events-list", "/v1/events", "/v1/events"), http.StatusOK)
	if data := evList["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != evt.ID {
		t.Errorf("events list = %v, want [%s]", evList, evt.ID)
	}
	got := s.expect(get("events-get", "/v1/events/{id}", "/v1/events/"+evt.ID), http.StatusOK)
	if attempts, _ := got["attempts"].([]any); len(attempts) != 2 {
		t.Errorf("event %s attempts = %v, want one to each endpoint", evt.ID, got["attempts"])
	}
	s.expect(post("events-redeliver", "/v1/events/{id}/redeliver", "/v1/events/"+evt.ID+"/redeliver", ""), http.StatusAccepted)
	if redelivery := s.receiveDelivery(); !strings.Contains(redelivery, awsbus.TaskKind) {
		t.Errorf("redelivery message = %s, want a %s task", redelivery, awsbus.TaskKind)
	}
	s.expect(request{fn: "webhook-endpoints-delete", method: http.MethodDelete, pattern: "/v1/webhook_endpoints/{id}",
		path: "/v1/webhook_endpoints/" + epID, auth: auth}, http.StatusOK)

	// A ringing call on a customer_decides line, answered through the API: the session
	// payload comes back on accept.
	now := time.Now().UTC().Truncate(time.Millisecond)
	callID := ident.New("call")
	pending := decision.Record{CallID: callID, AccountID: acct.ID, LineID: ln.ID, EventID: ident.New("evt"),
		AnswerBy: now.Add(10 * time.Second), CreatedAt: now,
		Session: callevent.Session{SessionID: ident.New("ses"), CallID: callID, RTCURL: "wss://media.example.test",
			ParticipantToken: "token", ExpiresAt: now.Add(10 * time.Minute)}}
	if err := s.store.CreateDecision(ctx, pending); err != nil {
		t.Fatal(err)
	}
	answered := s.expect(post("calls-answer", "/v1/calls/{id}/answer", "/v1/calls/"+callID+"/answer", `{"action":"accept"}`), http.StatusCreated)
	if answered["session_id"] != pending.Session.SessionID || answered["participant_token"] != "token" {
		t.Errorf("answer = %v, want the session payload", answered)
	}

	s.sessionScenario(lk, gw, acct.ID, ln.ID, auth)
	s.avatarScenario(acct.ID, auth)
	s.campaignScenario(asstID, ln.ID, auth)

	// Another ringing call, declined through the API (after the session scenario, whose
	// lists it would join): the call object comes back, read from the calls table (on AWS
	// this answered 500 while calls-answer had no grant on it, the decline recorded
	// anyway).
	ses, inbound := ringingInbound(acct.ID, ln.ID, now)
	if err := s.store.SaveSession(ctx, ses, inbound, nil); err != nil {
		t.Fatal(err)
	}
	toDecline := pending
	toDecline.CallID, toDecline.EventID, toDecline.Session.CallID = inbound.ID, ident.New("evt"), inbound.ID
	// Its own deadline, from now: the session scenario before it takes longer than the
	// first decision's 10 s on a loaded machine.
	toDecline.AnswerBy = time.Now().Add(10 * time.Second)
	if err := s.store.CreateDecision(ctx, toDecline); err != nil {
		t.Fatal(err)
	}
	declined := s.expect(post("calls-answer", "/v1/calls/{id}/answer", "/v1/calls/"+inbound.ID+"/answer", `{"action":"decline"}`), http.StatusOK)
	if declined["id"] != inbound.ID || declined["object"] != "call" || declined["decision"] != "decline" || declined["direction"] != "inbound" {
		t.Errorf("decline = %v, want the inbound call object with decision decline", declined)
	}

	// A web call through sessions-create: nothing dialled, the caller's token, join_url on
	// the API's own host (API Gateway's Host and X-Forwarded-Proto: JoinPageURL is
	// unset), the assistant dispatched; sessions-delete ends it. Last, so that no list above
	// meets it.
	web := s.expect(request{fn: "sessions-create", method: http.MethodPost, pattern: "/v1/sessions", path: "/v1/sessions",
		body: `{"mode":"assistant","assistant_id":"` + asstID + `","media":"audio"}`, auth: auth,
		headers: map[string]string{"Content-Type": ctJSON, "Idempotency-Key": ident.New("idem")}}, http.StatusCreated)
	apiHost := readJSON(t, "http-api-v2-request.json")["headers"].(map[string]any)["host"]
	if want := fmt.Sprintf("https://%s/join/call#token=%s", apiHost, web["participant_token"]); web["join_url"] != want ||
		web["watch_only"] != false || web["platform_handle"] != "" || web["status"] != session.StatusRinging {
		t.Errorf("web call = %v, want the caller's token, no handle, ringing, join_url %s", web, want)
	}
	// The join page's info: the token verified with the fleet's key, the account's
	// branding (account-update set it; account-get reads it back), the call ringing.
	logo := base64.StdEncoding.EncodeToString(testPNG(t))
	patched := s.expect(request{fn: "account-update", method: http.MethodPatch, pattern: "/v1/account", path: "/v1/account",
		body: `{"name":"Lambda Dental","brand_color":"#0a7b83","logo":"` + logo + `"}`, auth: auth,
		headers: map[string]string{"Content-Type": ctJSON}}, http.StatusOK)
	if got := s.expect(get("account-get", "/v1/account", "/v1/account"), http.StatusOK); got["name"] != "Lambda Dental" || got["logo"] == nil || patched["logo"] == nil {
		t.Errorf("account after PATCH = %v, want the name and logo set", got)
	}
	info := s.expect(request{fn: "join-info", method: http.MethodPost, pattern: "/join/info", path: "/join/info",
		body: `{"token":"` + web["participant_token"].(string) + `"}`, headers: map[string]string{"Content-Type": ctJSON}}, http.StatusOK)
	if b, _ := info["brand"].(map[string]any); info["state"] != "ready" || b == nil || b["name"] != "Lambda Dental" ||
		!strings.HasPrefix(fmt.Sprint(b["logo"]), "data:image/png;base64,") {
		t.Errorf("join info = %v, want the call ready and the account's branding with its logo", info)
	}
	s.logoScenario(acct.ID, logo)
	if got := s.expect(request{fn: "account-update", method: http.MethodPatch, pattern: "/v1/account", path: "/v1/account",
		body: `{"logo":null}`, auth: auth, headers: map[string]string{"Content-Type": ctJSON}}, http.StatusOK); got["logo"] != nil {
		t.Errorf("account after removing the logo = %v", got)
	}
	if ended := s.expect(request{fn: "sessions-delete", method: http.MethodDelete, pattern: "/v1/sessions/{id}",
		path: "/v1/sessions/" + web["id"].(string), auth: auth}, http.StatusOK); ended["end_reason"] != call.ReasonDeleted {
		t.Errorf("DELETE of the web call = %v, want ended, deleted", ended)
	}

	// A SIP call through platform-sip, transferred through calls-transfer and
	// call-transfers, and by its assistant through persona-transfer. Last, so that no list
	// above meets its records and events.
	s.withSIPSecret()
	s.sipScenario(lk, liveAuth, asstID)

	// Every function ran, and used exactly what template.yaml grants it.
	s.mu.Lock()
	recs := maps.Clone(s.recs)
	s.mu.Unlock()
	var missing []string
	for _, name := range functiontest.Names(t) {
		if _, ok := recs[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("functions not exercised by this test: %v (add them to the scenario)", missing)
	}
	for name, rec := range recs {
		checkGrants(t, name, rec.accesses(), !partial[name])
	}
}

// relay hands event-relay the stream record DynamoDB makes for the new events item.
func (s *stack) relay(evt callevent.Event) {
	t := s.t
	out, err := s.store.Client().GetItem(s.ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.refs["EventsTable"]), Key: map[string]ddbtypes.AttributeValue{"id": &ddbtypes.AttributeValueMemberS{Value: evt.ID}},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil || out.Item == nil {
		t.Fatalf("read event item: %v", err)
	}
	ev := readJSON(t, "dynamodb-stream-insert.json")
	rec := ev["Records"].([]any)[0].(map[string]any)["dynamodb"].(map[string]any)
	rec["Keys"] = map[string]any{"id": map[string]any{"S": evt.ID}}
	image := map[string]any{}
	for k, v := range out.Item {
		switch v := v.(type) {
		case *ddbtypes.AttributeValueMemberS:
			image[k] = map[string]any{"S": v.Value}
		case *ddbtypes.AttributeValueMemberN:
			image[k] = map[string]any{"N": v.Value}
		default:
			t.Fatalf("events item attribute %s: unexpected type %T", k, v)
		}
	}
	rec["NewImage"] = image
	b, _ := json.Marshal(ev)
	s.invoke("event-relay", b)
}

// receiveDelivery takes one message off the delivery queue.
func (s *stack) receiveDelivery() string { return s.receive("DeliveryQueue") }

// receive takes one message off the queue template.yaml names queue.
func (s *stack) receive(queue string) string {
	t := s.t
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	q := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(s.motoURL) })
	for range 20 {
		out, err := q.ReceiveMessage(s.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(s.refs[queue]),
			MaxNumberOfMessages: 1, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 1 {
			q.DeleteMessage(s.ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(s.refs[queue]), ReceiptHandle: out.Messages[0].ReceiptHandle})
			return *out.Messages[0].Body
		}
	}
	t.Fatalf("no message reached %s", queue)
	return ""
}

// deliver hands webhook-deliver a queue message as Lambda's SQS source does.
func (s *stack) deliver(body string) {
	ev := readJSON(s.t, "sqs-from-eventbridge.json")
	ev["Records"].([]any)[0].(map[string]any)["body"] = body
	b, _ := json.Marshal(ev)
	var resp events.SQSEventResponse
	if err := json.Unmarshal(s.invoke("webhook-deliver", b), &resp); err != nil {
		s.t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 0 {
		s.t.Errorf("webhook-deliver failures: %+v", resp.BatchItemFailures)
	}
}

// readActions are the actions that only read.
var readActions = []string{"dynamodb:GetItem", "dynamodb:Scan", "dynamodb:Query", "dynamodb:BatchGetItem", "dynamodb:DescribeTable"}

// partial are functions the scenario cannot run to the end here: their accesses must
// be granted, but not every grant is used.
var partial = map[string]bool{
	// Human-mode sessions: the assistant tables are for assistant mode.
	"sessions-create": true,
	// An outbound call's answer and a customer_decides inbound call: accounts,
	// assistants and versions are for assistant-mode inbound calls, which the local
	// stack's end-to-end tests route.
	"platform-sim": true,
	// An assistant-mode inbound call and its hangup: the decision and webhook tables are
	// for customer_decides, which e2e/sip covers with real phones.
	"platform-sip": true,
	// Its reconcile reads the SIP trunks once LiveKit's SIP API has answered, and this
	// livekit-server has no SIP bridge (e2e/sip reconciles with one).
	"session-sweeper": true,
	// A SIP line with an assistant: the version is read only when a version is pinned.
	"lines-create": true,
	// Transfers of sim calls, refused: the writes are for a SIP call's completed transfer,
	// which e2e/sip covers with real phones.
	"calls-transfer":   true,
	"persona-transfer": true,
	// A queued transfer of a SIP call whose leg is not in its room (this livekit-server
	// has no SIP bridge): recorded failed, so no call.ended; e2e/sip completes transfers
	// with real phones.
	"call-transfers": true,
	// A call with no recording: 404 recording_not_found, nothing marked deleted. A
	// recorded call needs a persona worker (TestRecordingEndToEnd in e2e/sessions).
	"calls-recording-delete": true,
	// Its writes follow a participant leaving a room, which needs a WebRTC client in
	// the room: the local stack's end-to-end tests cover that path.
	"livekit-webhook": true,
	// Its campaign's window is closed: nothing is dialled or settled, so the session,
	// call, event and recipient writes are for a campaign with calls to place, which the
	// local stack's TestCampaign (e2e/sessions) runs.
	"campaign-runner": true,
	// A tool request for a call it does not know: the session, assistant and version
	// reads of a tool that runs are covered by the local stack's TestToolsEndToEnd.
	"persona-tool": true,
}

// checkGrants compares what a function did with its grants in template.yaml (the
// explicit statements grantgen writes, parsed by dynamoGrants): every table and action
// it used is granted; with all set, every table it is granted was used, written where it
// may write, and deleted from where it may delete, except where a delete happens only
// on a failure (an Idempotency-Key released after a 5xx, a create that failed before its
// dial), which this scenario does not provoke.
func checkGrants(t *testing.T, name string, used map[access]bool, all bool) {
	t.Helper()
	granted := functiontest.DynamoGrants(t, name) // table logical id -> actions
	// GRANTS_DUMP=<file> appends what each function did ("function table action" lines):
	// what to put in wire.Writes for a new function.
	if f := os.Getenv("GRANTS_DUMP"); f != "" {
		fh, _ := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		for a := range used {
			fmt.Fprintln(fh, name, a.Table, a.Action)
		}
		fh.Close()
	}
	wrote, deleted := map[string]bool{}, map[string]bool{}
	usedTables := map[string]bool{}
	for a := range used {
		usedTables[a.Table] = true
		if !slices.Contains(granted[a.Table], a.Action) {
			t.Errorf("%s used %s on %s, which template.yaml does not grant it (grants: %v)", name, a.Action, a.Table, granted[a.Table])
		}
		switch {
		case a.Action == "dynamodb:DeleteItem":
			deleted[a.Table] = true
		case !slices.Contains(readActions, a.Action):
			wrote[a.Table] = true
		}
	}
	for table, actions := range granted {
		switch {
		case !all:
		case !usedTables[table]:
			t.Errorf("%s is granted %v on %s but never used it", name, actions, table)
		case slices.Contains(actions, "dynamodb:PutItem") && !wrote[table]:
			t.Errorf("%s may write %s but never did: drop its Write in wire.Writes", name, table)
		case slices.Contains(actions, "dynamodb:DeleteItem") && !deleted[table] && !deletesOnFailure(name, table):
			t.Errorf("%s may delete from %s but never did: drop its Delete in wire.Writes", name, table)
		}
	}
}

// deletesOnFailure: tables a function deletes from only when a request fails, which the
// scenario does not provoke: the Idempotency-Key a 5xx releases, and the session and call
// a create that failed before its dial discards.
func deletesOnFailure(name, table string) bool {
	return table == "IdempotencyTable" ||
		name == "sessions-create" && (table == "SessionsTable" || table == "CallsTable")
}

// ringingInbound is an inbound call ringing on a customer_decides line, with its session,
// as the platform-sim function records it before it asks the customer.
func ringingInbound(accountID, lineID string, now time.Time) (session.Session, call.Call) {
	ses := session.Session{ID: ident.New("ses"), AccountID: accountID, LineID: lineID, Mode: session.ModeHuman,
		Media: "video", PlatformHandle: "sim:caller", Status: session.StatusRinging, CreatedAt: now}
	c := call.Call{ID: ident.New("call"), AccountID: accountID, Direction: call.Inbound, LineID: lineID,
		From: "sim:caller", To: "+15550109999", Media: "video", Status: call.StatusRinging,
		HandledBy: call.HandledByCustomer, SessionID: ses.ID, Platform: "sim", StartedAt: now}
	ses.CallID = c.ID
	return ses, c
}

// TestMalformedSettingStopsTheFunction: a function whose MAX_SESSION_MINUTES does not
// parse (or is out of range) refuses to start, and its log says which variable is wrong,
// instead of running with the default (as the sweeper once did).
func TestMalformedSettingStopsTheFunction(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds every function")
	}
	for _, tc := range []struct{ name, fn, value string }{
		{"not a number, the sweeper", "session-sweeper", "ten"},
		{"out of range, the sweeper", "session-sweeper", "0"},
		{"not a number, an HTTP function", "assistants-get", "1h"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := []string{"MAX_SESSION_MINUTES=" + tc.value, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test",
				"AWS_EC2_METADATA_DISABLED=true", "AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:9"}
			p, err := runtimeapi.Run(bootstrap(t, tc.fn), tc.fn, env)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop()
			select {
			case <-p.Exited():
			case <-time.After(20 * time.Second):
				t.Fatalf("%s with MAX_SESSION_MINUTES=%q still runs; log:\n%s", tc.fn, tc.value, p.Output())
			}
			if out := p.Output(); !strings.Contains(out, "MAX_SESSION_MINUTES") {
				t.Errorf("%s refused to start, but its log does not name MAX_SESSION_MINUTES:\n%s", tc.fn, out)
			}
		})
	}
}

// testPNG is a small PNG logo.
func testPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 32, 32))
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
