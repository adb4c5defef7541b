// Package account holds customer accounts and their API keys. A key is shown once, when
// it is made, and stored only as its SHA-256 hash.
package account

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/shared/ident"
)

// Account owns every other resource.
type Account struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	BrandColor string    `json:"brand_color"`
	CreatedAt  time.Time `json:"created_at"`
}

// Key is an API key as stored: its hash, never its text.
type Key struct {
	ID        string    `json:"id"`
	AccountID string    `json:"account_id"`
	Hash      string    `json:"hash"`   // hex SHA-256 of the full key text
	Prefix    string    `json:"prefix"` // "sk_test_" plus the first 4 random characters, for operators
	CreatedAt time.Time `json:"created_at"`
}

// Store keeps accounts and key hashes.
//
// Errors: GetAccount and AccountByKeyHash return apierr.ErrNotFound; CreateAccount and
// AddKey return apierr.ErrConflict when the id or hash exists.
type Store interface {
	CreateAccount(ctx context.Context, a Account, k Key) error
	GetAccount(ctx context.Context, id string) (Account, error)
	AddKey(ctx context.Context, k Key) error
	AccountByKeyHash(ctx context.Context, hash string) (Account, error)
}

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
	return Key{ID: ident.New("key"), AccountID: accountID, Hash: HashKey(text), Prefix: prefix, CreatedAt: now}
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
