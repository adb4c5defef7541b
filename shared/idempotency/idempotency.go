// Package idempotency holds the records behind the Idempotency-Key header: per account
// and key, the hash of the first request and, once it finished, its response, kept 24 h.
package idempotency

import (
	"context"
	"time"
)

// Retention is how long a key is remembered.
const Retention = 24 * time.Hour

// LockTimeout is how long an unfinished record blocks retries. A request that crashed
// mid-way leaves its record unfinished; after this long a retry may run it again.
const LockTimeout = 2 * time.Minute

// Record is one key's state. Status is 0 while the first request is still running.
type Record struct {
	AccountID   string    `json:"account_id"`
	Key         string    `json:"key"`
	RequestHash string    `json:"request_hash"`
	Status      int       `json:"status"`
	Body        []byte    `json:"body"`
	CreatedAt   time.Time `json:"created_at"`
	ExpiresAt   time.Time `json:"expires_at"`
}

// Store keeps records.
//
// Begin inserts rec unless a live record holds the key; it returns (rec, true) when it
// inserted, or (the existing record, false). A record past ExpiresAt, or unfinished and
// older than LockTimeout at `now`, counts as absent and is replaced.
// Complete stores the response of a record Begin inserted; Release deletes it (the request
// failed in a way a retry should run again).
type Store interface {
	BeginIdempotent(ctx context.Context, rec Record, now time.Time) (Record, bool, error)
	CompleteIdempotent(ctx context.Context, accountID, key string, status int, body []byte) error
	ReleaseIdempotent(ctx context.Context, accountID, key string) error
}
