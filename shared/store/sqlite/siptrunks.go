package sqlite

import (
	"context"
	"database/sql"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/siptrunk"
)

var (
	_ siptrunk.Store     = (*Store)(nil)
	_ siptrunk.LineStore = (*Store)(nil)
)

const sipTrunksSchema = `
CREATE TABLE sip_trunks (
	id         TEXT PRIMARY KEY,
	account_id TEXT NOT NULL,
	revision   INTEGER NOT NULL,
	doc        BLOB NOT NULL
);
CREATE INDEX sip_trunks_by_account ON sip_trunks (account_id, id);
`

// CreateTrunk inserts a trunk.
func (s *Store) CreateTrunk(ctx context.Context, t siptrunk.Trunk) error {
	_, err := s.exec(ctx, `INSERT INTO sip_trunks (id, account_id, revision, doc) VALUES (?, ?, ?, ?)`,
		t.ID, t.AccountID, t.Revision, mustJSON(t))
	if isUnique(err) {
		return apierr.ErrConflict
	}
	return err
}

// GetTrunk reads a trunk.
func (s *Store) GetTrunk(ctx context.Context, id string) (siptrunk.Trunk, error) {
	return getDoc[siptrunk.Trunk](ctx, s.db, `SELECT doc FROM sip_trunks WHERE id = ?`, id)
}

// ListTrunks lists an account's trunks newest first.
func (s *Store) ListTrunks(ctx context.Context, accountID string, q listing.Query) ([]siptrunk.Trunk, error) {
	query, args, ok := pageQuery("doc", "sip_trunks", `account_id = ?`, []any{accountID}, q)
	if !ok {
		return nil, nil
	}
	return listDocs[siptrunk.Trunk](ctx, s.db, query, args...)
}

// AllTrunks pages through every trunk by id.
func (s *Store) AllTrunks(ctx context.Context, afterID string, limit int) ([]siptrunk.Trunk, error) {
	return listDocs[siptrunk.Trunk](ctx, s.db, `SELECT doc FROM sip_trunks WHERE id > ? ORDER BY id LIMIT ?`, afterID, limit)
}

// UpdateTrunk writes t if its revision is unchanged.
func (s *Store) UpdateTrunk(ctx context.Context, t siptrunk.Trunk) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return updateTrunk(ctx, tx, t) })
}

func updateTrunk(ctx context.Context, tx *sql.Tx, t siptrunk.Trunk) error {
	prev := t.Revision
	t.Revision++
	return mustChange(tx.ExecContext(ctx, `UPDATE sip_trunks SET revision = ?, doc = ? WHERE id = ? AND revision = ?`,
		t.Revision, mustJSON(t), t.ID, prev))
}

// DeleteTrunk removes t if its revision is unchanged.
func (s *Store) DeleteTrunk(ctx context.Context, t siptrunk.Trunk) error {
	return mustChange(s.exec(ctx, `DELETE FROM sip_trunks WHERE id = ? AND revision = ?`, t.ID, t.Revision))
}

// CreateLineOnTrunk inserts l with its assignment change and saves t, in one transaction.
func (s *Store) CreateLineOnTrunk(ctx context.Context, l line.Line, change *line.AssistantChange, t siptrunk.Trunk) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO lines (id, account_id, platform, handle, revision, doc) VALUES (?, ?, ?, ?, ?, ?)`,
			l.ID, l.AccountID, l.Platform, l.Handle, l.Revision, mustJSON(l))
		if isUnique(err) {
			return apierr.ErrConflict
		}
		if err != nil {
			return err
		}
		if err := updateTrunk(ctx, tx, t); err != nil {
			return err
		}
		if change != nil && change.To != "" {
			return bumpAssigned(ctx, tx, change.To, +1, &change.ToRevision)
		}
		return nil
	})
}

// DeleteLineFromTrunk removes l and takes it off its assistant's count, and saves t
// (when it has one), in one transaction.
func (s *Store) DeleteLineFromTrunk(ctx context.Context, l line.Line, t siptrunk.Trunk) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := mustChange(tx.ExecContext(ctx, `DELETE FROM lines WHERE id = ? AND revision = ?`, l.ID, l.Revision)); err != nil {
			return err
		}
		if t.ID != "" {
			if err := updateTrunk(ctx, tx, t); err != nil {
				return err
			}
		}
		if l.AssistantID != "" {
			return bumpAssigned(ctx, tx, l.AssistantID, -1, nil)
		}
		return nil
	})
}
