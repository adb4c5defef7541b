package contract_test

// The per-account limits over HTTP, on real parts (e2e/harness's stack: livekit-server,
// the sim, SQLite), every answer validated against openapi.yaml: concurrent sessions,
// platform_handle forms per platform, and what test keys may dial.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	protologger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/httpapi/contracttest"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/platform"
)

// phonePlatform stands for a telephone platform, which cannot run here: it dials E.164
// numbers with live keys only, as SIP will, and only counts the calls the control plane
// asks it to place, so a test can tell a refusal before the dial from a dial.
type phonePlatform struct{ dials atomic.Int64 }

func (p *phonePlatform) Name() string                    { return "pstn" }
func (p *phonePlatform) CheckHandle(handle string) error { return platform.CheckE164(handle) }
func (p *phonePlatform) CanTransfer() bool               { return true }
func (p *phonePlatform) TestKeys() bool                  { return false }
func (p *phonePlatform) Dial(_ context.Context, req platform.DialRequest) (string, error) {
	p.dials.Add(1)
	return "pstn_" + req.CallID, nil
}
func (p *phonePlatform) Answer(context.Context, string, string, platform.Room) error { return nil }
func (p *phonePlatform) Reject(context.Context, string, string) error                { return nil }
func (p *phonePlatform) Hangup(context.Context, string) error                        { return nil }

