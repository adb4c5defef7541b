package report

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/persona"
)

// TestAgentToken: the client signs its request as the control plane verifies it and
// returns the token answered; a refusal and an answer without a token are errors.
func TestAgentToken(t *testing.T) {
	answer := func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != persona.AgentTokenPath || persona.VerifyAgentTokenRequest(r, secret) != nil {
			http.Error(w, `{"error":{"code":"api_key_invalid"}}`, http.StatusUnauthorized)
			return
		}
		tok, err := persona.MintAgentToken(key, lkSecret, time.Now())
		if err != nil {
			t.Error(err)
		}
		json.NewEncoder(w).Encode(tok)
	}
	srv := httptest.NewServer(http.HandlerFunc(answer))
	defer srv.Close()
	ctx := context.Background()
	tok, err := (&Client{BaseURL: srv.URL, Secret: secret}).AgentToken(ctx)
	if err != nil || tok.Token == "" || time.Until(tok.ExpiresAt) < 5*time.Minute {
		t.Fatalf("AgentToken = %+v, %v; want a token valid minutes", tok, err)
	}
	if _, err := (&Client{BaseURL: srv.URL, Secret: "another-secret-another-secret-0000"}).AgentToken(ctx); err == nil {
		t.Error("a request signed with another secret: no error")
	}
	empty := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{}`)) }))
	defer empty.Close()
	if _, err := (&Client{BaseURL: empty.URL, Secret: secret}).AgentToken(ctx); !errors.Is(err, persona.ErrNoAgentToken) {
		t.Errorf("an answer without a token: %v, want ErrNoAgentToken", err)
	}
}
