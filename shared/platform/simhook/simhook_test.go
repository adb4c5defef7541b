package simhook_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/simhook"
)

func TestVerify(t *testing.T) {
	now := time.Date(2026, 11, 22, 7, 0, 0, 0, time.UTC)
	n := platform.Notification{ID: "simevt_1", Event: platform.EventHangup, PlatformCallID: "simcall_1", At: now}
	body, _ := json.Marshal(n)
	good := simhook.SignNotification("s3cret", body, now)
	tests := []struct {
		name string
		body []byte
		sig  string
		at   time.Time
		want error
	}{
		{"valid", body, good, now, nil},
		{"valid within tolerance", body, good, now.Add(4 * time.Minute), nil},
		{"unsigned", body, "", now, simhook.ErrUnsigned},
		{"wrong secret", body, simhook.SignNotification("other", body, now), now, simhook.ErrSignature},
		{"altered body", bytes.Replace(body, []byte("hangup"), []byte("answered"), 1), good, now, simhook.ErrSignature},
		{"garbled header", body, "v1=abc", now, simhook.ErrSignature},
		{"control request's direction", body, simhook.Sign("s3cret", simhook.ToPlatform, "POST", simhook.Path, body, now), now, simhook.ErrSignature},
		{"another route", body, simhook.Sign("s3cret", simhook.ToControlPlane, "POST", simhook.HangupPath, body, now), now, simhook.ErrSignature},
		{"a control request as sent to the gateway", body, simhook.Sign("s3cret", simhook.ToPlatform, "POST", simhook.HangupPath, body, now), now, simhook.ErrSignature},
		{"another method", body, simhook.Sign("s3cret", simhook.ToControlPlane, "PUT", simhook.Path, body, now), now, simhook.ErrSignature},
		{"the old v1 form", body, "t=" + strconv.FormatInt(now.Unix(), 10) + ",v1=" + oldV1("s3cret", now, body), now, simhook.ErrSignature},
		{"too old", body, good, now.Add(6 * time.Minute), simhook.ErrExpired},
		{"from the future", body, good, now.Add(-6 * time.Minute), simhook.ErrExpired},
		{"signed garbage", []byte("{"), simhook.SignNotification("s3cret", []byte("{"), now), now, simhook.ErrMalformed},
		{"signed but incomplete", []byte(`{"id":"x"}`), simhook.SignNotification("s3cret", []byte(`{"id":"x"}`), now), now, simhook.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", simhook.Path, bytes.NewReader(tt.body))
			if tt.sig != "" {
				r.Header.Set(simhook.Header, tt.sig)
			}
			got, err := simhook.Verify(r, "s3cret", tt.at)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Verify() err = %v, want %v", err, tt.want)
			}
			if err == nil && (got.ID != n.ID || got.Event != n.Event || !got.At.Equal(n.At)) {
				t.Errorf("Verify() = %+v, want %+v", got, n)
			}
		})
	}
}

// A proxy that splits the header's value at its comma (the API Gateway adapter does) must
// not break the signature.
func TestVerifySplitHeader(t *testing.T) {
	now := time.Date(2026, 11, 22, 7, 0, 0, 0, time.UTC)
	body, _ := json.Marshal(platform.Notification{ID: "simevt_1", Event: platform.EventHangup, PlatformCallID: "simcall_1", At: now})
	t0, v1, ok := strings.Cut(simhook.SignNotification("s3cret", body, now), ",")
	if !ok {
		t.Fatal("signature has no comma to split at")
	}
	r := httptest.NewRequest("POST", simhook.Path, bytes.NewReader(body))
	r.Header.Add(simhook.Header, t0)
	r.Header.Add(simhook.Header, v1)
	if _, err := simhook.Verify(r, "s3cret", now); err != nil {
		t.Errorf("Verify(split header) = %v, want nil", err)
	}
}

// oldV1 is the signature of before: the body and time only.
func oldV1(secret string, t time.Time, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "%d.", t.Unix())
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// TestMemoryReplays: an id is taken once; while its delivery runs (or after it died
// without releasing it) another delivery is told Held; once handled, a copy within
// ReplayWindow is Handled (a replay); a released id can be taken again (the sender's
// redelivery of a notification that failed); and the cache stays bounded in time and size.
func TestMemoryReplays(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 7, 0, 0, 0, time.UTC)
	m := &simhook.MemoryReplays{Max: 3}
	claim := func(id string, at time.Time) simhook.Claim {
		t.Helper()
		c, err := m.Claim(ctx, id, at)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if got := claim("a", now); got != simhook.Claimed {
		t.Fatalf("first Claim(a) = %v, want Claimed", got)
	}
	if got := claim("a", now); got != simhook.Held {
		t.Errorf("Claim(a) while its first delivery runs = %v, want Held", got)
	}
	m.Done(ctx, "a")
	if got := claim("a", now.Add(simhook.ReplayWindow-time.Second)); got != simhook.Handled {
		t.Errorf("Claim(a) once handled, within the window = %v, want Handled (a replay)", got)
	}
	if got := claim("a", now.Add(simhook.ReplayWindow+time.Second)); got != simhook.Claimed {
		t.Errorf("Claim(a) past the window = %v, want Claimed (its signature has expired)", got)
	}
	if got := claim("b", now); got != simhook.Claimed {
		t.Fatalf("Claim(b) = %v", got)
	}
	m.Release(ctx, "b")
	if got := claim("b", now); got != simhook.Claimed {
		t.Errorf("Claim(b) after Release = %v, want Claimed (the redelivery is handled)", got)
	}
	later := now.Add(2 * simhook.ReplayWindow)
	for i := range 10 {
		claim(fmt.Sprint("id", i), later)
		m.Done(ctx, fmt.Sprint("id", i))
	}
	if n := m.Len(); n != 3 {
		t.Errorf("Len after 10 more ids with Max 3 = %d, want 3", n)
	}
	if got := claim("id9", later); got != simhook.Handled {
		t.Errorf("Claim(id9), the newest, = %v, want Handled", got)
	}
	if claim("late", later.Add(2*simhook.ReplayWindow)); m.Len() != 1 {
		t.Errorf("Len once every earlier id expired = %d, want 1", m.Len())
	}
}
