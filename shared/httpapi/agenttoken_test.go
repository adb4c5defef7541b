package httpapi

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/lktoken"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// TestAgentTokenRoute: a request signed with the report secret under the agent-token
// subject gets a token with the agent grant only; a report's signature is 401, and a
// process without LiveKit credentials answers 500.
func TestAgentTokenRoute(t *testing.T) {
	const reportSecret = "report-secret-0123456789-0123456789"
	const key, secret = "APIfleet", "fleet-secret-0123456789-0123456789-0123"
	h := &Receivers{ReportSecret: reportSecret, AgentTokens: func(now time.Time) (persona.AgentToken, error) {
		return persona.MintAgentToken(key, secret, now)
	}}
	var route Route
	for _, r := range h.Routes() {
		if r.Pattern == persona.AgentTokenPath {
			route = r
		}
	}
	if route.Handler == nil || route.Function != "persona-agent-token" || route.Method != http.MethodPost || !route.Public {
		t.Fatalf("route %+v: want POST %s, persona-agent-token, taking no API key", route, persona.AgentTokenPath)
	}
	call := func(h *Receivers, authz string) (int, any, error) {
		r := httptest.NewRequest(http.MethodPost, persona.AgentTokenPath, bytes.NewReader(persona.AgentTokenRequestBody()))
		r.Header.Set("Authorization", authz)
		return h.agentToken(httptest.NewRecorder(), r)
	}
	good, _ := persona.SignAgentTokenRequest(reportSecret, time.Now())
	status, body, err := call(h, good)
	tok, ok := body.(persona.AgentToken)
	if err != nil || status != http.StatusOK || !ok {
		t.Fatalf("signed request: %d %v %v", status, body, err)
	}
	c, err := lktoken.Verify(tok.Token, lktoken.KeyPair(key, secret))
	if err != nil || c.Video == nil || !c.Video.Agent || c.Video.RoomAdmin || c.Video.RoomJoin || c.Video.RoomList || c.Video.RoomCreate || c.Video.Room != "" || c.Subject != "" {
		t.Errorf("token claims %+v (%v): want the agent grant only", c, err)
	}
	report, _ := persona.SignReport(persona.AgentTokenRequestBody(), reportSecret, time.Now())
	if _, _, err := call(h, report); !apierr.Is(err, apierr.CodeAPIKeyInvalid) {
		t.Errorf("a report's signature: %v, want api_key_invalid", err)
	}
	if _, _, err := call(&Receivers{ReportSecret: reportSecret}, good); !apierr.Is(err, apierr.CodeInternal) {
		t.Errorf("no LiveKit credentials: %v, want internal_error", err)
	}
}
