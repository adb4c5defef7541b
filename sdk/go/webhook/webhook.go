// Package webhook verifies the signed events Bridgeline posts (Standard Webhooks:
// webhook-id, webhook-timestamp and webhook-signature headers, HMAC-SHA256 over
// "<id>.<timestamp>.<body>" with the endpoint's whsec_ secret) and parses them into the
// generated types, by type.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	bridgeline "github.com/bridgeline/bridgeline/sdk/go"
)

// Tolerance is how far a delivery's timestamp may be from now.
const Tolerance = 5 * time.Minute

// ErrSignature is returned for a delivery that is not signed by any of the secrets.
var ErrSignature = errors.New("webhook: no valid signature")

// Verify checks body and headers against the endpoint's secrets (two during a
// rotation's overlap: pass both) at time now.
func Verify(h http.Header, body []byte, now time.Time, secrets ...string) error {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return fmt.Errorf("%w: missing webhook headers", ErrSignature)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: bad webhook-timestamp", ErrSignature)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > Tolerance || d < -Tolerance {
		return fmt.Errorf("%w: timestamp %s outside the tolerance", ErrSignature, ts)
	}
	for _, secret := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
		if err != nil {
			return fmt.Errorf("webhook: malformed secret: %w", err)
		}
		mac := hmac.New(sha256.New, key)
		fmt.Fprintf(mac, "%s.%s.", id, ts)
		mac.Write(body)
		want := mac.Sum(nil)
		for _, s := range strings.Fields(sigs) {
			v, b64, ok := strings.Cut(s, ",")
			if !ok || v != "v1" {
				continue
			}
			got, err := base64.StdEncoding.DecodeString(b64)
			if err == nil && hmac.Equal(got, want) {
				return nil
			}
		}
	}
	return ErrSignature
}

// Parse reads a verified delivery into its type's generated struct:
// bridgeline.CallIncomingEvent, CallAnsweredEvent or CallEndedEvent. An event type this
// version does not know (new types are additive) is returned as
// map[string]any, never as an error, so a receiver acknowledges it.
func Parse(body []byte) (any, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return nil, fmt.Errorf("webhook: parse event: %w", err)
	}
	var v any
	switch head.Type {
	case "call.incoming":
		v = &bridgeline.CallIncomingEvent{}
	case "call.answered":
		v = &bridgeline.CallAnsweredEvent{}
	case "call.ended":
		v = &bridgeline.CallEndedEvent{}
	default:
		v = &map[string]any{}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return nil, fmt.Errorf("webhook: parse %s: %w", head.Type, err)
	}
	switch e := v.(type) {
	case *bridgeline.CallIncomingEvent:
		return *e, nil
	case *bridgeline.CallAnsweredEvent:
		return *e, nil
	case *bridgeline.CallEndedEvent:
		return *e, nil
	case *map[string]any:
		return *e, nil
	}
	return v, nil
}
