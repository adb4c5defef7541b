package httpapi_test

// The contract's own checks: openapi.yaml loads and validates as OpenAPI 3.1, its paths
// and the route table agree in both directions, and its error schemas agree with
// shared/apierr. contract_test.go drives the real handlers against it; fuzz_test.go
// throws arbitrary bodies at them. This file also holds the handler stack both use
// (newStack); the exchanges are validated by shared/httpapi/contracttest.

import (
	"cmp"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/avatars"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/httpapi/contracttest"
	"github.com/bridgeline/bridgeline/shared/joinpage"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
	"github.com/bridgeline/bridgeline/shared/toolcall"
	"github.com/bridgeline/bridgeline/shared/usage"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
	"gopkg.in/yaml.v3"
)

// stack is the real handler stack on a SQLite store, with every route that can be built
// here: the core routes, the webhook endpoint and event routes, and the call answer.
type stack struct {
	store      *sqlite.Store
	api        *httpapi.API
	assistants *assistant.Service
	handler    http.Handler
	endpts     *webhookendpoint.Service
	worker     *delivery.Worker
	accounts   *account.Service
	key        string // the account's API key
	otherKey   string // another account's key
	acctID     string
	lineID     string
}

func newStack(tb testing.TB, limiter *httpapi.Limiter) *stack {
	tb.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(tb.TempDir(), "contract.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	eps := &webhookendpoint.Service{Store: s, Destinations: egress.Policy{AllowLoopback: true}, Now: time.Now}
	hooks := &httpapi.Webhooks{Endpoints: eps, Events: s, Redeliver: &delivery.OutboxRedeliverer{Outbox: s}}
	// A recogniser that hears English and Spanish (Deepgram's, STT_LANGUAGES=en,es).
	assistants := &assistant.Service{Store: s, HostedVoices: []string{"alloy", "nova"}, Models: []string{"meta-llama/Llama-3.1-8B-Instruct", "gpt-4o-mini"},
		Languages: []string{"en", "es"}, Now: time.Now}
	api, err := httpapi.New(s, s, slices.Concat(coreRoutesIn(tb, s, assistants.HostedVoices, assistants.Models, []string{"gpt-4o-mini"}, assistants.Languages), hooks.Routes(),
		(&httpapi.CallAnswers{Decisions: s, Now: time.Now}).Routes(), (&httpapi.Usage{Reader: usage.Reader{Store: s}}).Routes(),
		(&httpapi.Quality{Versions: assistants, Store: s}).Routes(),
		(&httpapi.AccountSettings{Accounts: s, Destinations: egress.Policy{}, Now: time.Now}).Routes()),
		httpapi.WithLimiter(limiter), httpapi.WithLog(quiet))
	if err != nil {
		tb.Fatal(err)
	}
	accts := &account.Service{Store: s, Now: time.Now}
	a, key, err := accts.Create(ctx, "Acme", false)
	if err != nil {
		tb.Fatal(err)
	}
	_, other, err := accts.Create(ctx, "Other", false)
	if err != nil {
		tb.Fatal(err)
	}
	l, err := (&line.Service{Store: s, Assistants: s, Now: time.Now}).Provision(ctx, a.ID, sim.Name, "+15550100001", "Main")
	if err != nil {
		tb.Fatal(err)
	}
	w := &delivery.Worker{Outbox: s, Log: s, Subscribers: eps, Deliverer: &delivery.Deliverer{Endpoints: eps, Client: delivery.NewClient(egress.Policy{AllowLoopback: true})}, Logger: quiet}
	return &stack{store: s, api: api, assistants: assistants, handler: api.Handler(), endpts: eps, worker: w, accounts: accts,
		key: key, otherKey: other, acctID: a.ID, lineID: l.ID}
}

func TestOpenAPIDocumentIsValid(t *testing.T) {
	doc := contracttest.LoadSpec(t)
	if doc.Info == nil || !strings.Contains(doc.Info.Description, "x-bridgeline-function") {
		t.Errorf("info.description must say that x-bridgeline-function is the function name")
	}
}

// TestCustomerContract holds openapi.yaml to what makes it the customer's and a code
// generator's: only /v1 routes; operationIds a generator turns into good method names
// (lowerCamelCase, unique) with the serving function in x-bridgeline-function; response
// schemas that let new fields through while request schemas stay strict; an example on
// every operation and schema and a description on every property.
func TestCustomerContract(t *testing.T) {
	doc := contracttest.CustomerSpec(t)
	methodName := regexp.MustCompile(`^[a-z]+[A-Z][A-Za-z]*$`)
	seen := map[string]string{}
	for path, item := range doc.Paths.Map() {
		if !strings.HasPrefix(path, "/v1/") {
			t.Errorf("%s: only /v1 routes belong in the customer contract", path)
		}
		for method, op := range item.Operations() {
			name := contracttest.RouteKey(method, path)
			if !methodName.MatchString(op.OperationID) {
				t.Errorf("%s: operationId %q is not a lowerCamelCase verb and noun", name, op.OperationID)
			}
			if other, dup := seen[op.OperationID]; dup {
				t.Errorf("%s: operationId %q is also %s's", name, op.OperationID, other)
			}
			seen[op.OperationID] = name
			if fn, _ := op.Extensions["x-bridgeline-function"].(string); fn == "" {
				t.Errorf("%s: no x-bridgeline-function", name)
			}
			if slices.Contains(op.Tags, "internal") {
				t.Errorf("%s: tagged internal in the customer contract", name)
			}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema.Ref == "" {
					t.Errorf("%s: the request body is inline; name it in components/schemas", name)
				}
			}
			for code, ref := range op.Responses.Map() {
				for _, mt := range ref.Value.Content {
					if mt.Schema != nil {
						checkOpen(t, name+" "+code, mt.Schema, map[*openapi3.Schema]bool{})
					}
				}
			}
		}
	}
}

