// Package simhook is the wire format of the simulated platform's notifications: a JSON
// platform.Notification POSTed to the control plane and signed with a shared secret. It
// is separate from the sim itself so the receiving side imports no media code.
//
// Signature: the header `Sim-Signature: t=<unix seconds>,v2=<hex HMAC-SHA256>` where the
// HMAC is keyed with the secret and covers "<t>.<direction>.<METHOD>.<path>.<raw body>":
// the direction (a notification from the platform, or a control request to it), the
// request's method and the route's path are signed with the body, so a request captured
// in one direction or on one route (a hang-up sent to the gateway) cannot be replayed on
// another (as a notification to the control plane), even though both sides hold the same
// secret. A receiver accepts a timestamp within Tolerance of its clock and compares the
// MAC in constant time; notifications carry an id that receivers keep (ReplayCache) so a
// captured notification is refused when replayed within the tolerance.
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

// Directions a signature is made for.
const (
	// ToControlPlane: a notification, the platform telling the control plane of a call.
	ToControlPlane = "platform-to-control-plane"
	// ToPlatform: a control request, the control plane driving the platform gateway.
	ToPlatform = "control-plane-to-platform"
)

// Sign returns the Sim-Signature value of a request in direction, with method, to the
// route path (the route's own path, simhook.Path or a control path, whatever prefix a
// proxy adds), carrying body, at t.
func Sign(secret, direction, method, path string, body []byte, t time.Time) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v2=" + mac(secret, ts, direction, method, path, body)
}

func mac(secret, ts, direction, method, path string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	for _, part := range []string{ts, direction, method, path} {
		m.Write([]byte(part))
		m.Write([]byte("."))
	}
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify reads a notification from r (up to MaxBodyBytes), checks its signature against
// secret at now as a notification to Path (VerifyBody) and decodes it.
func Verify(r *http.Request, secret string, now time.Time) (platform.Notification, error) {
	var n platform.Notification
	body, err := VerifyBody(r, secret, ToControlPlane, Path, now)
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
// at now for a request in direction to the route path with r's method, and returns the
// raw body for the caller to decode: notifications (Verify) and the gateway's control
// requests. ErrMalformed means 400; the other errors 401.
func VerifyBody(r *http.Request, secret, direction, path string, now time.Time) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil || len(body) > MaxBodyBytes {
		return nil, fmt.Errorf("%w: body unreadable or over %d bytes", ErrMalformed, MaxBodyBytes)
	}
	sig := signature(r)
	if sig == "" {
		return nil, ErrUnsigned
	}
	var ts, v2 string
	for _, part := range strings.Split(sig, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v2":
			v2 = v
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || v2 == "" || secret == "" {
		return nil, ErrSignature
	}
	if !hmac.Equal([]byte(v2), []byte(mac(secret, ts, direction, r.Method, path, body))) {
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

// SignNotification is Sign for a notification: POST to Path, to the control plane.
func SignNotification(secret string, body []byte, t time.Time) string {
	return Sign(secret, ToControlPlane, http.MethodPost, Path, body, t)
}
