// Package lktoken mints and verifies LiveKit access tokens (HS256 JWTs carrying LiveKit's
// grant claims) and checks LiveKit-signed bodies (webhooks, worker reports), with nothing
// but a JWT library. LiveKit's own protocol/auth package imports WebRTC code, which no
// Lambda may carry; this package is what the control plane uses instead. The claim names
// are LiveKit's, so tokens minted here are accepted by livekit-server and tokens LiveKit
// signs verify here.
package lktoken

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Leeway is the clock skew allowed on exp and nbf, as livekit-server allows.
const Leeway = time.Minute

// VideoGrant is the part of LiveKit's video grant Bridgeline uses, under LiveKit's names.
type VideoGrant struct {
	RoomCreate     bool   `json:"roomCreate,omitempty"`
	RoomList       bool   `json:"roomList,omitempty"`
	RoomRecord     bool   `json:"roomRecord,omitempty"`
	RoomAdmin      bool   `json:"roomAdmin,omitempty"`
	RoomJoin       bool   `json:"roomJoin,omitempty"`
	Room           string `json:"room,omitempty"`
	CanPublish     *bool  `json:"canPublish,omitempty"`
	CanSubscribe   *bool  `json:"canSubscribe,omitempty"`
	CanPublishData *bool  `json:"canPublishData,omitempty"`
	// CanUpdateOwnMetadata lets the participant set its own metadata and attributes
	// (LiveKit's SIP bridge does, for the call's status).
	CanUpdateOwnMetadata *bool `json:"canUpdateOwnMetadata,omitempty"`
	// CanPublishSources, when set, limits what may be published to these track sources
	// ("camera", "microphone", "screen_share", "screen_share_audio").
	CanPublishSources []string `json:"canPublishSources,omitempty"`
	Hidden            bool     `json:"hidden,omitempty"`
	Agent             bool     `json:"agent,omitempty"`
}

// SIPGrant is LiveKit's SIP grant: Admin manages trunks and dispatch rules, Call places
// and transfers SIP calls.
type SIPGrant struct {
	Admin bool `json:"admin,omitempty"`
	Call  bool `json:"call,omitempty"`
}

// Claims are a LiveKit token's claims. Subject is the participant identity; Issuer is the
// API key.
type Claims struct {
	jwt.RegisteredClaims
	Name     string      `json:"name,omitempty"`
	Kind     string      `json:"kind,omitempty"`
	Video    *VideoGrant `json:"video,omitempty"`
	SIP      *SIPGrant   `json:"sip,omitempty"`
	Sha256   string      `json:"sha256,omitempty"`
	Metadata string      `json:"metadata,omitempty"`
	// Attributes are the participant's initial attributes.
	Attributes map[string]string `json:"attributes,omitempty"`
}

// Keys returns the secret of an API key, and whether the key is known.
type Keys func(apiKey string) (string, bool)

// KeyPair is the Keys of a single API key and secret.
func KeyPair(apiKey, secret string) Keys {
	return func(k string) (string, bool) { return secret, k == apiKey && secret != "" }
}

// Errors of Verify and VerifyBody.
var (
	ErrMissing     = errors.New("lktoken: no token")
	ErrUnknownKey  = errors.New("lktoken: unknown API key")
	ErrInvalid     = errors.New("lktoken: invalid token")
	ErrBodyMissing = errors.New("lktoken: token carries no body hash")
	ErrBodyHash    = errors.New("lktoken: body does not match the token's hash")
)

// Sign mints a token for c, issued by apiKey and valid from now for ttl.
func Sign(apiKey, secret string, c Claims, now time.Time, ttl time.Duration) (string, error) {
	if apiKey == "" || secret == "" {
		return "", fmt.Errorf("lktoken: sign: API key and secret are required")
	}
	c.Issuer = apiKey
	c.IssuedAt = jwt.NewNumericDate(now)
	c.NotBefore = jwt.NewNumericDate(now)
	c.ExpiresAt = jwt.NewNumericDate(now.Add(ttl))
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte(secret))
}

// SignBody mints a short-lived token whose sha256 claim is the body's hash, the way
// LiveKit signs its webhooks.
func SignBody(apiKey, secret, subject string, body []byte, now time.Time) (string, error) {
	return Sign(apiKey, secret, Claims{RegisteredClaims: jwt.RegisteredClaims{Subject: subject}, Sha256: BodyHash(body)}, now, 5*time.Minute)
}

// BodyHash is the base64 SHA-256 of body, as the sha256 claim holds it.
func BodyHash(body []byte) string {
	sum := sha256.Sum256(body)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// Verify checks a token's HS256 signature with the secret of its issuer, and its expiry
// and not-before times.
func Verify(token string, keys Keys) (*Claims, error) {
	token = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(token), "Bearer "))
	if token == "" {
		return nil, ErrMissing
	}
	parser := jwt.NewParser(jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithLeeway(Leeway), jwt.WithExpirationRequired())
	var unverified Claims
	if _, _, err := parser.ParseUnverified(token, &unverified); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	secret, ok := keys(unverified.Issuer)
	if !ok {
		return nil, ErrUnknownKey
	}
	var c Claims
	_, err := parser.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return []byte(secret), nil })
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return &c, nil
}

// VerifyBody checks a LiveKit-signed body: the token (an Authorization header value) must
// verify and its sha256 claim must equal the body's hash, compared in constant time.
func VerifyBody(token string, body []byte, keys Keys) (*Claims, error) {
	c, err := Verify(token, keys)
	if err != nil {
		return nil, err
	}
	if c.Sha256 == "" {
		return nil, ErrBodyMissing
	}
	if subtle.ConstantTimeCompare([]byte(c.Sha256), []byte(BodyHash(body))) != 1 {
		return nil, ErrBodyHash
	}
	return c, nil
}