func TestContractSessionLimits(t *testing.T) {
	lksdk.SetLogger(protologger.GetDiscardLogger())
	phone := &phonePlatform{}
	s := harness.Start(t, harness.Options{RingDelay: time.Hour, Platforms: []platform.Platform{phone}})
	srv := httptest.NewServer(s.API.Handler())
	t.Cleanup(srv.Close)
	c := contracttest.New(t, srv.URL, s.APIKey, s.API.Routes())
	ctx := context.Background()
	own := func(n *int) {
		t.Helper()
		if _, err := s.Store.SetMaxConcurrentSessions(ctx, s.AccountID, n); err != nil {
			t.Fatal(err)
		}
	}
	three := 3
	own(&three)

	// 8 creates at once against the account's own limit of 3: exactly 3 are created.
	const tries = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	var created []string
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := c.Raw("POST", "/v1/sessions", `{"platform_handle":"sim:caller-`+string(rune('a'+i))+`","media":"audio"}`)
			mu.Lock()
			defer mu.Unlock()
			statuses[r.Status]++
			if r.Status == http.StatusCreated {
				created = append(created, r.Str("id"))
			}
		}()
	}
	wg.Wait()
	t.Logf("%d concurrent POST /v1/sessions at limit 3: %v", tries, statuses)
	if statuses[http.StatusCreated] != 3 || statuses[http.StatusTooManyRequests] != tries-3 {
		t.Fatalf("%d concurrent creates at limit 3: statuses %v, want 3 x 201 and %d x 429", tries, statuses, tries-3)
	}
	over := c.Fail("POST", "/v1/sessions", `{"platform_handle":"sim:over"}`, 429, "concurrent_session_limit", "Idempotency-Key", "limit-1")
	if ra := over.Header.Get("Retry-After"); ra != "" {
		t.Errorf("concurrent_session_limit sent Retry-After %q, want none", ra)
	}
	// The form of the handle is checked before the limit: a bad one is a 400 still.
	for _, h := range []string{"+1555", "alice", "sim:", "sim:two words", "15550100002"} {
		r := c.Fail("POST", "/v1/sessions", `{"platform_handle":"`+h+`"}`, 400, "parameter_invalid")
		if msg := errMessage(r); !strings.Contains(msg, "E.164") || !strings.Contains(msg, "sim:<name>") {
			t.Errorf("platform_handle %q on a sim line: message %q, want both sim forms named", h, msg)
		}
	}
	// A session that ends gives its place back; the refused request's key was not kept,
	// so its retry runs and is created.
	c.OK("DELETE", "/v1/sessions/"+created[0], "", 200)
	retry := c.OK("POST", "/v1/sessions", `{"platform_handle":"sim:over"}`, 201, "Idempotency-Key", "limit-1")
	if retry.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("the retry after a slot came back was replayed: %s", retry.Raw)
	}
	c.Fail("POST", "/v1/sessions", `{"platform_handle":"sim:again"}`, 429, "concurrent_session_limit")

	// Inbound calls take places too: over the limit, an assistant line's and a
	// customer_decides line's calls are declined.
	asst := c.OK("POST", "/v1/assistants", `{"name":"Ada","system_prompt":"Be kind.","greeting":"Hello.","avatar_id":"ava_iris"}`, 201).Str("id")
	c.OK("POST", "/v1/assistants/"+asst+"/publish", "", 201)
	c.OK("POST", "/v1/lines/"+s.Lines[harness.Line1].ID+"/assign", `{"assistant_id":"`+asst+`"}`, 200)
	c.OK("PATCH", "/v1/lines/"+s.Lines[harness.Line2].ID, `{"inbound_mode":"customer_decides"}`, 200)
	for _, to := range []string{harness.Line1, harness.Line2} {
		status, raw, err := s.Request(http.MethodPost, "/sim/calls", map[string]any{"from": "+15551230001", "to": to, "media": "audio"}, "")
		if err != nil || status != http.StatusCreated {
			t.Fatalf("place an inbound call to %s = %d %s, %v", to, status, raw, err)
		}
	}
	harness.WaitFor(t, 30*time.Second, "both inbound calls declined over the limit", func() bool {
		list, _ := c.OK("GET", "/v1/calls?limit=10", "", 200).Body["data"].([]any)
		declined := 0
		for _, v := range list {
			m := v.(map[string]any)
			if m["direction"] == "inbound" && m["status"] == "declined" && m["end_reason"] == "concurrent_session_limit" && m["session_id"] == nil {
				declined++
			}
		}
		return declined == 2
	})

	// A web call takes a place like any session: refused when none is free, and, given
	// the place a session that ended freed, it holds that place against the next.
	webCall := `{"mode":"assistant","assistant_id":"` + asst + `","media":"audio"}`
	c.Fail("POST", "/v1/sessions", webCall, 429, "concurrent_session_limit")
	c.OK("DELETE", "/v1/sessions/"+created[1], "", 200)
	c.OK("POST", "/v1/sessions", webCall, 201)
	c.Fail("POST", "/v1/sessions", `{"platform_handle":"sim:again"}`, 429, "concurrent_session_limit")
	c.Fail("POST", "/v1/sessions", webCall, 429, "concurrent_session_limit")

	// Test keys call only through the sim; a live key calls through any platform, each
	// in the forms that platform dials.
	own(nil)
	phoneLine, err := (&line.Service{Store: s.Store, Assistants: s.Store, Now: time.Now}).Provision(ctx, s.AccountID, "pstn", "+15550109999", "phone")
	if err != nil {
		t.Fatal(err)
	}
	r := c.Fail("POST", "/v1/sessions", `{"platform_handle":"+15550107001","line_id":"`+phoneLine.ID+`"}`, 403, "live_key_required")
	if !strings.Contains(errMessage(r), "sk_live_") {
		t.Errorf("live_key_required message %q does not say which key to use", errMessage(r))
	}
	liveKey, _, err := (&account.Service{Store: s.Store, Now: time.Now}).AddKey(ctx, s.AccountID, true)
	if err != nil {
		t.Fatal(err)
	}
	live := []string{"Authorization", "Bearer " + liveKey}
	r = c.Fail("POST", "/v1/sessions", `{"platform_handle":"sim:alice","line_id":"`+phoneLine.ID+`"}`, 400, "parameter_invalid", live...)
	if msg := errMessage(r); !strings.Contains(msg, "E.164") || strings.Contains(msg, "sim:<name>") {
		t.Errorf("sim handle on a phone line: message %q, want E.164 only", msg)
	}
	if got := phone.dials.Load(); got != 0 {
		t.Errorf("calls placed on the phone platform by refused requests = %d, want 0", got)
	}
	c.OK("POST", "/v1/sessions", `{"platform_handle":"+15550107001","line_id":"`+phoneLine.ID+`"}`, 201, live...)
	c.OK("POST", "/v1/sessions", `{"platform_handle":"sim:bob","media":"audio"}`, 201, live...)
	if got := phone.dials.Load(); got != 1 {
		t.Errorf("calls placed on the phone platform = %d, want 1", got)
	}
}

func errMessage(r contracttest.Reply) string {
	e, _ := r.Body["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}