// TestCustomerContractDocumented: in openapi.yaml every component schema has an example
// and every property (of a component schema, a nested object or a webhook body) has a
// description. It reads the YAML itself because a loaded document resolves $ref and so
// loses a description written beside one.
func TestCustomerContractDocumented(t *testing.T) {
	b, err := os.ReadFile(contracttest.SpecPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]map[string]any `yaml:"schemas"`
		} `yaml:"components"`
		Webhooks map[string]map[string]any `yaml:"webhooks"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for name, s := range doc.Components.Schemas {
		if _, ok := s["examples"]; !ok {
			t.Errorf("schema %s has no examples", name)
		}
		describedProperties(t, name, s)
	}
	for name, item := range doc.Webhooks {
		describedProperties(t, "webhook "+name, item)
	}
}

// describedProperties reports every property under s, at any depth, without a description.
func describedProperties(t *testing.T, where string, s any) {
	t.Helper()
	switch v := s.(type) {
	case map[string]any:
		if props, ok := v["properties"].(map[string]any); ok {
			for name, p := range props {
				if pm, ok := p.(map[string]any); ok && pm["description"] == nil {
					t.Errorf("%s: property %s has no description", where, name)
				}
			}
		}
		for k, sub := range v {
			if k != "examples" && k != "example" {
				describedProperties(t, where, sub)
			}
		}
	case []any:
		for _, sub := range v {
			describedProperties(t, where, sub)
		}
	}
}

// checkOpen reports a response schema, or one it contains, that forbids properties it does
// not list: a strict client would break on the first new field.
func checkOpen(t *testing.T, where string, ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
	t.Helper()
	s := ref.Value
	if s == nil || seen[s] {
		return
	}
	seen[s] = true
	if s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has && len(s.Properties) > 0 {
		t.Errorf("%s: %s sets additionalProperties: false on a response", where, cmp.Or(ref.Ref, "an inline schema"))
	}
	for _, p := range s.Properties {
		checkOpen(t, where, p, seen)
	}
	for _, list := range [][]*openapi3.SchemaRef{s.OneOf, s.AnyOf, s.AllOf} {
		for _, sub := range list {
			checkOpen(t, where, sub, seen)
		}
	}
	if s.Items != nil {
		checkOpen(t, where, s.Items, seen)
	}
}

// TestOpenAPIMatchesRouteTable holds the document and the route table to each other: every
// route is a documented operation with the same method and path and operationId =
// Function, and every documented path and method is a route.
func TestOpenAPIMatchesRouteTable(t *testing.T) {
	doc := contracttest.LoadSpec(t)
	routes := map[string]httpapi.Route{}
	for _, r := range allRoutes(t) {
		k := contracttest.RouteKey(r.Method, r.Pattern)
		if _, dup := routes[k]; dup {
			t.Errorf("route %s is in the table twice", k)
		}
		routes[k] = r
	}
	ops := map[string]*openapi3.Operation{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops[contracttest.RouteKey(method, path)] = op
		}
	}
	for k, r := range routes {
		op, ok := ops[k]
		if !ok {
			t.Errorf("route %s (function %s) is not in openapi.yaml", k, r.Function)
			continue
		}
		if fn := operationFunction(op); fn != r.Function {
			t.Errorf("%s: operation %q names function %q, want %q", k, op.OperationID, fn, r.Function)
		}
		internal := slices.Contains(op.Tags, "internal")
		if r.Public != internal {
			t.Errorf("%s: Public=%v but tagged internal=%v", k, r.Public, internal)
		}
		if r.Public && (op.Security == nil || len(*op.Security) != 0) {
			t.Errorf("%s: a public route must say security: []", k)
		}
	}
	for k, op := range ops {
		if _, ok := routes[k]; !ok {
			t.Errorf("openapi.yaml documents %s (%s) but no route serves it", k, op.OperationID)
		}
	}
}

// allRoutes is every route the local stack serves: newStack's, the session, call and
// internal receiver routes (whose handlers need LiveKit, so they are listed here but
// driven in the session contract test), and the sim API `bridgeline dev` mounts.
func allRoutes(t *testing.T) []httpapi.Route {
	routes := newStack(t, nil).api.Routes()
	routes = append(routes, (&httpapi.Sessions{}).Routes()...)
	routes = append(routes, (&httpapi.SIPTrunks{}).Routes()...)   // driven by e2e/sip with real phones
	routes = append(routes, (&httpapi.Recordings{}).Routes()...)  // recording_routes_test.go
	routes = append(routes, (&httpapi.CallErasure{}).Routes()...) // erasure_test.go
	routes = append(routes, (&httpapi.Campaigns{}).Routes()...)   // campaigns_test.go, e2e/sessions
	routes = append(routes, (&httpapi.Receivers{SimSecret: "x", Tools: &toolcall.Service{}, Avatars: &avatars.Service{}}).Routes()...)
	routes = append(routes, httpapi.Passthrough(sim.Name, nil, sim.Patterns...)...)
	routes = append(routes, httpapi.Passthrough("join-page", nil, joinpage.Patterns...)...)
	return routes
}

// operationFunction is the function an operation names: x-bridgeline-function when
// several routes share one, else the operationId.
func operationFunction(op *openapi3.Operation) string {
	if fn, ok := op.Extensions["x-bridgeline-function"].(string); ok {
		return fn
	}
	return op.OperationID
}

// TestOpenAPIOperationsFollowConventions checks what every operation must document: the
// Request-Id header on every response, Idempotency-Key on every POST that takes a key,
// the list parameters on lists, Retry-After on 429, and the errors the middleware can
// answer before any handler runs.
func TestOpenAPIOperationsFollowConventions(t *testing.T) {
	doc := contracttest.LoadSpec(t)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := contracttest.RouteKey(method, path)
			public := slices.Contains(op.Tags, "internal")
			for code, ref := range op.Responses.Map() {
				if ref.Value == nil || ref.Value.Headers["Request-Id"] == nil || !ref.Value.Headers["Request-Id"].Value.Required {
					t.Errorf("%s %s: no required Request-Id header", name, code)
				}
				if s, _ := strconv.Atoi(code); s >= 400 && !hasErrorSchema(ref.Value, strings.HasPrefix(path, "/sim/")) {
					t.Errorf("%s %s: error response without the Error schema", name, code)
				}
			}
			want := []string{"500", "413"}
			if !public {
				want = append(want, "400", "401", "415", "429")
			}
			if strings.Contains(path, "{") {
				want = append(want, "404")
			}
			for _, code := range want {
				if op.Responses.Value(code) == nil {
					t.Errorf("%s: response %s not documented", name, code)
				}
			}
			if r := op.Responses.Value("429"); r != nil && r.Value.Headers["Retry-After"] == nil {
				t.Errorf("%s: 429 without Retry-After", name)
			}
			idem := op.Parameters.GetByInAndName("header", "Idempotency-Key") != nil
			if method == http.MethodPost && !public {
				if !idem {
					t.Errorf("%s: POST without the Idempotency-Key parameter", name)
				}
				for _, code := range []string{"409", "422"} {
					if op.Responses.Value(code) == nil {
						t.Errorf("%s: POST without %s (Idempotency-Key in use or reused)", name, code)
					}
				}
				for code, ref := range op.Responses.Map() {
					s, _ := strconv.Atoi(code)
					replayable := s < 500 && s != 401 && s != 413 && s != 415 && s != 429
					if replayable && ref.Value.Headers["Idempotent-Replayed"] == nil {
						t.Errorf("%s %s: no Idempotent-Replayed header", name, code)
					}
				}
			} else if idem {
				t.Errorf("%s: only POST takes Idempotency-Key", name)
			}
			if ok := op.Responses.Value("200"); ok != nil && method == http.MethodGet {
				if mt := ok.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil && mt.Schema.Value.Properties["has_more"] != nil && path != "/v1/avatars" && path != "/v1/voices" && path != "/v1/models" {
					if op.Parameters.GetByInAndName("query", "limit") == nil || op.Parameters.GetByInAndName("query", "starting_after") == nil ||
						op.Parameters.GetByInAndName("query", "ending_before") == nil {
						t.Errorf("%s: a list without limit, starting_after and ending_before", name)
					}
				}
			}
		}
	}
}

// hasErrorSchema reports whether an error response has the Error shape (or, for the sim
// API's own errors, the SimError shape).
func hasErrorSchema(r *openapi3.Response, sim bool) bool {
	mt := r.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return false
	}
	if sim && strings.HasSuffix(mt.Schema.Ref, "#/components/schemas/SimError") {
		return true
	}
	// Each status has its own complete schema (Error400, Error409...), so that a generated
	// client's error type keeps every field: it must have the whole shape, not an overlay.
	e := mt.Schema.Value.Properties["error"]
	if e == nil || e.Value == nil || !slices.Contains(mt.Schema.Value.Required, "error") {
		return false
	}
	for _, f := range []string{"type", "code", "message", "request_id"} {
		if e.Value.Properties[f] == nil || !slices.Contains(e.Value.Required, f) {
			return false
		}
	}
	return e.Value.Properties["param"] != nil
}

// TestOpenAPIErrorCodesMatchApierr reads every Code constant of shared/apierr and checks
// the document's ErrorCode lists exactly those, and that the error schema of each code's
// status admits the code with its type.
func TestOpenAPIErrorCodesMatchApierr(t *testing.T) {
	doc := contracttest.LoadSpec(t)
	codes := apierrCodes(t)
	var documented []string
	for _, v := range doc.Components.Schemas["ErrorCode"].Value.Enum {
		documented = append(documented, v.(string))
	}
	sort.Strings(documented)
	if fmt.Sprint(documented) != fmt.Sprint(codes) {
		t.Errorf("ErrorCode enum = %v\napierr codes   = %v", documented, codes)
	}
	for _, code := range codes {
		e := apierr.New(code, "x")
		name := fmt.Sprintf("Error%d", e.Status())
		ref := doc.Components.Schemas[name]
		if ref == nil {
			t.Errorf("code %s has status %d but there is no %s schema", code, e.Status(), name)
			continue
		}
		body := map[string]any{"error": map[string]any{
			"type": e.Type(), "code": code, "message": "x", "request_id": "req_01jd0000000000000000000000",
		}}
		if code == apierr.CodeInternal {
			body["error"].(map[string]any)["message"] = "internal error"
		}
		if err := ref.Value.VisitJSON(body, openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("%s (%d, %s) does not fit %s: %v", code, e.Status(), e.Type(), name, err)
		}
	}
}

// apierrCodes parses shared/apierr for its Code* constants.
func apierrCodes(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../apierr/apierr.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !strings.HasPrefix(n.Name, "Code") || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					v, _ := strconv.Unquote(lit.Value)
					// conflict is the operator's already-provisioned line (bridgeline's
					// own commands), never an answer of a customer route: each
					// customer-facing 409 has its own code.
					if v != apierr.CodeConflict {
						codes = append(codes, v)
					}
				}
			}
		}
	}
	if len(codes) < 10 {
		t.Fatalf("found only %d Code constants in apierr.go", len(codes))
	}
	sort.Strings(codes)
	return codes
}
