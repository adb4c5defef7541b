// Package webhook verifies the signed events Bridgeline posts to your webhook endpoints
// and reads them into typed events. Bridgeline signs per Standard Webhooks: the
// webhook-id, webhook-timestamp and webhook-signature headers, an HMAC-SHA256 over
// "<id>.<timestamp>.<body>" with the endpoint's whsec_ secret. A receiver verifies the
// raw body first, then parses it:
//
//	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
//	if err == nil {
//		err = webhook.Verify(r.Header, body, time.Now(), secret)
//	}
//	if err != nil {
//		http.Error(w, "bad signature", http.StatusBadRequest)
//		return
//	}
//	ev, err := webhook.Parse(body)
//
// then switches on ev's type (see Parse).
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	bridgeline "github.com/bridgeline/bridgeline/sdk/go"
)

// Tolerance is how far a delivery's timestamp may be from now: an older one is refused as
// a replay.
const Tolerance = 5 * time.Minute

// ErrSignature is the error Verify returns (wrapped, with the reason) for a delivery that
// is not signed by any of the secrets within the Tolerance: answer it 400.
var ErrSignature = errors.New("webhook: no valid signature")

// Verify checks a delivery's raw body and headers against the endpoint's secrets (two
// during a rotation's overlap: pass both) at time now (time.Now()). It is nil for a
// delivery Bridgeline signed; otherwise the error wraps ErrSignature, except for a
// malformed secret.
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
	if len(secrets) == 0 {
		return errors.New("webhook: no secret to verify with")
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

// Parse reads a verified delivery into its typed event: a *bridgeline.CallIncomingEvent,
// *bridgeline.CallAnsweredEvent, *bridgeline.CallEndedEvent,
// *bridgeline.CallTranscriptEvent, *bridgeline.CallAnalyzedEvent or
// *bridgeline.RecordingReadyEvent, or, for a type this
// version does not know (types are added without a version change), a
// *bridgeline.UnknownEvent to acknowledge. Switch on it with pointer cases (a case
// without the * does not compile):
//
//	switch ev := ev.(type) {
//	case *bridgeline.CallIncomingEvent:
//		// answer with {"action": "accept"}, "decline" or "assistant"
//	case *bridgeline.CallEndedEvent:
//		fmt.Println(ev.Data.CallId, ev.Data.EndReason)
//	case *bridgeline.UnknownEvent:
//		// acknowledge it
//	}
func Parse(body []byte) (bridgeline.WebhookEvent, error) {
	var e bridgeline.Event
	if err := e.UnmarshalJSON(body); err != nil {
		return nil, fmt.Errorf("webhook: parse event: %w", err)
	}
	return e.Parse()
}
