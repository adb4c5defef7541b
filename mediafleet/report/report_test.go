package report

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/livekit/protocol/auth"

	"github.com/bridgeline/bridgeline/shared/persona"
)

// secret is the report secret; key and lkSecret are the fleet's LiveKit key, which
// livekit-server also holds and which must not sign a report.
const (
	secret        = "report-secret-report-secret-report-00"
	key, lkSecret = "APIfleet", "fleet-secret-fleet-secret-fleet-secret-00"
)

func TestSendIsVerified(t *testing.T) {
	got := make(chan persona.Report, 1)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != persona.ReportPath {
			http.NotFound(w, r)
			return
		}
		if calls.Add(1) == 1 { // the first answer is lost: the client retries
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		rep, err := persona.VerifyReport(r, secret)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		got <- rep
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	ms := int64(420)
	c := &Client{BaseURL: srv.URL, Secret: secret}
	want := persona.Report{Kind: persona.ReportEnded, CallID: "call_1", SessionID: "ses_1",
		At: time.Now().UTC().Truncate(time.Millisecond), EndReason: "caller_hangup",
		Metrics: persona.Metrics{FirstGreetingMS: &ms}}
	if err := c.Send(context.Background(), want); err != nil {
		t.Fatalf("Send: %v", err)
	}
	rep := <-got
	if rep.CallID != want.CallID || rep.Kind != want.Kind || rep.EndReason != want.EndReason ||
		!rep.At.Equal(want.At) || rep.Metrics.FirstGreetingMS == nil || *rep.Metrics.FirstGreetingMS != ms {
		t.Errorf("verified report = %+v, want %+v", rep, want)
	}
}

func TestVerifyRejects(t *testing.T) {
	body := `{"kind":"ended","call_id":"call_1"}`
	good, err := Sign([]byte(body), secret)
	if err != nil {
		t.Fatal(err)
	}
	otherKey, _ := Sign([]byte(body), "another-secret-another-secret-another-00")
	otherBody, _ := Sign([]byte(`{"kind":"ended","call_id":"call_2"}`), secret)
	// A LiveKit webhook token: the fleet's key, right body hash, but no report subject.
	sum := sha256.Sum256([]byte(body))
	webhookStyle, _ := auth.NewAccessToken(key, lkSecret).SetValidFor(time.Minute).
		SetSha256(base64.StdEncoding.EncodeToString(sum[:])).ToJWT()
	// What a worker signed before: a report token, subject and all, keyed with the
	// LiveKit API secret that livekit-server holds too. It no longer verifies.
	liveKitSigned, _ := auth.NewAccessToken(key, lkSecret).SetIdentity(persona.ReportSubject).SetValidFor(time.Minute).
		SetSha256(base64.StdEncoding.EncodeToString(sum[:])).ToJWT()
	liveKitSecretAsReportKey, _ := Sign([]byte(body), lkSecret)

	cases := []struct {
		name, authz, body string
		want              error
	}{
		{"good", good, body, nil},
		{"no header", "", body, persona.ErrReportUnsigned},
		{"wrong secret", otherKey, body, persona.ErrReportSignature},
		{"body swapped", otherBody, body, persona.ErrReportSignature},
		{"garbage token", "Bearer abc.def.ghi", body, persona.ErrReportSignature},
		{"webhook-style token", "Bearer " + webhookStyle, body, persona.ErrReportSignature},
		{"signed with the LiveKit secret, as before", "Bearer " + liveKitSigned, body, persona.ErrReportSignature},
		{"report token keyed with the LiveKit secret", liveKitSecretAsReportKey, body, persona.ErrReportSignature},
		{"not json", mustSign(t, "nope"), "nope", persona.ErrReportMalformed},
		{"no call id", mustSign(t, `{"kind":"ended"}`), `{"kind":"ended"}`, persona.ErrReportMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, persona.ReportPath, strings.NewReader(tc.body))
			if tc.authz != "" {
				r.Header.Set("Authorization", tc.authz)
			}
			_, err := persona.VerifyReport(r, secret)
			if !errors.Is(err, tc.want) && !(tc.want == nil && err == nil) {
				t.Errorf("VerifyReport = %v, want %v", err, tc.want)
			}
		})
	}
}

func mustSign(t *testing.T, body string) string {
	t.Helper()
	s, err := Sign([]byte(body), secret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSendGivesUpOnClientError(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "bad", http.StatusBadRequest)
	}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, Secret: secret}
	if err := c.Send(context.Background(), persona.Report{Kind: "ended", CallID: "c"}); err == nil {
		t.Error("Send = nil, want the 400")
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("attempts = %d, want 1 (a 400 is not retried)", n)
	}
}

