package webhook

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The Standard Webhooks test vector (spec libraries' shared fixture): a known secret,
// message id, timestamp and body, and the signature every conforming signer produces.
const (
	vecSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vecID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vecTimestamp = 1614265330
	vecBody      = `{"test": 2432232314}`
	vecSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	// A well-formed v1 signature over something else: the vectors' "invalid signature".
	otherSignature = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc="
)

func TestSignVector(t *testing.T) {
	for _, secret := range []string{vecSecret, strings.TrimPrefix(vecSecret, SecretPrefix)} {
		got, err := Sign(secret, vecID, time.Unix(vecTimestamp, 0), []byte(vecBody))
		if err != nil {
			t.Fatalf("Sign(%q) error: %v", secret, err)
		}
		if got != vecSignature {
			t.Errorf("Sign(%q) = %q, want %q", secret, got, vecSignature)
		}
	}
}

func vecHeaders(sig string) http.Header {
	h := http.Header{}
	h.Set(HeaderID, vecID)
	h.Set(HeaderTimestamp, strconv.Itoa(vecTimestamp))
	h.Set(HeaderSignature, sig)
	return h
}

func TestVerifyVector(t *testing.T) {
	at := func(d time.Duration) func() time.Time {
		return func() time.Time { return time.Unix(vecTimestamp, 0).Add(d) }
	}
	cases := []struct {
		name    string
		headers http.Header
		body    string
		secrets []string
		now     func() time.Time
		want    error
	}{
		{"valid", vecHeaders(vecSignature), vecBody, []string{vecSecret}, at(0), nil},
		{"valid without prefix", vecHeaders(vecSignature), vecBody, []string{strings.TrimPrefix(vecSecret, SecretPrefix)}, at(0), nil},
		{"valid among several signatures", vecHeaders(otherSignature + " v2," + strings.TrimPrefix(otherSignature, "v1,") + " " + vecSignature), vecBody, []string{vecSecret}, at(0), nil},
		{"valid with old secret during rotation", vecHeaders(vecSignature), vecBody, []string{"whsec_" + "c2VjcmV0LW5ldy1zZWNyZXQtbmV3LXNlY3JldC0wMQ==", vecSecret}, at(0), nil},
		{"4 minutes late", vecHeaders(vecSignature), vecBody, []string{vecSecret}, at(4 * time.Minute), nil},
		{"stale: replayed 5 minutes later", vecHeaders(vecSignature), vecBody, []string{vecSecret}, at(5*time.Minute + time.Second), ErrTimestampTooOld},
		{"replayed a day later", vecHeaders(vecSignature), vecBody, []string{vecSecret}, at(24 * time.Hour), ErrTimestampTooOld},
		{"from the future", vecHeaders(vecSignature), vecBody, []string{vecSecret}, at(-5*time.Minute - time.Second), ErrTimestampTooNew},
		{"altered body", vecHeaders(vecSignature), `{"test": 2432232315}`, []string{vecSecret}, at(0), ErrNoMatch},
		{"reserialized body", vecHeaders(vecSignature), `{"test":2432232314}`, []string{vecSecret}, at(0), ErrNoMatch},
		{"wrong signature", vecHeaders(otherSignature), vecBody, []string{vecSecret}, at(0), ErrNoMatch},
		{"truncated signature", vecHeaders(vecSignature[:8]), vecBody, []string{vecSecret}, at(0), ErrNoMatch},
		{"empty signature", vecHeaders("v1,"), vecBody, []string{vecSecret}, at(0), ErrNoMatch},
		{"only another scheme", vecHeaders("v1a," + strings.TrimPrefix(vecSignature, "v1,")), vecBody, []string{vecSecret}, at(0), ErrNoMatch},
		{"wrong secret", vecHeaders(vecSignature), vecBody, []string{"whsec_c2VjcmV0LW5ldy1zZWNyZXQtbmV3LXNlY3JldC0wMQ=="}, at(0), ErrNoMatch},
		{"missing id", without(vecHeaders(vecSignature), HeaderID), vecBody, []string{vecSecret}, at(0), ErrMissingHeader},
		{"missing timestamp", without(vecHeaders(vecSignature), HeaderTimestamp), vecBody, []string{vecSecret}, at(0), ErrMissingHeader},
		{"missing signature", without(vecHeaders(vecSignature), HeaderSignature), vecBody, []string{vecSecret}, at(0), ErrMissingHeader},
		{"timestamp not a number", with(vecHeaders(vecSignature), HeaderTimestamp, "hello"), vecBody, []string{vecSecret}, at(0), ErrInvalidTimestamp},
		{"timestamp moved", with(vecHeaders(vecSignature), HeaderTimestamp, strconv.Itoa(vecTimestamp+1)), vecBody, []string{vecSecret}, at(0), ErrNoMatch},
		{"id changed", with(vecHeaders(vecSignature), HeaderID, "msg_other"), vecBody, []string{vecSecret}, at(0), ErrNoMatch},
		{"secret not base64", vecHeaders(vecSignature), vecBody, []string{"whsec_!!!"}, at(0), ErrInvalidSecret},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Verifier{Secrets: tc.secrets, Now: tc.now}.Verify(tc.headers, []byte(tc.body))
			if !errors.Is(err, tc.want) {
				t.Errorf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

func without(h http.Header, key string) http.Header { h.Del(key); return h }

func with(h http.Header, key, value string) http.Header { h.Set(key, value); return h }

// TestRoundTrip signs with fresh secrets now and verifies with the package-level Verify,
// which uses the real clock: what a customer's handler does.
func TestRoundTrip(t *testing.T) {
	oldSecret, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	newSecret, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(newSecret, SecretPrefix) || newSecret == oldSecret {
		t.Fatalf("NewSecret() = %q, %q: want two distinct whsec_ secrets", oldSecret, newSecret)
	}
	body := []byte(`{"id":"evt_1","type":"call.ended","created_at":"2026-11-22T07:00:00.123Z","data":{}}`)
	h := http.Header{}
	// During rotation both secrets sign; a receiver holding either one accepts.
	if err := SetHeaders(h, []string{newSecret, oldSecret}, "evt_1", time.Now(), body); err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(h.Get(HeaderSignature))); n != 2 {
		t.Errorf("signatures = %d, want 2", n)
	}
	for _, s := range []string{oldSecret, newSecret} {
		if err := Verify(s, h, body); err != nil {
			t.Errorf("Verify with one of the signing secrets = %v, want nil", err)
		}
	}
	third, _ := NewSecret()
	if err := Verify(third, h, body); !errors.Is(err, ErrNoMatch) {
		t.Errorf("Verify with an unrelated secret = %v, want ErrNoMatch", err)
	}
	if err := SetHeaders(http.Header{}, nil, "evt_1", time.Now(), body); err == nil {
		t.Error("SetHeaders with no secret succeeded")
	}
}
