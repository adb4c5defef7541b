// Package contracttest holds HTTP exchanges to the API's contract: a Contract sends
// requests to a server, validates every exchange (status, headers, body) against
// openapi.yaml and openapi-internal.yaml, and records which operation answered which
// status, so a test can require that each route it covers answered a validated success
// and a validated error. shared/httpapi's tests drive the handler stack on SQLite with
// it; the stack-backed contract tests (e2e/contract) drive the whole stack.
package contracttest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/bridgeline/bridgeline/shared/httpapi"
)

// The two documents at the repository root, seen from a test package two folders below
// it (shared/httpapi, e2e/contract): openapi.yaml is the customer contract;
// openapi-internal.yaml holds the routes that are not for customers (LiveKit's, the
// workers' and the platform's receivers, the sim) and borrows the contract's components
// by reference.
const (
	SpecPath         = "../../openapi.yaml"
	InternalSpecPath = "../../openapi-internal.yaml"
)

var textDecoders sync.Once

// The documents are loaded and validated once a test process: under -race, parsing and
// validating them took 2 s of CPU a test, most of shared/httpapi's. Callers share them
// and only read them.
var (
	docsMu sync.Mutex
	docs   = map[string]*openapi3.T{}
)

// cached returns the document key names, made by load on its first call. A load that
// fails is not kept: every caller that asks fails the same way.
func cached(tb testing.TB, key string, load func(tb testing.TB) *openapi3.T) *openapi3.T {
	tb.Helper()
	docsMu.Lock()
	defer docsMu.Unlock()
	if doc, ok := docs[key]; ok {
		return doc
	}
	doc := load(tb)
	docs[key] = doc
	return doc
}

// LoadSpec loads and validates both documents and returns the contract with the internal
// document's paths added, so that the route table is held to the two files together.
// The document is shared by every caller in the process: read it, never change it.
func LoadSpec(tb testing.TB) *openapi3.T {
	tb.Helper()
	// The sim's caller page serves HTML and scripts: their bodies are checked as text.
	textDecoders.Do(func() {
		for _, ct := range []string{"text/html", "text/javascript", "text/css"} {
			openapi3filter.RegisterBodyDecoder(ct, openapi3filter.FileBodyDecoder)
		}
	})
	return cached(tb, "both", func(tb testing.TB) *openapi3.T {
		doc := loadDoc(tb, SpecPath)
		internal := loadDoc(tb, InternalSpecPath)
		for path, item := range internal.Paths.Map() {
			if doc.Paths.Value(path) != nil {
				tb.Fatalf("%s is in both %s and %s", path, SpecPath, InternalSpecPath)
			}
			doc.Paths.Set(path, item)
		}
		return doc
	})
}

// CustomerSpec loads openapi.yaml alone (shared like LoadSpec's).
func CustomerSpec(tb testing.TB) *openapi3.T {
	tb.Helper()
	return LoadDoc(tb, SpecPath)
}

// LoadDoc loads one OpenAPI 3.1 document and validates it, once a process: the document
// is shared by every caller, read it, never change it.
func LoadDoc(tb testing.TB, path string) *openapi3.T {
	tb.Helper()
	return cached(tb, "file:"+path, func(tb testing.TB) *openapi3.T { return loadDoc(tb, path) })
}

func loadDoc(tb testing.TB, path string) *openapi3.T {
	tb.Helper()
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = true
	doc, err := loader.LoadFromFile(path)
	if err != nil {
		tb.Fatalf("load %s: %v", path, err)
	}
	if !doc.IsOpenAPI31OrLater() {
		tb.Fatalf("%s is OpenAPI %s, want 3.1", path, doc.OpenAPI)
	}
	if err := doc.Validate(loader.Context); err != nil {
		tb.Fatalf("validate %s: %v", path, err)
	}
	return doc
}

