// Package simhook is the wire format of the simulated platform's notifications: a JSON
// platform.Notification POSTed to the control plane and signed with a shared secret. It
// is separate from the sim itself so the receiving side imports no media code.
//
// Signature: the header `Sim-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>` where the
// HMAC is keyed with the secret and covers "<t>.<raw body>". A receiver accepts a
// timestamp within Tolerance of its clock and compares the MAC in constant time.
package simhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/shared/platform"
)

// Header carries the signature.
const Header = "Sim-Signature"

// Path is where the control plane receives sim notifications.
const Path = "/internal/platform/sim/events"

// Tolerance is how far a signature's timestamp may be from the receiver's clock.
const Tolerance = 5 * time.Minute

// MaxBodyBytes bounds a notification body.
const MaxBodyBytes = 64 << 10

// Errors of Verify: ErrMalformed means 400, the others 401.
var (
	ErrUnsigned  = errors.New("simhook: missing " + Header)
	ErrSignature = errors.New("simhook: bad signature")
	ErrExpired   = errors.New("simhook: timestamp outside tolerance")
	ErrMalformed = errors.New("simhook: malformed notification")
)

// Sign returns the Sim-Signature value for body at t.
func Sign(secret string, body []byte, t time.Time) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

func mac(secret, ts string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify reads r's body (up to MaxBodyBytes), checks its signature against secret at now
// (VerifyBody) and decodes the notification.
func Verify(r *http.Request, secret string, now time.Time) (platform.Notification, error) {
	var n platform.Notification
	body, err := VerifyBody(r, secret, now)
	if err != nil {
		return n, err
	}
	if err := json.Unmarshal(body, &n); err != nil {
		return n, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if n.ID == "" || n.Event == "" || n.PlatformCallID == "" {
		return n, fmt.Errorf("%w: id, event and platform_call_id are required", ErrMalformed)
	}
	return n, nil
}

// VerifyBody reads r's body (up to MaxBodyBytes), checks its Sim-Signature against secret
// at now, and returns the raw body for the caller to decode: notifications (Verify) and
// the gateway's control requests. ErrMalformed means 400; the other errors 401.
func VerifyBody(r *http.Request, secret string, now time.Time) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil || len(body) > MaxBodyBytes {
		return nil, fmt.Errorf("%w: body unreadable or over %d bytes", ErrMalformed, MaxBodyBytes)
	}
	sig := signature(r)
	if sig == "" {
		return nil, ErrUnsigned
	}
	var ts, v1 string
	for _, part := range strings.Split(sig, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			v1 = v
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || v1 == "" {
		return nil, ErrSignature
	}
	if !hmac.Equal([]byte(v1), []byte(mac(secret, ts, body))) {
		return nil, ErrSignature
	}
	if d := now.Sub(time.Unix(sec, 0)); d > Tolerance || d < -Tolerance {
		return nil, ErrExpired
	}
	return body, nil
}

// signature is the request's signature header. Proxies may split a header's value at its
// commas into several values (the API Gateway adapter does), and the signature
// "t=...,v1=..." has one, so every value is joined back.
func signature(r *http.Request) string {
	return strings.Join(r.Header.Values(Header), ",")
}
