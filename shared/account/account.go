// Package account holds customer accounts and their API keys. A key is shown once, when
// it is made, and stored only as its SHA-256 hash.
package account

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/ident"
)

// Account owns every other resource.
type Account struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	BrandColor string    `json:"brand_color"`
	CreatedAt  time.Time `json:"created_at"`
	// SupportURL is the https page the join page links a visitor to for help (PATCH
	// /v1/account); empty: no link.
	SupportURL string `json:"support_url,omitempty"`
	// Logo describes the account's logo (its bytes are stored apart: GetLogo); nil: none,
	// the join page shows the name's initial.
	Logo *LogoInfo `json:"logo,omitempty"`
	// MaxConcurrentSessions is the account's own limit of live sessions, set by the
	// operator (`bridgeline admin account limits`); nil is the deployment's
	// MAX_CONCURRENT_SESSIONS.
	MaxConcurrentSessions *int `json:"max_concurrent_sessions,omitempty"`
	// Outbound is where the account's lines may call on a real network, set by the
	// operator (`bridgeline admin account limits`).
	Outbound
	// CallRetentionDays is how long the account's calls keep their data (numbers,
	// transcript, analysis, recording) after they started: past it the retention job
	// (shared/erasure, Retain) deletes it as DELETE /v1/calls/{id} does. Set by the
	// operator (`bridgeline admin account retention`); nil keeps it (the default).
	CallRetentionDays *int `json:"call_retention_days,omitempty"`
	// RetainedThrough is how far the retention job got: every call created before it
	// was redacted (or is live and waits below the mark). Nil: not yet run.
	RetainedThrough *time.Time `json:"retained_through,omitempty"`
}

// Outbound is an account's destination policy (shared/destination): set by the operator
// only, so a leaked API key cannot raise it.
type Outbound struct {
	// AllowedDestinationCountries are the ISO 3166-1 alpha-2 codes of the countries the
	// account's lines may call when a line sets none of its own; nil: each line's own
	// country (from its number).
	AllowedDestinationCountries []string `json:"allowed_destination_countries"`
	// DailyOutboundMinutes caps the minutes of outbound calls and transfers the account
	// places on real networks per UTC day; nil: the deployment's default.
	DailyOutboundMinutes *int `json:"daily_outbound_minutes,omitempty"`
}

