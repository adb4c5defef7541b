// Package httpapi is Bridgeline's HTTP layer: the route table (one entry per Lambda
// function), the middleware every request passes (request id, body limit, API-key auth,
// rate limit, idempotency), strict JSON decoding, the error shape and the handlers. The
// same handlers serve the local stack and each Lambda.
package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/idempotency"
)

// MaxBodyBytes is the largest request body accepted (413 past it), unless the route
// sets its own MaxBody.
const MaxBodyBytes = 256 << 10

// API is the route table and the middleware every request passes (request id, body
// limit, API-key auth, rate limit, idempotency). New builds it; each resource's handlers
// are a route group of their own (Assistants, Lines, Keys, Webhooks, CallAnswers,
// Sessions, Receivers) whose Routes it serves.
type API struct {
	accounts    account.Store
	idempotency idempotency.Store
	routes      []Route
	settings
}

// settings are what an Option sets; New starts from defaults().
type settings struct {
	// limiter limits each account's request rate; nil (the default) turns limiting off.
	limiter RateLimiter
	logger  *slog.Logger
	clock   func() time.Time
}

func defaults() settings { return settings{logger: slog.Default(), clock: time.Now} }

// Option sets one of the API's settings; the ones not given keep their defaults.
type Option func(*settings)

// WithLimiter limits each account's request rate (default: no limit).
func WithLimiter(l RateLimiter) Option { return func(s *settings) { s.limiter = l } }

// WithLog receives the API's logs (default slog.Default()).
func WithLog(l *slog.Logger) Option {
	return func(s *settings) {
		if l != nil {
			s.logger = l
		}
	}
}

// WithClock is the API's clock (default time.Now).
func WithClock(now func() time.Time) Option {
	return func(s *settings) {
		if now != nil {
			s.clock = now
		}
	}
}

// New is the API serving routes, authenticating API keys against accounts and keeping
// the Idempotency-Key records in idempotency.
func New(accounts account.Store, idempotency idempotency.Store, routes []Route, opts ...Option) (*API, error) {
	if accounts == nil || idempotency == nil {
		return nil, errors.New("httpapi: New needs the accounts and the idempotency store")
	}
	a := &API{accounts: accounts, idempotency: idempotency, routes: slices.Clone(routes), settings: defaults()}
	for _, o := range opts {
		o(&a.settings)
	}
	return a, nil
}

// With is a copy of the API that serves routes as well (a test adds the sim's pages or
// the session routes to a stack this way).
func (a *API) With(routes ...Route) *API {
	c := *a
	c.routes = slices.Concat(a.routes, routes)
	return &c
}

// Route is one endpoint: in the AWS shape, one Lambda function.
type Route struct {
	// Function names the Lambda that serves the route (functions/<Function>).
	Function string
	Method   string
	// Pattern is a net/http pattern path such as /v1/assistants/{id}.
	Pattern string
	// Public routes take no API key (internal receivers verify their own signatures).
	Public bool
	// MaxBody is the largest body the route accepts; 0 means MaxBodyBytes. Internal
	// receivers whose senders have their own, larger limit (a persona worker's final
	// report of a long call) set it, so the customer API's limit does not cut them.
	MaxBody int64
	// Multipart routes take a multipart/form-data body (an upload) instead of JSON.
	Multipart bool
	// File routes take a file as the body, in media types of their own the handler
	// checks (a list of recipients as CSV or JSON Lines), instead of JSON.
	File bool
	// ReplayOmits are the top-level response fields that hold a secret: they are left
	// out of the stored idempotent replay, so the idempotency table never keeps a
	// secret (a webhook endpoint's signing secret, a new API key, a participant token).
	// A replay answers the same status and object without them, unless ReplayRefill
	// puts fresh ones back. Every POST route whose answer carries a secret names it here
	// (e2e/contract's TestIdempotencyRecordsHoldNoSecret checks each route's record);
	// "object.field" names a field of a top-level object.
	ReplayOmits []string
	// ReplayRefill, when set, completes a replayed 2xx answer: it gets the stored body
	// (without ReplayOmits) and sets fresh values of the omitted fields, such as a
	// participant token minted anew for the session the first answer made. A field it
	// leaves unset stays out of the replay; an error is answered as the handler's would.
	ReplayRefill func(r *http.Request, body map[string]json.RawMessage) error
	// Keys is which API keys the route takes: whether an sk_test_ key may use it
	// (keymode.go). Every route that takes a key declares it; Public routes take none.
	Keys    KeyPolicy
	Handler HandlerFunc
}

// HandlerFunc serves one request and returns the status and value to write as JSON, or an
// error (an *apierr.Error is shown to the client; anything else is a 500). A status of 0
// means the handler wrote the response itself.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) (int, any, error)

// Routes is the whole route table.
func (a *API) Routes() []Route { return slices.Clone(a.routes) }

// Handler serves every route with API-key auth: the local stack.
func (a *API) Handler() http.Handler {
	return a.handler(a.Routes(), a.KeyAuth)
}

