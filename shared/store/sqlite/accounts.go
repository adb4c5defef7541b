package sqlite

import (
	"context"
	"database/sql"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
)

var _ account.Store = (*Store)(nil)

// CreateAccount writes an account and its first key together.
func (s *Store) CreateAccount(ctx context.Context, a account.Account, k account.Key) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO accounts (id, doc) VALUES (?, ?)`, a.ID, mustJSON(a)); err != nil {
			if isUnique(err) {
				return apierr.ErrConflict
			}
			return err
		}
		return insertKey(ctx, tx, k)
	})
}

// GetAccount reads an account.
func (s *Store) GetAccount(ctx context.Context, id string) (account.Account, error) {
	return getDoc[account.Account](ctx, s.db, `SELECT doc FROM accounts WHERE id = ?`, id)
}

// AddKey adds a key to an existing account.
func (s *Store) AddKey(ctx context.Context, k account.Key) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM accounts WHERE id = ?`, k.AccountID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return apierr.ErrNotFound
		}
		return insertKey(ctx, tx, k)
	})
}

func insertKey(ctx context.Context, tx *sql.Tx, k account.Key) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO api_keys (hash, account_id, doc) VALUES (?, ?, ?)`, k.Hash, k.AccountID, mustJSON(k))
	if isUnique(err) {
		return apierr.ErrConflict
	}
	return err
}

// AccountByKeyHash finds the account a key belongs to.
func (s *Store) AccountByKeyHash(ctx context.Context, hash string) (account.Account, error) {
	return getDoc[account.Account](ctx, s.db,
		`SELECT a.doc FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.hash = ?`, hash)
}
