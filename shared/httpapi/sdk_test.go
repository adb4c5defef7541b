package httpapi_test

// The Go SDK (sdk/go, its own module) against the real handler stack on SQLite: the
// typed client creates, pages and fails the way the contract says, a POST whose answer is
// lost is retried with the same Idempotency-Key and applied once, a caller's key answers
// a repeated call with the first answer, and the SDK's webhook.Verify accepts what
// Bridgeline's signer signs and webhook.Parse reads it into a type a switch matches.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/webhook"
	bridgeline "github.com/bridgeline/bridgeline/sdk/go"
	sdkwebhook "github.com/bridgeline/bridgeline/sdk/go/webhook"
)

// loseFirstAnswer lets the first POST reach the server and then drops its answer, as a
// network failure after the request was applied would.
type loseFirstAnswer struct {
	lost  atomic.Bool
	posts atomic.Int32
	gets  atomic.Int32
	keys  chan string
}

func (l *loseFirstAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if req.Method != http.MethodPost {
		l.gets.Add(1)
		return resp, err
	}
	l.posts.Add(1)
	l.keys <- req.Header.Get("Idempotency-Key")
	if err == nil && l.lost.CompareAndSwap(false, true) {
		resp.Body.Close()
		return nil, errors.New("connection reset after the request was sent")
	}
	return resp, err
}

func TestGoSDKAgainstTheStack(t *testing.T) {
	st := newStack(t, nil)
	srv := httptest.NewServer(st.handler)
	defer srv.Close()
	ctx := context.Background()
	lose := &loseFirstAnswer{keys: make(chan string, 16)}
	c, err := bridgeline.New(srv.URL, st.key, bridgeline.Options{
		HTTPClient: &http.Client{Transport: lose, Timeout: 10 * time.Second}, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}

	// The first create's answer is lost; the retry carries the same key and is replayed
	// (the generated client shows the header).
	r, err := c.Generated.CreateAssistantWithResponse(ctx, nil, bridgeline.AssistantCreate{Name: "A0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := bridgeline.Check(r.HTTPResponse, r.Body); err != nil || r.JSON201 == nil {
		t.Fatalf("create = %v %s", err, r.Body)
	}
	if got := r.HTTPResponse.Header.Get("Idempotent-Replayed"); got != "true" {
		t.Errorf("the retried create: Idempotent-Replayed = %q, want true", got)
	}
	if k1, k2 := <-lose.keys, <-lose.keys; k1 == "" || k1 != k2 {
		t.Errorf("the retry's Idempotency-Key = %q, want the first one's %q", k2, k1)
	}
	for i := 1; i < 5; i++ {
		a, err := c.CreateAssistant(ctx, bridgeline.AssistantCreate{Name: fmt.Sprintf("A%d", i)})
		if err != nil || a.Name != fmt.Sprintf("A%d", i) {
			t.Fatalf("create %d = %+v, %v", i, a, err)
		}
		<-lose.keys
	}
	// A key of the caller's: a second call with it is the first one's answer.
	again := bridgeline.WithIdempotencyKey("sdk-test-create-a5")
	a5, err := c.CreateAssistant(ctx, bridgeline.AssistantCreate{Name: "A5"}, again)
	if err != nil {
		t.Fatal(err)
	}
	if k := <-lose.keys; k != "sdk-test-create-a5" {
		t.Errorf("Idempotency-Key = %q, want the caller's", k)
	}
	a5again, err := c.CreateAssistant(ctx, bridgeline.AssistantCreate{Name: "A5"}, again)
	if err != nil || a5again.Id != a5.Id {
		t.Errorf("the same create with the same key = %+v, %v; want the first answer, %s", a5again, err, a5.Id)
	}
	<-lose.keys
	if _, err := c.ArchiveAssistant(ctx, a5.Id); err != nil {
		t.Fatal(err)
	}
	<-lose.keys

	// An Iter walks every page, newest first, each assistant once, and fetches a page
	// only when the walk reaches it.
	active := bridgeline.ListAssistantsParamsStatusActive
	params := &bridgeline.ListAssistantsParams{Limit: bridgeline.Ptr(2), Status: &active}
	gets := lose.gets.Load()
	var names []string
	for a, err := range c.Assistants(ctx, params).All() {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, a.Name)
	}
	if pages := lose.gets.Load() - gets; fmt.Sprint(names) != "[A4 A3 A2 A1 A0]" || pages != 3 {
		t.Errorf("all active assistants = %v in %d pages, want [A4 A3 A2 A1 A0] in 3 (the lost answer applied once, the filter on every page)", names, pages)
	}
	gets, names = lose.gets.Load(), nil
	it := c.Assistants(ctx, params)
	for len(names) < 3 && it.Next() {
		names = append(names, it.Current().Name)
	}
	if pages := lose.gets.Load() - gets; it.Err() != nil || fmt.Sprint(names) != "[A4 A3 A2]" || pages != 2 {
		t.Errorf("the three newest = %v, %v in %d pages; want [A4 A3 A2] in 2", names, it.Err(), pages)
	}
	// Paging back is ListX's: an Iter refuses EndingBefore rather than walk the wrong way.
	before := c.Assistants(ctx, &bridgeline.ListAssistantsParams{EndingBefore: bridgeline.Ptr("asst_01jd3f4g5h6j7k8m9n0p1q2r3t")})
	if before.Next() || before.Err() == nil {
		t.Errorf("an Iter with EndingBefore: Next went on, Err = %v", before.Err())
	}

	// Errors are typed, with the fields every status carries.
	_, err = c.GetAssistant(ctx, "asst_01jd3f4g5h6j7k8m9n0p1q2r3t")
	var apiErr *bridgeline.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("get unknown = %v, want an *APIError", err)
	}
	if apiErr.Status != 404 || apiErr.Code != "resource_not_found" || apiErr.Param != "id" || apiErr.Type != "invalid_request_error" ||
		apiErr.Message == "" || !strings.HasPrefix(apiErr.RequestID, "req_") {
		t.Errorf("get unknown = %+v", apiErr)
	}
	// A failing page stops an Iter with the error.
	bad := c.Assistants(ctx, &bridgeline.ListAssistantsParams{StartingAfter: bridgeline.Ptr("not-an-id")})
	if bad.Next() || !errors.As(bad.Err(), &apiErr) || apiErr.Status != 400 {
		t.Errorf("an Iter over a refused page: Err = %v, want a 400 *APIError", bad.Err())
	}
}

