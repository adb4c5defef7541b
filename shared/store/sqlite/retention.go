package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/erasure"
)

var _ erasure.RetentionStore = (*Store)(nil)

// SetCallRetention sets the account's call retention in days (nil: keep) and returns the
// account.
func (s *Store) SetCallRetention(ctx context.Context, accountID string, days *int) (account.Account, error) {
	return s.updateAccount(ctx, accountID, func(a *account.Account) { a.CallRetentionDays = days })
}

// SetRetainedThrough records how far the retention job got for the account.
func (s *Store) SetRetainedThrough(ctx context.Context, accountID string, t time.Time) error {
	_, err := s.updateAccount(ctx, accountID, func(a *account.Account) { a.RetainedThrough = &t })
	return err
}

// AccountsWithRetention lists the accounts whose call retention is set.
func (s *Store) AccountsWithRetention(ctx context.Context) ([]account.Account, error) {
	return listDocs[account.Account](ctx, s.db,
		`SELECT doc FROM accounts WHERE json_extract(CAST(doc AS TEXT), '$.call_retention_days') IS NOT NULL ORDER BY id`)
}

func (s *Store) updateAccount(ctx context.Context, accountID string, change func(*account.Account)) (account.Account, error) {
	var a account.Account
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		if a, err = getDoc[account.Account](ctx, tx, `SELECT doc FROM accounts WHERE id = ?`, accountID); err != nil {
			return err
		}
		change(&a)
		_, err = tx.ExecContext(ctx, `UPDATE accounts SET doc = ? WHERE id = ?`, mustJSON(a), accountID)
		return err
	})
	return a, err
}
