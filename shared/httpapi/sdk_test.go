package httpapi_test

// The Go SDK (sdk/go, its own module) against the real handler stack on SQLite: the
// generated client with the hand-written layer creates, pages and fails the way the
// contract says, a POST whose answer is lost is retried with the same Idempotency-Key and
// applied once, and the SDK's webhook.Verify accepts what Bridgeline's signer signs.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
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
	keys  chan string
}

func (l *loseFirstAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if req.Method != http.MethodPost {
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

	// The first create's answer is lost; the retry carries the same key and is replayed.
	r, err := c.CreateAssistantWithResponse(ctx, nil, bridgeline.AssistantCreate{Name: "A0"})
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
		r, err := c.CreateAssistantWithResponse(ctx, nil, bridgeline.AssistantCreate{Name: fmt.Sprintf("A%d", i)})
		if err != nil || r.JSON201 == nil {
			t.Fatalf("create %d = %v %s", i, err, r.Body)
		}
		<-lose.keys
	}

	// Auto-pagination walks every page, newest first, each assistant once.
	limit := bridgeline.Limit(2)
	pages := 0
	var names []string
	page := func(ctx context.Context, after string) ([]bridgeline.Assistant, bool, error) {
		p := &bridgeline.ListAssistantsParams{Limit: &limit}
		if after != "" {
			p.StartingAfter = &after
		}
		r, err := c.ListAssistantsWithResponse(ctx, p)
		if err == nil {
			err = bridgeline.Check(r.HTTPResponse, r.Body)
		}
		if err != nil {
			return nil, false, err
		}
		pages++
		return r.JSON200.Data, r.JSON200.HasMore, nil
	}
	id := func(a bridgeline.Assistant) string { return a.Id }
	for a, err := range bridgeline.All(ctx, page, id) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, a.Name)
	}
	if fmt.Sprint(names) != "[A4 A3 A2 A1 A0]" || pages != 3 {
		t.Errorf("all assistants = %v in %d pages, want [A4 A3 A2 A1 A0] in 3 (the lost answer applied once)", names, pages)
	}

	// Each, for modules older than Go 1.23, walks the same pages and stops at the first
	// error of its callback, which it returns.
	enough := errors.New("enough")
	names, pages = nil, 0
	err = bridgeline.Each(ctx, page, id, func(a bridgeline.Assistant) error {
		names = append(names, a.Name)
		if len(names) == 3 {
			return enough
		}
		return nil
	})
	if !errors.Is(err, enough) || fmt.Sprint(names) != "[A4 A3 A2]" || pages != 2 {
		t.Errorf("Each = %v, %v in %d pages; want enough after [A4 A3 A2] in 2", err, names, pages)
	}

	// Errors are typed, with the fields every status carries.
	g, err := c.GetAssistantWithResponse(ctx, "asst_01jd3f4g5h6j7k8m9n0p1q2r3t")
	if err != nil {
		t.Fatal(err)
	}
	var apiErr *bridgeline.APIError
	if err := bridgeline.Check(g.HTTPResponse, g.Body); !errors.As(err, &apiErr) {
		t.Fatalf("get unknown = %v, want an *APIError", err)
	}
	if apiErr.Status != 404 || apiErr.Err.Code != "resource_not_found" || apiErr.Err.Param != "id" ||
		apiErr.Err.RequestID != g.HTTPResponse.Header.Get("Request-Id") || g.JSON404 == nil || g.JSON404.Error.Message == "" {
		t.Errorf("get unknown = %+v (generated %+v)", apiErr, g.JSON404)
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
	ev, err := sdkwebhook.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	ended, ok := ev.(bridgeline.CallEndedEvent)
	if !ok || ended.Data.EndReason != "declined" || ended.Data.AnsweredAt != nil {
		t.Errorf("Parse = %#v, want a CallEndedEvent, declined, never answered", ev)
	}
	if ev, err := sdkwebhook.Parse([]byte(`{"id":"evt_01jd3f4g5h6j7k8m9n0p1q2r3t","type":"call.transferred","data":{}}`)); err != nil {
		t.Errorf("an unknown event type = %v, want it parsed, not refused (new types are additive)", err)
	} else if _, ok := ev.(map[string]any); !ok {
		t.Errorf("an unknown event type parsed as %T", ev)
	}
}