func TestGoSDKVerifiesBridgelineSignatures(t *testing.T) {
	secret, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"id":"evt_01jd3f4g5h6j7k8m9n0p1q2r3t","type":"call.ended","created_at":"2026-11-22T07:01:00.000Z",` +
		`"data":{"call_id":"call_01jd3f4g5h6j7k8m9n0p1q2r3t","direction":"inbound","from":"+15550100009","to":"+15550100001",` +
		`"media":"video","handled_by":"customer","started_at":"2026-11-22T07:00:00.000Z","answered_at":null,` +
		`"ended_at":"2026-11-22T07:01:00.000Z","duration_ms":0,"end_reason":"declined","ended_by":"customer"}}`)
	now := time.Now()
	h := http.Header{}
	if err := webhook.SetHeaders(h, []string{secret}, "evt_01jd3f4g5h6j7k8m9n0p1q2r3t", now, body); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		body    []byte
		at      time.Time
		secrets []string
		ok      bool
	}{
		{"as signed", body, now, []string{secret}, true},
		{"beside an old secret", body, now, []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", secret}, true},
		{"other secret", body, now, []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, false},
		{"changed body", append([]byte(" "), body...), now, []string{secret}, false},
		{"too late", body, now.Add(6 * time.Minute), []string{secret}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := sdkwebhook.Verify(h, tc.body, tc.at, tc.secrets...)
			if (err == nil) != tc.ok {
				t.Errorf("Verify = %v, want ok=%v", err, tc.ok)
			}
		})
	}
	// Parse answers a pointer to the event's type, which a type switch matches.
	ev, err := sdkwebhook.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	ended, ok := ev.(*bridgeline.CallEndedEvent)
	if !ok || ended.Data.EndReason != "declined" || ended.Data.AnsweredAt != nil || ev.EventID() != "evt_01jd3f4g5h6j7k8m9n0p1q2r3t" {
		t.Errorf("Parse = %#v, want a *CallEndedEvent, declined, never answered", ev)
	}
	if ev, err := sdkwebhook.Parse([]byte(`{"id":"evt_01jd3f4g5h6j7k8m9n0p1q2r3t","type":"call.transferred","data":{}}`)); err != nil {
		t.Errorf("an unknown event type = %v, want it parsed, not refused (new types are additive)", err)
	} else if u, ok := ev.(*bridgeline.UnknownEvent); !ok || u.Type != "call.transferred" {
		t.Errorf("an unknown event type parsed as %#v", ev)
	}
	for _, bad := range []string{`{"id":"evt_01jd3f4g5h6j7k8m9n0p1q2r3t","data":{}}`, `not json`, `{"type":"call.ended","data":{"duration_ms":"long"}}`} {
		if ev, err := sdkwebhook.Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s) = %#v, want an error", bad, ev)
		}
	}
}
