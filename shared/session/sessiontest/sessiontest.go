// Package sessiontest runs the control plane's session path on real parts for tests and
// benchmarks: livekit-server, the SQLite store, the sim platform and the whole HTTP stack
// (the same httpapi router and middleware as the local stack) on 127.0.0.1, with an
// account, its API key and two sim lines.
package sessiontest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/decision"
	"github.com/bridgeline/bridgeline/events/delivery"
	lkserver "github.com/bridgeline/bridgeline/mediafleet/livekit"
	"github.com/bridgeline/bridgeline/mediafleet/livekit/livekittest"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/platform/sim/simhook"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

// Handles of the two sim lines every stack gets.
const (
	Line1 = "+15550100001"
	Line2 = "+15550100002"
)

// Options tune a stack.
type Options struct {
	// RingDelay is how long a dialled sim handle rings (default 10 ms).
	RingDelay time.Duration
	// RateLimit per API key, requests a second (0: off).
	RateLimit float64
	// Log receives the stack's logs (default: discarded).
	Log *slog.Logger
}

// Stack is a running control plane on real parts.
type Stack struct {
	URL       string // the API, http://127.0.0.1:port
	APIKey    string
	AccountID string
	Lines     map[string]line.Line // by handle

	Store   *sqlite.Store
	LiveKit *lkserver.Server
	RTC     *rtc.Client
	Sim     *sim.Sim
	Service *session.Service
	API     *httpapi.API
	Client  *http.Client
}

// Start brings a stack up for the test and stops it when the test ends.
func Start(t testing.TB, opts Options) *Stack {
	t.Helper()
	ctx := context.Background()
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The API's address must be known before livekit-server starts (its webhook URL), so
	// the server starts first with a handler filled in below.
	var handler atomic.Value
	handler.Store(http.Handler(http.NotFoundHandler()))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handler.Load().(http.Handler).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "bridgeline.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })

	lk := livekittest.Start(t, lkserver.Config{WebhookURLs: []string{srv.URL + httpapi.LiveKitWebhookPath}})
	lkc := lk.Config()
	rooms, err := rtc.New(rtc.Config{URL: lk.HTTPURL(), PublicURL: lk.WSURL(), APIKey: lkc.APIKey, APISecret: lkc.APISecret})
	if err != nil {
		t.Fatal(err)
	}
	ring := opts.RingDelay
	if ring == 0 {
		ring = 10 * time.Millisecond
	}
	simulator, err := sim.New(sim.Config{NotifyURL: srv.URL + simhook.Path, Secret: "sim-test-secret", RingDelay: ring, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		simulator.Close(c)
	})

	eps := &webhookendpoint.Service{Store: st}
	client := delivery.NewClient()
	client.Timeout = 0
	asker := &decision.Asker{Store: st, Events: st, Subscribers: eps, Logger: log,
		Deliverer: &delivery.Deliverer{Endpoints: eps, Client: client}}
	svc := &session.Service{Records: st, Lines: st, Assistants: st, Accounts: st, Rooms: rooms,
		Platforms: map[string]platform.Platform{sim.Name: simulator}, Decider: asker, Log: log, Now: time.Now}
	api := &httpapi.API{
		Accounts: st, Idempotency: st, Log: log, Now: time.Now,
		Assistants: &assistant.Service{Store: st, Now: time.Now},
		Lines:      &line.Service{Store: st, Assistants: st, Now: time.Now},
		Limiter:    httpapi.NewLimiter(opts.RateLimit, max(1, opts.RateLimit*2)),
	}
	api.Extra = append(api.Extra, (&httpapi.Sessions{Service: svc}).Routes()...)
	api.Extra = append(api.Extra, (&httpapi.Receivers{Sessions: svc, RTC: rooms, SimSecret: "sim-test-secret"}).Routes()...)
	api.Extra = append(api.Extra, (&httpapi.Webhooks{Endpoints: eps, Events: st}).Routes()...)
	api.Extra = append(api.Extra, (&httpapi.CallAnswers{Decisions: st}).Routes()...)
	apiHandler, simHandler := api.Handler(), simulator.Handler()
	handler.Store(http.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/sim/") {
			simHandler.ServeHTTP(w, r)
			return
		}
		apiHandler.ServeHTTP(w, r)
	})))

	acctSvc := account.Service{Store: st, Now: time.Now}
	acct, key, err := acctSvc.Create(ctx, "Test Co", false)
	if err != nil {
		t.Fatal(err)
	}
	lines := line.Service{Store: st, Assistants: st, Now: time.Now}
	byHandle := map[string]line.Line{}
	for _, h := range []string{Line1, Line2} {
		l, err := lines.Provision(ctx, acct.ID, sim.Name, h, "line "+h)
		if err != nil {
			t.Fatal(err)
		}
		byHandle[h] = l
	}
	return &Stack{URL: srv.URL, APIKey: key, AccountID: acct.ID, Lines: byHandle, Store: st, LiveKit: lk,
		RTC: rooms, Sim: simulator, Service: svc, API: api, Client: &http.Client{Timeout: 60 * time.Second}}
}

// Do sends an authenticated JSON request (body nil sends none) and decodes a JSON answer
// into out (nil skips). It returns the status.
func (s *Stack) Do(t testing.TB, method, path string, body, out any) int {
	t.Helper()
	status, raw, err := s.Request(method, path, body, s.APIKey)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
	return status
}

// Request is Do without a test: it returns the status and raw body.
func (s *Stack) Request(method, path string, body any, key string) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// WaitFor polls cond every 20 ms until it holds, failing the test after limit.
func WaitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Must fails the test on a status other than want.
func Must(t testing.TB, got, want int, what string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: status %d, want %d", what, got, want)
	}
}

// NewAccount makes another account with no lines and returns its API key.
func NewAccount(t testing.TB, s *Stack) string {
	t.Helper()
	_, key, err := (&account.Service{Store: s.Store, Now: time.Now}).Create(context.Background(), "Other Co", false)
	if err != nil {
		t.Fatal(err)
	}
	return key
}
