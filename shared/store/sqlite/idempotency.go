package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/bridgeline/bridgeline/shared/idempotency"
)

var _ idempotency.Store = (*Store)(nil)

// BeginIdempotent claims a key, or returns the live record that holds it.
func (s *Store) BeginIdempotent(ctx context.Context, rec idempotency.Record, now time.Time) (idempotency.Record, bool, error) {
	var out idempotency.Record
	inserted := false
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var cur idempotency.Record
		var created, expires string
		err := tx.QueryRowContext(ctx,
			`SELECT request_hash, status, body, created_at, expires_at FROM idempotency WHERE account_id = ? AND key = ?`,
			rec.AccountID, rec.Key).Scan(&cur.RequestHash, &cur.Status, &cur.Body, &created, &expires)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			cur.AccountID, cur.Key = rec.AccountID, rec.Key
			cur.CreatedAt, _ = time.Parse(timeLayout, created)
			cur.ExpiresAt, _ = time.Parse(timeLayout, expires)
			live := now.Before(cur.ExpiresAt) && (cur.Status != 0 || now.Sub(cur.CreatedAt) < idempotency.LockTimeout)
			if live {
				out = cur
				return nil
			}
		}
		_, err = tx.ExecContext(ctx,
			`INSERT OR REPLACE INTO idempotency (account_id, key, request_hash, status, body, created_at, expires_at)
			 VALUES (?, ?, ?, 0, NULL, ?, ?)`,
			rec.AccountID, rec.Key, rec.RequestHash, rec.CreatedAt.UTC().Format(timeLayout), rec.ExpiresAt.UTC().Format(timeLayout))
		if err != nil {
			return err
		}
		out, inserted = rec, true
		return nil
	})
	return out, inserted, err
}

// CompleteIdempotent stores the response of a claimed key.
func (s *Store) CompleteIdempotent(ctx context.Context, accountID, key string, status int, body []byte) error {
	_, err := s.exec(ctx, `UPDATE idempotency SET status = ?, body = ? WHERE account_id = ? AND key = ?`,
		status, body, accountID, key)
	return err
}

// ReleaseIdempotent forgets a claimed key.
func (s *Store) ReleaseIdempotent(ctx context.Context, accountID, key string) error {
	_, err := s.exec(ctx, `DELETE FROM idempotency WHERE account_id = ? AND key = ?`, accountID, key)
	return err
}