// FunctionHandler serves only the routes of one function, authenticating with auth (the
// Lambda authorizer's context in the AWS shape).
func (a *API) FunctionHandler(function string, auth func(http.Handler) http.Handler) (http.Handler, error) {
	var routes []Route
	for _, r := range a.Routes() {
		if r.Function == function {
			routes = append(routes, r)
		}
	}
	if len(routes) == 0 {
		return nil, fmt.Errorf("no route for function %q", function)
	}
	return a.handler(routes, auth), nil
}

func (a *API) handler(routes []Route, auth func(http.Handler) http.Handler) http.Handler {
	mux := http.NewServeMux()
	byPath := map[string]map[string]Route{}
	var paths []string
	for _, rt := range routes {
		if byPath[rt.Pattern] == nil {
			byPath[rt.Pattern] = map[string]Route{}
			paths = append(paths, rt.Pattern)
		}
		byPath[rt.Pattern][rt.Method] = rt
	}
	for _, p := range paths {
		methods := byPath[p]
		allowed := make([]string, 0, len(methods))
		for m := range methods {
			allowed = append(allowed, m)
		}
		sort.Strings(allowed)
		handlers := map[string]http.Handler{}
		for m, rt := range methods {
			var h http.Handler = a.serve(rt)
			if rt.Method == http.MethodPost && !rt.Public {
				h = a.idempotent(h, rt)
			}
			if !rt.Public {
				h = auth(a.rateLimited(a.keyMode(rt, h)))
			}
			handlers[m] = a.limitBody(h, rt.MaxBody, rt.Multipart || rt.File)
		}
		mux.Handle(p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h, ok := handlers[r.Method]
			if !ok {
				w.Header().Set("Allow", strings.Join(allowed, ", "))
				a.writeError(w, r, apierr.New(apierr.CodeMethodNotAllowed,
					fmt.Sprintf("%s is not allowed on this path; allowed: %s", r.Method, strings.Join(allowed, ", "))))
				return
			}
			h.ServeHTTP(w, r)
		}))
	}
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.writeError(w, r, apierr.New(apierr.CodeRouteNotFound, fmt.Sprintf("no route %s %s", r.Method, r.URL.Path)))
	}))
	return a.requestID(a.recoverer(mux))
}

// serve runs a HandlerFunc and writes its result.
func (a *API) serve(rt Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, body, err := rt.Handler(w, r)
		if err == nil && keyRuleUnasked(r) {
			// A LiveKeyForRealResource route answered a test key without asking
			// requireLiveKey: the route's handler forgot the rule.
			err = fmt.Errorf("%s %s answered an sk_test_ key without checking its resource (requireLiveKey)", rt.Method, rt.Pattern)
		}
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		if status == 0 {
			return // the handler wrote its own response (the local stack's sim pages)
		}
		writeJSON(w, status, body)
	})
}

// writeJSON writes v with status. A nil v writes no body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if v != nil {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.Encode(v)
	}
}

// errorJSON is the documented error shape.
type errorJSON struct {
	Error errorDetailJSON `json:"error"`
}

type errorDetailJSON struct {
	Type      string `json:"type"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	Param     string `json:"param,omitempty"`
	RequestID string `json:"request_id"`
}

// writeError writes err in the documented shape. Errors that are not *apierr.Error are
// logged with the request id and shown as "internal error".
func (a *API) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e, ok := apierr.As(err)
	if !ok {
		a.log().ErrorContext(r.Context(), "internal error", "request_id", RequestID(r.Context()),
			"method", r.Method, "path", r.URL.Path, "error", err.Error())
		e = apierr.New(apierr.CodeInternal, "internal error")
	}
	if e.Code == apierr.CodeRateLimited && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, e.Status(), errorJSON{Error: errorDetailJSON{
		Type: e.Type(), Code: e.Code, Message: e.Message, Param: e.Param, RequestID: RequestID(r.Context()),
	}})
}

func (a *API) log() *slog.Logger { return a.logger }

func (a *API) now() time.Time { return a.clock() }

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keyAccount
)

// RequestID returns the request's id (req_...).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(keyRequestID).(string)
	return id
}

// WithAccount marks a request as made by an account with a key of its; auth middleware
// calls it.
func WithAccount(ctx context.Context, c account.Caller) context.Context {
	return context.WithValue(ctx, keyAccount, c)
}

// AccountFrom returns the authenticated account of the request, with its key's mode.
func AccountFrom(ctx context.Context) account.Caller {
	c, _ := ctx.Value(keyAccount).(account.Caller)
	return c
}

// Passthrough mounts h as public routes of function, one per "METHOD /path" pattern: h
// writes its own responses (a status of 0 from the route's handler). The local stack
// mounts the simulated platform's API this way (sim.Patterns, through
// controlplane.Deps.Routes).
func Passthrough(function string, h http.Handler, patterns ...string) []Route {
	own := func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		h.ServeHTTP(w, r)
		return 0, nil, nil
	}
	routes := make([]Route, 0, len(patterns))
	for _, p := range patterns {
		method, path, _ := strings.Cut(p, " ")
		routes = append(routes, Route{Function: function, Method: method, Pattern: path, Public: true, Handler: own})
	}
	return routes
}
