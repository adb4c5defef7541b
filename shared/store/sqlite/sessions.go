package sqlite

import (
	"context"
	"database/sql"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/session"
)

var (
	_ session.Store     = (*Store)(nil)
	_ session.LiveStore = (*Store)(nil)
)

// liveSessionsSchema marks the sessions that have not ended (or whose call.ended is
// held), for the sweeper's LiveSessions; the partial index holds only those.
const liveSessionsSchema = `
ALTER TABLE sessions ADD COLUMN live INTEGER NOT NULL DEFAULT 0;
UPDATE sessions SET live = 1 WHERE json_extract(CAST(doc AS TEXT), '$.status') IN ('ringing', 'active');
CREATE INDEX sessions_live ON sessions (id) WHERE live = 1;
`

func liveFlag(ses session.Session) int {
	if !ses.Live() {
		return 0
	}
	return 1
}

// SaveSession writes a session and its call, each inserted or conditionally updated, and
// their events, in one transaction.
func (s *Store) SaveSession(ctx context.Context, ses session.Session, c call.Call, evts []callevent.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		prev := ses.Revision
		ses.Revision++
		ses.Slot = ses.HoldsSlot() // the write that ends a session gives its slot back
		if prev == 0 {
			_, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, account_id, revision, live, slot, doc) VALUES (?, ?, ?, ?, ?, ?)`,
				ses.ID, ses.AccountID, ses.Revision, liveFlag(ses), ses.Slot, mustJSON(ses))
			if isUnique(err) {
				return apierr.ErrConflict
			}
			if err != nil {
				return err
			}
		} else if err := mustChange(tx.ExecContext(ctx, `UPDATE sessions SET revision = ?, live = ?, slot = ?, doc = ? WHERE id = ? AND revision = ?`,
			ses.Revision, liveFlag(ses), ses.Slot, mustJSON(ses), ses.ID, prev)); err != nil {
			return err
		}
		if err := saveCall(ctx, tx, c); err != nil {
			return err
		}
		return InsertEvents(ctx, tx, evts)
	})
}

// DiscardSession deletes a session and its call, both still at their first revision.
func (s *Store) DiscardSession(ctx context.Context, sessionID, callID string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := mustChange(tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ? AND revision = 1`, sessionID)); err != nil {
			return err
		}
		return mustChange(tx.ExecContext(ctx, `DELETE FROM calls WHERE id = ? AND revision = 1`, callID))
	})
}

// GetSession reads a session.
func (s *Store) GetSession(ctx context.Context, id string) (session.Session, error) {
	return getDoc[session.Session](ctx, s.db, `SELECT doc FROM sessions WHERE id = ?`, id)
}

// ListSessions lists an account's sessions newest first.
func (s *Store) ListSessions(ctx context.Context, accountID string, q session.ListQuery) ([]session.Session, error) {
	where, args := `account_id = ?`, []any{accountID}
	if q.Status != "" {
		where, args = where+` AND status = ?`, append(args, q.Status)
	}
	query, args, ok := pageQuery("doc", "sessions", where, args, q.Query)
	if !ok {
		return nil, nil
	}
	return listDocs[session.Session](ctx, s.db, query, args...)
}

// LiveSessions lists sessions that have not ended or are held, oldest first, after afterID.
func (s *Store) LiveSessions(ctx context.Context, afterID string, limit int) ([]session.Session, error) {
	return listDocs[session.Session](ctx, s.db,
		`SELECT doc FROM sessions WHERE live = 1 AND id > ? ORDER BY id LIMIT ?`, afterID, limit)
}
