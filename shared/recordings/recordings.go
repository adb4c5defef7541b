// Package recordings keeps call recordings behind one small interface: the persona worker
// puts a call's file when the call ends; the control plane hands out a download URL that
// expires, and deletes the file for good. On AWS the store is an S3 bucket (S3); on the
// local stack a folder of the data directory served by the local server through URLs
// signed with HMAC-SHA256 (Folder): moto's S3 accepts a presigned URL whatever its
// expiry and signature, so a local stack on moto could not show the 15-minute bound.
package recordings

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"time"

	"github.com/bridgeline/bridgeline/shared/recordings/reckey"
)

// Store keeps recordings by key.
type Store interface {
	// Put stores size bytes read from body under key, replacing what was there.
	Put(ctx context.Context, key string, body io.Reader, size int64) error
	// URL is a GET URL of key that works until the time returned, ttl from now.
	URL(ctx context.Context, key string, ttl time.Duration) (string, time.Time, error)
	// Delete removes key for good; a key that is not there is no error.
	Delete(ctx context.Context, key string) error
	// Exists reports whether key is stored: false once Delete or the store's retention
	// (S3's lifecycle rule) removed it.
	Exists(ctx context.Context, key string) (bool, error)
}

// MaxURLTTL is the longest a download URL works.
const MaxURLTTL = 15 * time.Minute

// ContentType of every recording.
const ContentType = "audio/ogg"

var keyPattern = regexp.MustCompile(`^[a-z]+_[0-9a-z]{26}/[a-z]+_[0-9a-z]{26}\.ogg$`)

// Key is where a call's recording is kept: under its account, named by the call
// (reckey.For owns the rule).
func Key(accountID, callID string) string { return reckey.For(accountID, callID) }

// ErrBadKey is a key that Key did not make.
var ErrBadKey = errors.New("recordings: not a recording key")

func checkKey(key string) error {
	if !keyPattern.MatchString(key) {
		return fmt.Errorf("%w: %q", ErrBadKey, key)
	}
	return nil
}

func checkTTL(ttl time.Duration) error {
	if ttl <= 0 || ttl > MaxURLTTL {
		return fmt.Errorf("recordings: a URL lives more than 0 and at most %s, not %s", MaxURLTTL, ttl)
	}
	return nil
}
