package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

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

// AddKeyWithin adds a key while the account holds fewer than max keys that are not
// revoked: counting and inserting happen in one transaction, and the store's
// transactions are immediate (one writer at a time).
func (s *Store) AddKeyWithin(ctx context.Context, k account.Key, max int) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM accounts WHERE id = ?`, k.AccountID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return apierr.ErrNotFound
		}
		if err := tx.QueryRowContext(ctx,
			`SELECT count(*) FROM api_keys WHERE account_id = ? AND revoked = 0`, k.AccountID).Scan(&n); err != nil {
			return err
		}
		if n >= max {
			return account.ErrKeyLimit
		}
		return insertKey(ctx, tx, k)
	})
}

func insertKey(ctx context.Context, tx *sql.Tx, k account.Key) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO api_keys (hash, account_id, id, revoked, doc) VALUES (?, ?, ?, ?, ?)`,
		k.Hash, k.AccountID, k.ID, k.Revoked(), mustJSON(k))
	if isUnique(err) {
		return apierr.ErrConflict
	}
	return err
}

// apiKeyIDsSchema gives keys their id and revoked flag as columns, so an account's keys
// can be listed and one found by id; keys made before keep theirs from the doc.
const apiKeyIDsSchema = `
ALTER TABLE api_keys ADD COLUMN id TEXT;
ALTER TABLE api_keys ADD COLUMN revoked INTEGER NOT NULL DEFAULT 0;
UPDATE api_keys SET id = json_extract(CAST(doc AS TEXT), '$.id');
CREATE UNIQUE INDEX api_keys_by_id ON api_keys (id);
CREATE INDEX api_keys_by_account ON api_keys (account_id, revoked);
`

// KeyByHash reads a key by its hash.
func (s *Store) KeyByHash(ctx context.Context, hash string) (account.Key, error) {
	return getDoc[account.Key](ctx, s.db, `SELECT doc FROM api_keys WHERE hash = ?`, hash)
}

// KeyAndAccount reads a key and its account in one query.
func (s *Store) KeyAndAccount(ctx context.Context, hash string) (account.Key, account.Account, error) {
	var kdoc, adoc []byte
	err := s.db.QueryRowContext(ctx, `SELECT k.doc, a.doc FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.hash = ?`,
		hash).Scan(&kdoc, &adoc)
	if errors.Is(err, sql.ErrNoRows) {
		return account.Key{}, account.Account{}, apierr.ErrNotFound
	}
	if err != nil {
		return account.Key{}, account.Account{}, err
	}
	var k account.Key
	var a account.Account
	if err := json.Unmarshal(kdoc, &k); err != nil {
		return account.Key{}, account.Account{}, fmt.Errorf("decode key: %w", err)
	}
	if err := json.Unmarshal(adoc, &a); err != nil {
		return account.Key{}, account.Account{}, fmt.Errorf("decode account %s: %w", k.AccountID, err)
	}
	return k, a, nil
}

// GetKey reads one of an account's keys.
func (s *Store) GetKey(ctx context.Context, accountID, keyID string) (account.Key, error) {
	return getDoc[account.Key](ctx, s.db, `SELECT doc FROM api_keys WHERE id = ? AND account_id = ?`, keyID, accountID)
}

// ListKeys lists an account's keys that are not revoked, oldest first (ids sort by time).
func (s *Store) ListKeys(ctx context.Context, accountID string) ([]account.Key, error) {
	return listDocs[account.Key](ctx, s.db,
		`SELECT doc FROM api_keys WHERE account_id = ? AND revoked = 0 ORDER BY id`, accountID)
}

// RevokeKey revokes a key unless it is the account's last one. The transaction takes
// the write lock first (_txlock=immediate), so the count it reads cannot change before
// its write: two revokes of an account's last two keys run one after the other.
func (s *Store) RevokeKey(ctx context.Context, accountID, keyID string, now time.Time) (account.Key, error) {
	var k account.Key
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		k, err = getDoc[account.Key](ctx, tx, `SELECT doc FROM api_keys WHERE id = ? AND account_id = ?`, keyID, accountID)
		if err != nil || k.Revoked() {
			return err
		}
		var active int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM api_keys WHERE account_id = ? AND revoked = 0`, accountID).Scan(&active); err != nil {
			return err
		}
		if active <= 1 {
			return account.ErrLastKey
		}
		at := now.UTC()
		k.RevokedAt = &at
		_, err = tx.ExecContext(ctx, `UPDATE api_keys SET revoked = 1, doc = ? WHERE hash = ?`, mustJSON(k), k.Hash)
		return err
	})
	if err != nil {
		return account.Key{}, err
	}
	return k, nil
}

// TouchKey records a use of the key (not of a revoked one).
func (s *Store) TouchKey(ctx context.Context, hash string, now time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		k, err := getDoc[account.Key](ctx, tx, `SELECT doc FROM api_keys WHERE hash = ?`, hash)
		if err != nil || k.Revoked() {
			return err
		}
		at := now.UTC()
		k.LastUsedAt = &at
		_, err = tx.ExecContext(ctx, `UPDATE api_keys SET doc = ? WHERE hash = ? AND revoked = 0`, mustJSON(k), hash)
		return err
	})
}

// accountLogosSchema keeps each account's logo bytes apart from its doc, which every
// authenticated request reads.
const accountLogosSchema = `
CREATE TABLE account_logos (
	account_id   TEXT PRIMARY KEY REFERENCES accounts(id),
	content_type TEXT NOT NULL,
	data         BLOB NOT NULL
);
`

// SetBranding changes the account's branding, its doc and its logo in one transaction.
func (s *Store) SetBranding(ctx context.Context, accountID string, c account.BrandingChange) (account.Account, error) {
	var a account.Account
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		if a, err = getDoc[account.Account](ctx, tx, `SELECT doc FROM accounts WHERE id = ?`, accountID); err != nil {
			return err
		}
		c.Apply(&a)
		switch {
		case c.Logo != nil:
			_, err = tx.ExecContext(ctx, `INSERT INTO account_logos (account_id, content_type, data) VALUES (?, ?, ?)
				ON CONFLICT (account_id) DO UPDATE SET content_type = excluded.content_type, data = excluded.data`,
				accountID, c.Logo.ContentType, c.Logo.Data)
		case c.RemoveLogo:
			_, err = tx.ExecContext(ctx, `DELETE FROM account_logos WHERE account_id = ?`, accountID)
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE accounts SET doc = ? WHERE id = ?`, mustJSON(a), accountID)
		return err
	})
	return a, err
}

// GetLogo reads the account's logo: NotFound when it has none.
func (s *Store) GetLogo(ctx context.Context, accountID string) (account.Logo, error) {
	a, err := s.GetAccount(ctx, accountID)
	if err != nil {
		return account.Logo{}, err
	}
	var data []byte
	err = s.db.QueryRowContext(ctx, `SELECT data FROM account_logos WHERE account_id = ?`, accountID).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && a.Logo == nil) {
		return account.Logo{}, apierr.ErrNotFound
	}
	if err != nil {
		return account.Logo{}, err
	}
	return account.Logo{LogoInfo: *a.Logo, Data: data}, nil
}
