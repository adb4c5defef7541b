package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/session"
)

var (
	_ session.Store      = (*Store)(nil)
	_ session.SweepIndex = (*Store)(nil)
)

// liveSessionsSchema marked the sessions that had not ended (or whose call.ended was
// held), for the sweeper's former list of live sessions; sweepDueSchema replaced it.
const liveSessionsSchema = `
ALTER TABLE sessions ADD COLUMN live INTEGER NOT NULL DEFAULT 0;
UPDATE sessions SET live = 1 WHERE json_extract(CAST(doc AS TEXT), '$.status') IN ('ringing', 'active');
CREATE INDEX sessions_live ON sessions (id) WHERE live = 1;
`

// sweepDueSchema is the sweep index (session.SweepIndex): sweep_due is a Live session's
// due time (timeLayout, so text order is time order), NULL otherwise, and the partial
// index holds only the Live ones, by (due time, id). The sessions that were live get the
// zero time, due at once: the first sweep looks at each and writes its due time.
const sweepDueSchema = `
ALTER TABLE sessions ADD COLUMN sweep_due TEXT;
UPDATE sessions SET sweep_due = '0001-01-01T00:00:00.000000000Z' WHERE live = 1;
CREATE INDEX sessions_sweep_due ON sessions (sweep_due, id) WHERE sweep_due IS NOT NULL;
DROP INDEX sessions_live;
ALTER TABLE sessions DROP COLUMN live;
`

// sweepDue is the session's sweep_due: its due time while it is Live, else NULL.
func sweepDue(ses session.Session) sql.NullString {
	k, ok := ses.Due()
	if !ok {
		return sql.NullString{}
	}
	return sql.NullString{String: k.At.UTC().Format(timeLayout), Valid: true}
}

// SaveSession writes a session and its call, each inserted or conditionally updated, and
// their events, in one transaction.
func (s *Store) SaveSession(ctx context.Context, ses session.Session, c call.Call, evts []callevent.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		prev := ses.Revision
		ses.Revision++
		ses.Slot = ses.HoldsSlot() // the write that ends a session gives its slot back
		if prev == 0 {
			_, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, account_id, revision, sweep_due, slot, doc) VALUES (?, ?, ?, ?, ?, ?)`,
				ses.ID, ses.AccountID, ses.Revision, sweepDue(ses), ses.Slot, mustJSON(ses))
			if isUnique(err) {
				return apierr.ErrConflict
			}
			if err != nil {
				return err
			}
		} else if err := mustChange(tx.ExecContext(ctx, `UPDATE sessions SET revision = ?, sweep_due = ?, slot = ?, doc = ? WHERE id = ? AND revision = ?`,
			ses.Revision, sweepDue(ses), ses.Slot, mustJSON(ses), ses.ID, prev)); err != nil {
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

// DueSessions lists the Live sessions due at or before now, after the key after, in
// (due time, id) order: one range of the partial index sessions_sweep_due.
func (s *Store) DueSessions(ctx context.Context, now time.Time, after session.DueKey, limit int) ([]session.Session, error) {
	return listDocs[session.Session](ctx, s.db,
		`SELECT doc FROM sessions
		 WHERE sweep_due IS NOT NULL AND sweep_due <= ? AND (sweep_due, id) > (?, ?)
		 ORDER BY sweep_due, id LIMIT ?`,
		now.UTC().Format(timeLayout), after.At.UTC().Format(timeLayout), after.ID, limit)
}
