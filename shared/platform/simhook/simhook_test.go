package simhook_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http/httptest"
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
	good := simhook.Sign("s3cret", body, now)
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
		{"wrong secret", body, simhook.Sign("other", body, now), now, simhook.ErrSignature},
		{"altered body", bytes.Replace(body, []byte("hangup"), []byte("answered"), 1), good, now, simhook.ErrSignature},
		{"garbled header", body, "v1=abc", now, simhook.ErrSignature},
		{"too old", body, good, now.Add(6 * time.Minute), simhook.ErrExpired},
		{"from the future", body, good, now.Add(-6 * time.Minute), simhook.ErrExpired},
		{"signed garbage", []byte("{"), simhook.Sign("s3cret", []byte("{"), now), now, simhook.ErrMalformed},
		{"signed but incomplete", []byte(`{"id":"x"}`), simhook.Sign("s3cret", []byte(`{"id":"x"}`), now), now, simhook.ErrMalformed},
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
	t0, v1, ok := strings.Cut(simhook.Sign("s3cret", body, now), ",")
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
