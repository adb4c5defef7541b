package persona

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/bridgeline/bridgeline/shared/lktoken"
)

// AgentTokenPath is the control plane's internal route that hands a persona worker its
// registration token: the worker posts an empty JSON object signed with the report
// secret under AgentTokenSubject (SignAgentTokenRequest) and gets an AgentToken. The
// workers hold no LiveKit API secret: with it a compromised worker could list every
// customer's SIP trunks, dial through them and join any room.
const AgentTokenPath = "/internal/persona/agent-token"

// AgentTokenSubject is the subject of every agent-token request, so that neither a
// report's nor a tool request's token passes here, nor this one there.
const AgentTokenSubject = "bridgeline-persona-agent-token"

// AgentTokenTTL is how long a registration token lives. livekit-server checks it when a
// worker registers (each reconnection too), not afterwards, so a registered worker keeps
// its connection past it; a worker asks for a fresh one before it dials once the one it
// holds has less than AgentTokenRefresh left.
const AgentTokenTTL = 10 * time.Minute

// AgentTokenRefresh is the life left below which a worker asks for a new token.
const AgentTokenRefresh = 3 * time.Minute

// AgentToken is the answer of AgentTokenPath: a LiveKit access token whose only grant
// is `agent` (register as an agent worker; the rooms of the jobs dispatched to it come
// with tokens livekit-server mints per job), and when it expires.
type AgentToken struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
}

// MintAgentToken signs a registration token with the fleet's LiveKit key, valid from now
// for AgentTokenTTL, carrying the agent grant and nothing else: no room, no identity, no
// room administration, no SIP.
func MintAgentToken(apiKey, secret string, now time.Time) (AgentToken, error) {
	tok, err := lktoken.Sign(apiKey, secret, lktoken.Claims{Video: &lktoken.VideoGrant{Agent: true}}, now, AgentTokenTTL)
	if err != nil {
		return AgentToken{}, fmt.Errorf("agent token: %w", err)
	}
	return AgentToken{Token: tok, ExpiresAt: now.Add(AgentTokenTTL).UTC().Truncate(time.Second)}, nil
}

// agentTokenBody is the body of every agent-token request.
var agentTokenBody = []byte("{}")

// AgentTokenRequestBody is what a worker posts to AgentTokenPath.
func AgentTokenRequestBody() []byte { return append([]byte(nil), agentTokenBody...) }

// SignAgentTokenRequest is SignReport for an agent-token request, under AgentTokenSubject.
func SignAgentTokenRequest(secret string, now time.Time) (string, error) {
	return sign(agentTokenBody, secret, now, AgentTokenSubject)
}

// VerifyAgentTokenRequest checks an agent-token request (SignAgentTokenRequest); its
// errors are VerifyReport's.
func VerifyAgentTokenRequest(r *http.Request, secret string) error {
	body, err := verified(r, secret, AgentTokenSubject, 1<<10)
	if err != nil {
		return err
	}
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("%w: %v", ErrReportMalformed, err)
	}
	return nil
}

// ErrNoAgentToken is an AgentToken without a token or expiry.
var ErrNoAgentToken = errors.New("agent token: the answer holds no token")