// Key is an API key as stored: its hash, never its text.
type Key struct {
	ID        string `json:"id"`
	AccountID string `json:"account_id"`
	Hash      string `json:"hash"`   // hex SHA-256 of the full key text
	Prefix    string `json:"prefix"` // "sk_test_" plus the first 4 random characters, for operators
	// Last4 are the key's last four characters, so a customer can tell keys apart in a
	// listing; keys made before it was kept have none.
	Last4      string     `json:"last4,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	// RevokedAt is set once, by RevokeKey; a revoked key authenticates nothing.
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// Caller is the account an API request was authenticated as, with the mode of the key
// that made it. The auth middleware finds both once, from the key (locally) or from the
// authorizer's context (on AWS), and every handler reads them from here.
type Caller struct {
	Account
	// Live is true for an sk_live_ key: live keys place calls on every platform and
	// their webhook endpoints must use https; test keys place calls only through a
	// platform that takes them (the sim).
	Live bool
	// KeyID is the id of the API key that made the request: an Idempotency-Key is
	// replayed only to the key that first used it.
	KeyID string
}

// Revoked reports whether the key was revoked.
func (k Key) Revoked() bool { return k.RevokedAt != nil }

// Live reports whether the key is an sk_live_ key.
func (k Key) Live() bool { return strings.HasPrefix(k.Prefix, "sk_live_") }

// Store keeps accounts and key hashes.
//
// Errors: GetAccount, KeyAndAccount, KeyByHash, GetKey and RevokeKey return
// apierr.ErrNotFound; CreateAccount and AddKey return apierr.ErrConflict when the id or
// hash exists.
type Store interface {
	CreateAccount(ctx context.Context, a Account, k Key) error
	GetAccount(ctx context.Context, id string) (Account, error)
	// SetBranding applies a branding change to the account (its doc and, when the
	// change sets or removes the logo, the logo's bytes, in one atomic step) and returns
	// the account.
	SetBranding(ctx context.Context, accountID string, c BrandingChange) (Account, error)
	// GetLogo reads the account's logo with its bytes: ErrNotFound when it has none.
	GetLogo(ctx context.Context, accountID string) (Logo, error)
	AddKey(ctx context.Context, k Key) error
	// AddKeyWithin is AddKey while the account holds fewer than max keys (not revoked),
	// else ErrKeyLimit: the count and the insert are one atomic step, so concurrent
	// creates cannot pass max together.
	AddKeyWithin(ctx context.Context, k Key, max int) error

	// KeyByHash reads a key, revoked or not, by its hash.
	KeyByHash(ctx context.Context, hash string) (Key, error)
	// KeyAndAccount reads a key, revoked or not, by its hash, with its account
	// (authentication): one read where the store can join them.
	KeyAndAccount(ctx context.Context, hash string) (Key, Account, error)
	// GetKey reads one of an account's keys by id, revoked or not.
	GetKey(ctx context.Context, accountID, keyID string) (Key, error)
	// ListKeys lists an account's keys that are not revoked, oldest first.
	ListKeys(ctx context.Context, accountID string) ([]Key, error)
	// RevokeKey marks a key revoked at now and returns it. Revoking a revoked key
	// changes nothing and returns it as it is (idempotent). It refuses, with
	// ErrLastKey, to revoke the account's last key that is not revoked, and it does so
	// atomically: two revokes racing over an account's last two keys leave one.
	RevokeKey(ctx context.Context, accountID, keyID string, now time.Time) (Key, error)
	// TouchKey records that the key was used at now (best effort, coarse: callers
	// touch at most once per TouchEvery).
	TouchKey(ctx context.Context, hash string, now time.Time) error
}

// ErrLastKey is RevokeKey's refusal to leave an account without a key.
var ErrLastKey = apierr.New(apierr.CodeLastAPIKey, "an account keeps at least one API key: create another before revoking this one")

// TouchEvery is how stale a key's last-used time may get: authentication records a use
// only when the stored one is older, so a busy key costs one write a minute, not one a
// request.
const TouchEvery = time.Minute

const keyAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// keyLength random base62 characters carry 32*log2(62) = 190 bits.
const keyLength = 32

// NewKey makes key text for an account ("sk_test_..." or "sk_live_...") and its stored form.
func NewKey(accountID string, live bool, now time.Time) (string, Key, error) {
	var b strings.Builder
	max := big.NewInt(int64(len(keyAlphabet)))
	for range keyLength {
		n, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", Key{}, fmt.Errorf("new key: %w", err)
		}
		b.WriteByte(keyAlphabet[n.Int64()])
	}
	mode := "sk_test_"
	if live {
		mode = "sk_live_"
	}
	text := mode + b.String()
	return text, KeyFromText(accountID, text, now), nil
}

// KeyFromText is the stored form of a given key text (used for DEV_API_KEY).
func KeyFromText(accountID, text string, now time.Time) Key {
	prefix := text
	if i := strings.LastIndexByte(text, '_'); i >= 0 && len(text) >= i+5 {
		prefix = text[:i+5]
	}
	var last4 string
	if len(text) >= 4 {
		last4 = text[len(text)-4:]
	}
	return Key{ID: ident.New("key"), AccountID: accountID, Hash: HashKey(text), Prefix: prefix, Last4: last4, CreatedAt: now}
}

// WellFormed reports whether text has the shape of a Bridgeline key, so malformed
// credentials are refused without a store read.
func WellFormed(text string) bool {
	rest, ok := strings.CutPrefix(text, "sk_test_")
	if !ok {
		rest, ok = strings.CutPrefix(text, "sk_live_")
	}
	if !ok || len(rest) < 22 || len(rest) > 128 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if !strings.ContainsRune(keyAlphabet, rune(rest[i])) {
			return false
		}
	}
	return true
}

// HashKey is the hex SHA-256 of a key's text.
func HashKey(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// Service creates accounts and keys.
type Service struct {
	Store Store
	Now   func() time.Time
	// MaxKeys, when above 0, is how many keys (not revoked) AddKey lets an account hold.
	MaxKeys int
}

// Create makes an account with one new key and returns the key's text.
func (s *Service) Create(ctx context.Context, name string, live bool) (Account, string, error) {
	text, _, err := NewKey("", live, s.Now())
	if err != nil {
		return Account{}, "", err
	}
	a, err := s.CreateWithKey(ctx, name, text)
	return a, text, err
}

// CreateWithKey makes an account whose one key is text (the dev stack's DEV_API_KEY).
func (s *Service) CreateWithKey(ctx context.Context, name, text string) (Account, error) {
	if !WellFormed(text) {
		return Account{}, fmt.Errorf("create account: malformed key")
	}
	now := s.Now().UTC()
	a := Account{ID: ident.New("acct"), Name: name, BrandColor: "#3b5bdb", CreatedAt: now}
	if err := s.Store.CreateAccount(ctx, a, KeyFromText(a.ID, text, now)); err != nil {
		return Account{}, fmt.Errorf("create account: %w", err)
	}
	return a, nil
}

// ErrKeyLimit is a key refused because its account holds its maximum of keys.
var ErrKeyLimit = errors.New("account: the account holds its maximum of keys")

// AddKey makes a new key for an existing account and returns its text (shown once) and
// its stored form. With MaxKeys set, an account holding that many is ErrKeyLimit.
func (s *Service) AddKey(ctx context.Context, accountID string, live bool) (string, Key, error) {
	text, k, err := NewKey(accountID, live, s.Now().UTC())
	if err != nil {
		return "", Key{}, err
	}
	if s.MaxKeys > 0 {
		err = s.Store.AddKeyWithin(ctx, k, s.MaxKeys)
	} else {
		err = s.Store.AddKey(ctx, k)
	}
	if errors.Is(err, ErrKeyLimit) {
		return "", Key{}, err
	}
	if err != nil {
		return "", Key{}, fmt.Errorf("add key: %w", err)
	}
	return text, k, nil
}