// TestTooLargeReportIsTrimmedAndSent: a control plane that answers 413 (here one that
// still caps bodies at 256 KiB) gets the report again at once, halved until it fits, with the text of the
// oldest turns dropped and marked, the newest turns, the end reason and the metrics
// intact. Before, the worker gave up on a 413 and the call's ended report was lost.
func TestTooLargeReportIsTrimmedAndSent(t *testing.T) {
	const limit = 256 << 10
	got := make(chan persona.Report, 1)
	var sizes []int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sizes = append(sizes, int(r.ContentLength))
		mu.Unlock()
		if r.ContentLength > limit {
			http.Error(w, `{"error":{"code":"body_too_large"}}`, http.StatusRequestEntityTooLarge)
			return
		}
		rep, err := persona.VerifyReport(r, secret)
		switch {
		case err != nil:
			http.Error(w, err.Error(), http.StatusUnauthorized)
		default:
			got <- rep
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	defer srv.Close()

	const turns = 2000
	text := strings.Repeat("a long caller turn, word after word, ", 10) // ~370 bytes
	rep := persona.Report{Kind: persona.ReportEnded, CallID: "call_1", SessionID: "ses_1", At: time.Now().UTC(),
		EndReason: persona.EndCallerHangup}
	for i := range turns {
		rep.Transcript = append(rep.Transcript, persona.Turn{Speaker: persona.SpeakerCaller, Text: fmt.Sprint(i, text),
			StartMS: int64(i) * 1000, EndMS: int64(i)*1000 + 900})
	}
	c := &Client{BaseURL: srv.URL, Secret: secret, Attempts: 3}
	start := time.Now()
	if err := c.Send(context.Background(), rep); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Send took %v: a 413 should be answered at once, without backoff", took)
	}
	recv := <-got
	ok := len(sizes) >= 2 && sizes[0] > limit && sizes[len(sizes)-1] <= limit
	for i := 1; ok && i < len(sizes); i++ {
		ok = sizes[i] <= sizes[i-1]/2
	}
	if !ok {
		t.Errorf("request sizes = %v, want the whole report (> %d), then each at most half the one before, the last within the limit", sizes, limit)
	}
	if recv.EndReason != persona.EndCallerHangup || len(recv.Transcript) != turns {
		t.Fatalf("received %s with %d turns, want caller_hangup with all %d turns", recv.EndReason, len(recv.Transcript), turns)
	}
	trimmed := 0
	for i, turn := range recv.Transcript {
		if turn.TextTrimmed {
			if turn.Text != "" || (i > 0 && !recv.Transcript[i-1].TextTrimmed) {
				t.Fatalf("turn %d %+v: trimmed turns must be empty and come first (oldest)", i, turn)
			}
			trimmed++
		} else if turn.Text != fmt.Sprint(i, text) {
			t.Fatalf("turn %d text %.30q, want it intact", i, turn.Text)
		}
		if turn.StartMS != int64(i)*1000 {
			t.Fatalf("turn %d starts at %d, want its timing kept", i, turn.StartMS)
		}
	}
	if trimmed == 0 || trimmed == turns {
		t.Errorf("%d of %d turns trimmed, want the oldest only", trimmed, turns)
	}
}

func TestTrimFailsWhenNothingLeftToDrop(t *testing.T) {
	rep := persona.Report{Kind: persona.ReportEnded, CallID: "call_1", Transcript: []persona.Turn{{Speaker: "caller", Text: "hi"}}}
	if _, _, err := trim(rep, 10); err == nil {
		t.Errorf("trim to 10 bytes = nil error, want one: the report cannot fit")
	}
}

// TestCallToolIsVerifiedAndSentOnce: a tool request verifies as a tool request and never
// as a report (its own subject), is sent once even when the answer is a 5xx (a tool may
// act), and its answer comes back as it was.
func TestCallToolIsVerifiedAndSentOnce(t *testing.T) {
	var calls atomic.Int32
	var fail atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != persona.ToolPath {
			http.NotFound(w, r)
			return
		}
		if fail.Load() {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		body, _ := io.ReadAll(r.Body)
		asReport := r.Clone(context.Background())
		asReport.Body = io.NopCloser(bytes.NewReader(body))
		if _, err := persona.VerifyReport(asReport, secret); !errors.Is(err, persona.ErrReportSignature) {
			t.Errorf("a tool request verified as a report: %v", err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		req, err := persona.VerifyToolRequest(r, secret)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		if req.CallID != "call_1" || req.Name != "lookup_order" || string(req.Arguments) != `{"order_id":"6735"}` {
			t.Errorf("tool request %+v", req)
		}
		fmt.Fprint(w, `{"result":{"status":"shipped"},"status_code":200,"duration_ms":12}`)
	}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, Secret: secret}
	req := persona.ToolRequest{CallID: "call_1", ToolCallID: "call_0", Name: "lookup_order", Arguments: []byte(`{"order_id":"6735"}`)}
	res, err := c.CallTool(context.Background(), req)
	if err != nil || string(res.Result) != `{"status":"shipped"}` || res.Error != nil || res.DurationMS != 12 {
		t.Fatalf("CallTool = %+v, %v", res, err)
	}
	fail.Store(true)
	if _, err := c.CallTool(context.Background(), req); err == nil {
		t.Fatal("CallTool of a 502 succeeded")
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d requests for two tool calls, want no retry", n)
	}
}

// TestTrimDropsToolPayloads: a long call's report sheds its oldest tool calls' arguments
// and results too, keeping their name, error and duration.
func TestTrimDropsToolPayloads(t *testing.T) {
	big := []byte(`{"blob":"` + strings.Repeat("x", 4000) + `"}`)
	rep := persona.Report{Kind: persona.ReportEnded, CallID: "call_1", Transcript: []persona.Turn{
		{Speaker: persona.SpeakerTool, StartMS: 10, EndMS: 20, Tool: &persona.ToolUse{Name: "lookup_order", Arguments: big, Result: big, DurationMS: 10}},
		{Speaker: persona.SpeakerAssistant, Text: "Shipped.", StartMS: 30, EndMS: 40},
	}}
	body, n, err := trim(rep, 2000)
	if err != nil || n != 1 {
		t.Fatalf("trim = %d turns, %v", n, err)
	}
	var got persona.Report
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	tu := got.Transcript[0].Tool
	if tu == nil || tu.Name != "lookup_order" || tu.Arguments != nil || tu.Result != nil || tu.DurationMS != 10 || !got.Transcript[0].TextTrimmed ||
		got.Transcript[1].Text != "Shipped." {
		t.Errorf("trimmed transcript %+v (tool %+v)", got.Transcript, tu)
	}
	if rep.Transcript[0].Tool.Arguments == nil {
		t.Error("trim changed the report it was given")
	}
}
