package delivery_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/secretbox"
)

// TestSecretsSealedAtRest: the stored endpoint (the SQLite row's JSON) holds the signing
// secret and, after a rotation, the previous one only sealed, and deliveries still carry
// signatures the receiver verifies with the secret the customer was shown.
func TestSecretsSealedAtRest(t *testing.T) {
	e := newEnv(t, "")
	r := newReceiver(t, e.clock)
	ep := e.endpoint(t, r)
	stored := func() string {
		t.Helper()
		var doc string
		if err := e.store.DB().QueryRow(`SELECT doc FROM webhook_endpoints WHERE id = ?`, ep.ID).Scan(&doc); err != nil {
			t.Fatal(err)
		}
		return doc
	}
	if doc := stored(); strings.Contains(doc, ep.Secret) || !strings.Contains(doc, secretbox.Prefix) {
		t.Errorf("stored endpoint = %s; want the secret %s only sealed", doc, ep.Secret)
	}
	e.emit(t, callevent.TypeCallEnded, callEnded("call_1"))
	if n := e.step(t); n != 1 {
		t.Fatalf("attempts = %d, want 1", n)
	}
	got := r.requests()
	if len(got) != 1 || got[0].Verified != nil {
		t.Fatalf("received %d requests, first verified: %v; want one, verified with the secret shown at create", len(got), got)
	}

	rotated, err := e.endpoints.RotateSecret(context.Background(), e.account, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if doc := stored(); strings.Contains(doc, ep.Secret) || strings.Contains(doc, rotated.Secret) {
		t.Errorf("stored endpoint after rotation = %s; want neither secret in clear", doc)
	}
	r.mu.Lock()
	r.secret = rotated.Secret
	r.mu.Unlock()
	e.emit(t, callevent.TypeCallEnded, callEnded("call_2"))
	e.step(t)
	if got := r.requests(); len(got) != 2 || got[1].Verified != nil {
		t.Errorf("after rotation: %d requests, last verified: %v; want it verified with the new secret", len(got), got[len(got)-1].Verified)
	}
}
