// Package webhook signs Bridgeline's webhooks the Standard Webhooks way: every request
// carries webhook-id, webhook-timestamp and webhook-signature headers, the signature being
// "v1,<base64 HMAC-SHA256 of id.timestamp.body>" keyed with the endpoint's secret
// ("whsec_<base64>"). Its Verify is the service's own, for its tests and tools: customers
// verify with the SDKs' (webhook.Verify of github.com/bridgeline/bridgeline/sdk/go/webhook,
// verifyWebhook of @bridgeline/sdk), which the docs show and which tests check against
// this signer.
//
// It depends on the standard library only.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names, as Standard Webhooks spells them.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix starts every signing secret Bridgeline hands out.
const SecretPrefix = "whsec_"

// DefaultTolerance is how far a webhook-timestamp may be from the receiver's clock, either
// way, before Verify rejects the message as a replay or as forged ahead of time.
const DefaultTolerance = 5 * time.Minute

// secretBytes is the key length of new secrets: 256 bits (the standard asks for 24-64 bytes).
const secretBytes = 32

// Errors Verify returns; compare with errors.Is.
var (
	ErrMissingHeader    = errors.New("webhook: missing webhook-id, webhook-timestamp or webhook-signature header")
	ErrInvalidTimestamp = errors.New("webhook: webhook-timestamp is not a unix time in seconds")
	ErrTimestampTooOld  = errors.New("webhook: message timestamp too old")
	ErrTimestampTooNew  = errors.New("webhook: message timestamp too far in the future")
	ErrNoMatch          = errors.New("webhook: no signature matches")
	ErrInvalidSecret    = errors.New("webhook: secret is not whsec_<base64>")
)

// NewSecret returns a fresh random signing secret, "whsec_" followed by base64 of 32 bytes.
func NewSecret() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("new webhook secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// decodeSecret returns the HMAC key of a secret. The whsec_ prefix is optional, as in
// every Standard Webhooks library, so a secret pasted without it still works.
func decodeSecret(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(key) == 0 {
		return nil, ErrInvalidSecret
	}
	return key, nil
}

// Sign returns the "v1,<base64>" signature of one message. id must not contain a '.'
// (Bridgeline's ids never do), since the signed content is id.timestamp.body.
func Sign(secret, id string, ts time.Time, body []byte) (string, error) {
	key, err := decodeSecret(secret)
	if err != nil {
		return "", err
	}
	return "v1," + base64.StdEncoding.EncodeToString(mac(key, id, ts.Unix(), body)), nil
}

func mac(key []byte, id string, ts int64, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(id))
	h.Write([]byte{'.'})
	h.Write(strconv.AppendInt(nil, ts, 10))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// SetHeaders signs body with every secret (more than one while a rotated secret is still
// honoured) and sets the three webhook headers on h.
func SetHeaders(h http.Header, secrets []string, id string, ts time.Time, body []byte) error {
	if len(secrets) == 0 {
		return ErrInvalidSecret
	}
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		sig, err := Sign(s, id, ts, body)
		if err != nil {
			return err
		}
		sigs = append(sigs, sig)
	}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, strings.Join(sigs, " "))
	return nil
}

// Verify checks a received webhook against the endpoint's secret: the timestamp must be
// within DefaultTolerance of now and one of the v1 signatures must match the raw body.
// Pass the body exactly as received, before any JSON decoding.
func Verify(secret string, headers http.Header, body []byte) error {
	return Verifier{Secrets: []string{secret}}.Verify(headers, body)
}

// Verifier checks webhooks against any of several secrets (keep the old and the new one
// while rotating) with a chosen tolerance and clock. The zero Tolerance means
// DefaultTolerance; a nil Now means time.Now.
type Verifier struct {
	Secrets   []string
	Tolerance time.Duration
	Now       func() time.Time
}

// Verify reports nil when headers and body carry a valid, fresh signature by one of
// v.Secrets. Comparison is constant time.
func (v Verifier) Verify(headers http.Header, body []byte) error {
	id := headers.Get(HeaderID)
	tsText := headers.Get(HeaderTimestamp)
	sigHeader := headers.Get(HeaderSignature)
	if id == "" || tsText == "" || sigHeader == "" {
		return ErrMissingHeader
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return ErrInvalidTimestamp
	}
	tolerance := v.Tolerance
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	sent, at := time.Unix(ts, 0), now()
	if sent.Before(at.Add(-tolerance)) {
		return ErrTimestampTooOld
	}
	if sent.After(at.Add(tolerance)) {
		return ErrTimestampTooNew
	}
	keys := make([][]byte, 0, len(v.Secrets))
	for _, s := range v.Secrets {
		key, err := decodeSecret(s)
		if err != nil {
			return err
		}
		keys = append(keys, key)
	}
	for _, key := range keys {
		want := mac(key, id, ts, body)
		for _, sig := range strings.Fields(sigHeader) {
			version, b64, ok := strings.Cut(sig, ",")
			if !ok || version != "v1" {
				continue // other schemes (v1a) are not ours to check
			}
			got, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				continue
			}
			if hmac.Equal(got, want) {
				return nil
			}
		}
	}
	return ErrNoMatch
}
