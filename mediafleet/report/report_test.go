package report

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/livekit/protocol/auth"

	"github.com/bridgeline/bridgeline/shared/lktoken"
	"github.com/bridgeline/bridgeline/shared/persona"
)

const key, secret = "APIfleet", "fleet-secret-fleet-secret-fleet-secret-00"

func TestSendIsVerified(t *testing.T) {
	keys := lktoken.KeyPair(key, secret)
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
		rep, err := persona.VerifyReport(r, keys)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		got <- rep
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	ms := int64(420)
	c := &Client{BaseURL: srv.URL, APIKey: key, APISecret: secret}
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
	keys := lktoken.KeyPair(key, secret)
	body := `{"kind":"ended","call_id":"call_1"}`
	good, err := Sign([]byte(body), key, secret)
	if err != nil {
		t.Fatal(err)
	}
	otherKey, _ := Sign([]byte(body), key, "another-secret-another-secret-another-00")
	otherBody, _ := Sign([]byte(`{"kind":"ended","call_id":"call_2"}`), key, secret)
	// A LiveKit webhook token: same key, right body hash, but no report subject.
	sum := sha256.Sum256([]byte(body))
	webhookStyle, _ := auth.NewAccessToken(key, secret).SetValidFor(time.Minute).
		SetSha256(base64.StdEncoding.EncodeToString(sum[:])).ToJWT()

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
		{"not json", mustSign(t, "nope"), "nope", persona.ErrReportMalformed},
		{"no call id", mustSign(t, `{"kind":"ended"}`), `{"kind":"ended"}`, persona.ErrReportMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, persona.ReportPath, strings.NewReader(tc.body))
			if tc.authz != "" {
				r.Header.Set("Authorization", tc.authz)
			}
			_, err := persona.VerifyReport(r, keys)
			if !errors.Is(err, tc.want) && !(tc.want == nil && err == nil) {
				t.Errorf("VerifyReport = %v, want %v", err, tc.want)
			}
		})
	}
}

func mustSign(t *testing.T, body string) string {
	t.Helper()
	s, err := Sign([]byte(body), key, secret)
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
	c := &Client{BaseURL: srv.URL, APIKey: key, APISecret: secret}
	if err := c.Send(context.Background(), persona.Report{Kind: "ended", CallID: "c"}); err == nil {
		t.Error("Send = nil, want the 400")
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("attempts = %d, want 1 (a 400 is not retried)", n)
	}
}
