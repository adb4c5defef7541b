package sqlite

import (
	"context"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/avatars"
)

var _ avatars.Store = (*Store)(nil)

const avatarsSchema = `
CREATE TABLE avatars (
	id         TEXT PRIMARY KEY,
	account_id TEXT NOT NULL,
	doc        BLOB NOT NULL
);
CREATE INDEX avatars_by_account ON avatars (account_id, id);
`

// CreateAvatar inserts an avatar.
func (s *Store) CreateAvatar(ctx context.Context, a avatars.Avatar) error {
	_, err := s.exec(ctx, `INSERT INTO avatars (id, account_id, doc) VALUES (?, ?, ?)`, a.ID, a.AccountID, mustJSON(a))
	if isUnique(err) {
		return apierr.ErrConflict
	}
	return err
}

// GetAvatar reads an avatar.
func (s *Store) GetAvatar(ctx context.Context, id string) (avatars.Avatar, error) {
	return getDoc[avatars.Avatar](ctx, s.db, `SELECT doc FROM avatars WHERE id = ?`, id)
}

// ListAvatars lists an account's avatars newest first.
func (s *Store) ListAvatars(ctx context.Context, accountID string) ([]avatars.Avatar, error) {
	return listDocs[avatars.Avatar](ctx, s.db, `SELECT doc FROM avatars WHERE account_id = ? ORDER BY id DESC`, accountID)
}

// DeleteAvatar removes an avatar.
func (s *Store) DeleteAvatar(ctx context.Context, id string) error {
	_, err := s.exec(ctx, `DELETE FROM avatars WHERE id = ?`, id)
	return err
}
