package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/listing"
)

var _ line.Store = (*Store)(nil)

// CreateLine inserts a line; the platform and handle must be free.
func (s *Store) CreateLine(ctx context.Context, l line.Line) error {
	_, err := s.exec(ctx,
		`INSERT INTO lines (id, account_id, platform, handle, revision, doc) VALUES (?, ?, ?, ?, ?, ?)`,
		l.ID, l.AccountID, l.Platform, l.Handle, l.Revision, mustJSON(l))
	if isUnique(err) {
		return apierr.ErrConflict
	}
	return err
}

// GetLine reads a line.
func (s *Store) GetLine(ctx context.Context, id string) (line.Line, error) {
	return getDoc[line.Line](ctx, s.db, `SELECT doc FROM lines WHERE id = ?`, id)
}

// LineByHandle finds the line calls to a handle arrive on.
func (s *Store) LineByHandle(ctx context.Context, platform, handle string) (line.Line, error) {
	return getDoc[line.Line](ctx, s.db, `SELECT doc FROM lines WHERE platform = ? AND handle = ?`, platform, handle)
}

// ListLines lists an account's lines newest first.
func (s *Store) ListLines(ctx context.Context, accountID string, q listing.Query) ([]line.Line, error) {
	query, args, ok := pageQuery("doc", "lines", `account_id = ?`, []any{accountID}, q)
	if !ok {
		return nil, nil
	}
	return listDocs[line.Line](ctx, s.db, query, args...)
}

// FirstLine reads the account's oldest line.
func (s *Store) FirstLine(ctx context.Context, accountID string) (line.Line, error) {
	return getDoc[line.Line](ctx, s.db, `SELECT doc FROM lines WHERE account_id = ? ORDER BY id LIMIT 1`, accountID)
}

// UpdateLine writes l if its revision is unchanged and moves the assignment count from
// change.From to change.To (conditional on To's revision) in the same transaction.
func (s *Store) UpdateLine(ctx context.Context, l line.Line, change *line.AssistantChange) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		prev := l.Revision
		l.Revision++
		err := mustChange(tx.ExecContext(ctx, `UPDATE lines SET revision = ?, doc = ? WHERE id = ? AND revision = ?`,
			l.Revision, mustJSON(l), l.ID, prev))
		if err != nil || change == nil {
			return err
		}
		if change.To != "" {
			if err := bumpAssigned(ctx, tx, change.To, +1, &change.ToRevision); err != nil {
				return err
			}
		}
		if change.From != "" {
			return bumpAssigned(ctx, tx, change.From, -1, nil)
		}
		return nil
	})
}

// bumpAssigned adds delta to an assistant's AssignedLines, requiring it to be active and
// published when the count goes up, and at revision *rev when rev is given.
func bumpAssigned(ctx context.Context, tx *sql.Tx, id string, delta int, rev *int64) error {
	var doc []byte
	var revision int64
	err := tx.QueryRowContext(ctx, `SELECT doc, revision FROM assistants WHERE id = ?`, id).Scan(&doc, &revision)
	if err == sql.ErrNoRows {
		return apierr.ErrConflict
	}
	if err != nil {
		return err
	}
	if rev != nil && revision != *rev {
		return apierr.ErrConflict
	}
	var a assistant.Assistant
	if err := json.Unmarshal(doc, &a); err != nil {
		return fmt.Errorf("decode assistant %s: %w", id, err)
	}
	if delta > 0 && (a.Status != assistant.StatusActive || a.ActiveVersionID == "") {
		return apierr.ErrConflict
	}
	a.AssignedLines = max(0, a.AssignedLines+delta)
	a.Revision = revision
	return updateAssistant(ctx, tx, a)
}