// Contract is one test's client: it sends requests to a server, validates every
// exchange against the document, and records which operation answered which status.
type Contract struct {
	T      *testing.T
	Doc    *openapi3.T
	Base   string // the server's URL
	Key    string // the API key requests carry
	Routes []httpapi.Route

	mu   sync.Mutex
	seen map[string]map[int]bool // RouteKey -> statuses validated
}

// New is a contract over the server at base, sending key, for the routes it serves
// (RequireCoverage's universe), checked against both documents.
func New(t *testing.T, base, key string, routes []httpapi.Route) *Contract {
	t.Helper()
	return &Contract{T: t, Doc: LoadSpec(t), Base: base, Key: key, Routes: routes, seen: map[string]map[int]bool{}}
}

// Call is one request and what it must get.
type Call struct {
	Method, Path, Body string
	Headers            []string // name, value pairs; an empty value removes the header
	Status             int
	Code               string // the error code of a 4xx/5xx
	// Valid says the request itself is valid by the document (the server accepts it, or
	// refuses it for a reason the document cannot express, such as an unknown id).
	Valid bool
}

// Reply is what a request got.
type Reply struct {
	Status int
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

// Str is the body's top-level string field key ("" when absent).
func (r Reply) Str(key string) string {
	s, _ := r.Body[key].(string)
	return s
}

// Do sends k, checks its status and error code, validates the exchange against the
// document and records the operation's status.
func (c *Contract) Do(k Call) Reply {
	c.T.Helper()
	req, err := http.NewRequest(k.Method, c.Base+k.Path, strings.NewReader(k.Body))
	if err != nil {
		c.T.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Key)
	if k.Body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(k.Headers); i += 2 {
		if k.Headers[i+1] == "" {
			req.Header.Del(k.Headers[i])
		} else {
			req.Header.Set(k.Headers[i], k.Headers[i+1])
		}
	}
	ctx := context.Background()
	if k.Valid {
		if err := CheckRequest(ctx, c.Doc, req, []byte(k.Body)); err != nil {
			c.T.Errorf("%s %s %s: the document refuses a request the server should accept: %v", k.Method, k.Path, k.Body, err)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.T.Fatal(err)
	}
	raw, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		c.T.Fatal(err)
	}
	r := Reply{Status: res.StatusCode, Header: res.Header, Raw: raw}
	json.Unmarshal(raw, &r.Body)
	if r.Status != k.Status {
		c.T.Errorf("%s %s %.200s = %d %.300s, want %d", k.Method, k.Path, k.Body, r.Status, raw, k.Status)
		return r
	}
	if k.Code != "" {
		e, _ := r.Body["error"].(map[string]any)
		if e["code"] != k.Code {
			c.T.Errorf("%s %s %.200s: code %v, want %s (%s)", k.Method, k.Path, k.Body, e["code"], k.Code, raw)
		}
	}
	if err := CheckResponse(ctx, c.Doc, req, []byte(k.Body), r.Status, r.Header, raw); err != nil {
		c.T.Errorf("%s %s %.200s = %d %.300s: response breaks the contract: %v", k.Method, k.Path, k.Body, r.Status, raw, err)
		return r
	}
	if route, _, err := FindOperation(c.Doc, k.Method, req.URL.Path); err == nil {
		c.mu.Lock()
		key := RouteKey(route.Method, route.Path)
		if c.seen[key] == nil {
			c.seen[key] = map[int]bool{}
		}
		c.seen[key][r.Status] = true
		c.mu.Unlock()
	}
	return r
}

// OK sends a valid request that must succeed with status.
func (c *Contract) OK(method, path, body string, status int, headers ...string) Reply {
	c.T.Helper()
	return c.Do(Call{Method: method, Path: path, Body: body, Headers: headers, Status: status, Valid: true})
}

// Fail sends a request that must fail with status and code.
func (c *Contract) Fail(method, path, body string, status int, code string, headers ...string) Reply {
	c.T.Helper()
	return c.Do(Call{Method: method, Path: path, Body: body, Headers: headers, Status: status, Code: code})
}

// FailValid sends a request the document accepts that the server must still refuse
// (an unknown id, a state rule).
func (c *Contract) FailValid(method, path, body string, status int, code string, headers ...string) Reply {
	c.T.Helper()
	return c.Do(Call{Method: method, Path: path, Body: body, Headers: headers, Status: status, Code: code, Valid: true})
}

// Raw is Do without the contract's checks, safe from many goroutines (t.Errorf is).
func (c *Contract) Raw(method, path, body string) Reply {
	req, err := http.NewRequest(method, c.Base+path, strings.NewReader(body))
	if err != nil {
		c.T.Error(err)
		return Reply{}
	}
	req.Header.Set("Authorization", "Bearer "+c.Key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.T.Error(err)
		return Reply{}
	}
	defer res.Body.Close()
	var r Reply
	r.Status, r.Header = res.StatusCode, res.Header
	json.NewDecoder(res.Body).Decode(&r.Body)
	return r
}

// Prefixed matches patterns that start with one of prefixes.
func Prefixed(prefixes ...string) func(string) bool {
	return func(p string) bool {
		for _, pre := range prefixes {
			if strings.HasPrefix(p, pre) {
				return true
			}
		}
		return false
	}
}

// RequireCoverage fails unless every route whose pattern matches answered at least one
// validated success and one validated error.
func (c *Contract) RequireCoverage(match func(pattern string) bool) {
	c.T.Helper()
	var missing []string
	for _, rt := range c.Routes {
		if !match(rt.Pattern) {
			continue
		}
		var okSeen, errSeen bool
		for s := range c.seen[RouteKey(rt.Method, rt.Pattern)] {
			okSeen = okSeen || s < 300
			errSeen = errSeen || s >= 400
		}
		if !okSeen || !errSeen {
			missing = append(missing, fmt.Sprintf("%s %s (success %v, error %v)", rt.Method, rt.Pattern, okSeen, errSeen))
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		c.T.Errorf("routes not covered by a validated success and error:\n%s", strings.Join(missing, "\n"))
	}
}

// WantMeta checks a reply's metadata object is want.
func WantMeta(t *testing.T, what string, r Reply, want map[string]string) {
	t.Helper()
	raw, ok := r.Body["metadata"].(map[string]any)
	if !ok {
		t.Errorf("%s: metadata = %v, want an object", what, r.Body["metadata"])
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

// FindOperation finds the path template and operation of the document that serve method
// and path, as net/http's ServeMux would: a literal segment beats a {wildcard}. It
// returns the method-not-allowed and not-found cases as errors.
func FindOperation(doc *openapi3.T, method, path string) (*routers.Route, map[string]string, error) {
	var best string
	var bestParams map[string]string
	bestLiterals := -1
	for _, tmpl := range doc.Paths.InMatchingOrder() {
		params, literals, ok := matchTemplate(tmpl, path)
		if ok && literals > bestLiterals {
			best, bestParams, bestLiterals = tmpl, params, literals
		}
	}
	if best == "" {
		return nil, nil, routers.ErrPathNotFound
	}
	item := doc.Paths.Value(best)
	op := item.GetOperation(method)
	if op == nil {
		return nil, nil, routers.ErrMethodNotAllowed
	}
	return &routers.Route{Spec: doc, Path: best, PathItem: item, Method: method, Operation: op}, bestParams, nil
}

func matchTemplate(tmpl, path string) (map[string]string, int, bool) {
	ts, ps := strings.Split(tmpl, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return nil, 0, false
	}
	params := map[string]string{}
	literals := 0
	for i, t := range ts {
		if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
			if ps[i] == "" {
				return nil, 0, false
			}
			v, err := url.PathUnescape(ps[i])
			if err != nil {
				return nil, 0, false
			}
			params[t[1:len(t)-1]] = v
			continue
		}
		if t != ps[i] {
			return nil, 0, false
		}
		literals++
	}
	return params, literals, true
}

// CheckResponse validates a real response (status, headers, body) against the document.
// req is the request that got it; its body is read from reqBody. The checks beyond the
// validator's: every response has Request-Id, and every error body's request_id is it.
func CheckResponse(ctx context.Context, doc *openapi3.T, req *http.Request, reqBody []byte, status int, header http.Header, body []byte) error {
	if !strings.HasPrefix(header.Get("Request-Id"), "req_") {
		return fmt.Errorf("no Request-Id header")
	}
	if status >= 400 && !strings.HasPrefix(req.URL.Path, "/sim/") { // the sim API has its own error shape
		var e struct {
			Error struct {
				RequestID string `json:"request_id"`
			} `json:"error"`
		}
		if err := json.Unmarshal(body, &e); err != nil {
			return fmt.Errorf("error body is not JSON: %v", err)
		}
		if e.Error.RequestID != header.Get("Request-Id") && header.Get("Idempotent-Replayed") != "true" {
			return fmt.Errorf("error.request_id %q is not the Request-Id header %q", e.Error.RequestID, header.Get("Request-Id"))
		}
	}
	route, params, err := FindOperation(doc, req.Method, req.URL.Path)
	switch err {
	case nil:
	case routers.ErrMethodNotAllowed:
		return checkComponentResponse(doc, "MethodNotAllowed", http.StatusMethodNotAllowed, status, header, body)
	case routers.ErrPathNotFound:
		return checkComponentResponse(doc, "RouteNotFound", http.StatusNotFound, status, header, body)
	default:
		return err
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: cloneRequest(req, reqBody), PathParams: params, Route: route,
		},
		Status:  status,
		Header:  header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(ctx, in); err != nil {
		return fmt.Errorf("%s %s: %w", route.Method, route.Path, err)
	}
	return nil
}

// CheckRequest validates a request against the document, for requests that the server is
// expected (or found) to accept.
func CheckRequest(ctx context.Context, doc *openapi3.T, req *http.Request, reqBody []byte) error {
	route, params, err := FindOperation(doc, req.Method, req.URL.Path)
	if err != nil {
		return err
	}
	in := &openapi3filter.RequestValidationInput{
		Request: cloneRequest(req, reqBody), PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	}
	return openapi3filter.ValidateRequest(ctx, in)
}

// cloneRequest copies req with body for the validator. A body of only whitespace is sent
// as none: the server reads it as an absent body, as the document says.
func cloneRequest(req *http.Request, body []byte) *http.Request {
	if len(bytes.TrimSpace(body)) == 0 {
		body = nil
	}
	c := req.Clone(context.Background())
	c.Body = io.NopCloser(bytes.NewReader(body))
	c.ContentLength = int64(len(body))
	if len(body) > 0 && c.Header.Get("Content-Type") == "" {
		c.Header.Set("Content-Type", "application/json")
	}
	return c
}

// checkComponentResponse validates a response the routing answers (404 of an unknown
// path, 405 of an unserved method) against the named components.responses entry.
func checkComponentResponse(doc *openapi3.T, name string, want, status int, header http.Header, body []byte) error {
	if status != want {
		return fmt.Errorf("status %d for a %s response, want %d", status, name, want)
	}
	ref := doc.Components.Responses[name]
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("components.responses.%s is missing", name)
	}
	for h, hr := range ref.Value.Headers {
		if hr.Value.Required && header.Get(h) == "" {
			return fmt.Errorf("%s: header %s missing", name, h)
		}
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("%s: body is not JSON: %v", name, err)
	}
	mt := ref.Value.Content.Get(header.Get("Content-Type"))
	if mt == nil {
		return fmt.Errorf("%s: Content-Type %q not documented", name, header.Get("Content-Type"))
	}
	if err := mt.Schema.Value.VisitJSON(v, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors()); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	return nil
}

// RouteKey names a route as openapi.yaml's paths do: ServeMux's exact-match marker {$}
// is the plain path there.
func RouteKey(method, pattern string) string {
	return method + " " + strings.TrimSuffix(pattern, "{$}")
}
