package persona

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/lktoken"
)

// TestAgentTokenCarriesOnlyTheAgentGrant: a worker's registration token is signed with
// the fleet's key, carries the agent grant and nothing else (no room, no identity, no
// administration, no SIP), and expires within minutes.
func TestAgentTokenCarriesOnlyTheAgentGrant(t *testing.T) {
	const key, secret = "APIfleet", "fleet-secret-0123456789-0123456789-0123"
	now := time.Now()
	tok, err := MintAgentToken(key, secret, now)
	if err != nil {
		t.Fatal(err)
	}
	c, err := lktoken.Verify(tok.Token, lktoken.KeyPair(key, secret))
	if err != nil {
		t.Fatalf("the token does not verify with the fleet's key: %v", err)
	}
	if c.Video == nil || !c.Video.Agent {
		t.Fatalf("video grant %+v, want agent", c.Video)
	}
	life := c.ExpiresAt.Sub(c.IssuedAt.Time)
	if life <= 0 || life > 15*time.Minute || !tok.ExpiresAt.Equal(c.ExpiresAt.Time) {
		t.Errorf("token lives %v (expires_at %v, exp %v), want a few minutes, told truly", life, tok.ExpiresAt, c.ExpiresAt)
	}
	// Every claim in the token, raw: the grant is {"agent":true} and there is nothing
	// beyond the JWT's own times and issuer.
	parts := strings.Split(tok.Token, ".")
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]json.RawMessage
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	for k, v := range claims {
		switch k {
		case "iss", "exp", "nbf", "iat":
		case "video":
			if string(v) != `{"agent":true}` {
				t.Errorf("video grant %s, want {\"agent\":true} only", v)
			}
		default:
			t.Errorf("claim %s = %s: want none beyond the agent grant", k, v)
		}
	}
}

// TestAgentTokenRequestSignature: only a request signed with the report secret under the
// agent-token subject passes; a report's or a tool request's signature does not, nor
// another secret.
func TestAgentTokenRequestSignature(t *testing.T) {
	const secret = "report-secret-0123456789-0123456789"
	now := time.Now()
	req := func(authz string) error {
		r := httptest.NewRequest("POST", AgentTokenPath, bytes.NewReader(AgentTokenRequestBody()))
		r.Header.Set("Authorization", authz)
		return VerifyAgentTokenRequest(r, secret)
	}
	good, err := SignAgentTokenRequest(secret, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := req(good); err != nil {
		t.Errorf("a signed request: %v", err)
	}
	report, _ := SignReport(AgentTokenRequestBody(), secret, now)
	tool, _ := SignToolRequest(AgentTokenRequestBody(), secret, now)
	other, _ := SignAgentTokenRequest(strings.Repeat("x", 40), now)
	for name, authz := range map[string]string{"report": report, "tool": tool, "other secret": other, "none": ""} {
		if err := req(authz); err == nil {
			t.Errorf("%s signature: accepted", name)
		}
	}
	// A request token has the report tokens' two minutes.
	old, _ := SignAgentTokenRequest(secret, now.Add(-5*time.Minute))
	if err := req(old); err == nil {
		t.Error("a request signed five minutes ago: accepted")
	}
}
