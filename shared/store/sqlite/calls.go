package sqlite

import (
	"context"
	"database/sql"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
)

var _ call.Store = (*Store)(nil)

// callsSchema keeps call records and sessions (sessions.go). A platform's call id is unique per
// platform once known, so a redelivered inbound notification finds its call.
const callsSchema = `
CREATE TABLE calls (
	id               TEXT PRIMARY KEY,
	account_id       TEXT NOT NULL,
	line_id          TEXT NOT NULL,
	session_id       TEXT NOT NULL,
	platform         TEXT NOT NULL,
	platform_call_id TEXT NOT NULL,
	revision         INTEGER NOT NULL,
	doc              BLOB NOT NULL
);
CREATE INDEX calls_by_account ON calls (account_id, id);
CREATE INDEX calls_by_line ON calls (account_id, line_id, id);
CREATE INDEX calls_by_session ON calls (account_id, session_id, id);
CREATE UNIQUE INDEX calls_by_platform_call ON calls (platform, platform_call_id) WHERE platform_call_id != '';
CREATE TABLE sessions (
	id         TEXT PRIMARY KEY,
	account_id TEXT NOT NULL,
	revision   INTEGER NOT NULL,
	doc        BLOB NOT NULL
);
CREATE INDEX sessions_by_account ON sessions (account_id, id);
`

// SaveCall inserts or conditionally updates a call, with its events, in one transaction.
func (s *Store) SaveCall(ctx context.Context, c call.Call, evts []callevent.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := saveCall(ctx, tx, c); err != nil {
			return err
		}
		return InsertEvents(ctx, tx, evts)
	})
}

// saveCall writes c, conditional on its revision, and adds what its usage brings to its
// account's day (call.TakeUsageDue) and what its final report brings to its version's
// quality (call.TakeQualityDue) in the same transaction.
func saveCall(ctx context.Context, tx *sql.Tx, c call.Call) error {
	due, counted := c.TakeUsageDue()
	qdue, qcounted := c.TakeQualityDue()
	if err := writeCall(ctx, tx, c); err != nil {
		return err
	}
	if counted {
		if err := addUsage(ctx, tx, due); err != nil {
			return err
		}
	}
	if qcounted {
		return addQuality(ctx, tx, qdue)
	}
	return nil
}

func writeCall(ctx context.Context, tx *sql.Tx, c call.Call) error {
	prev := c.Revision
	c.Revision++
	if prev == 0 {
		_, err := tx.ExecContext(ctx, `INSERT INTO calls (id, account_id, line_id, session_id, platform, platform_call_id, revision, doc)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			c.ID, c.AccountID, c.LineID, c.SessionID, c.Platform, c.PlatformCallID, c.Revision, mustJSON(c))
		if isUnique(err) {
			return apierr.ErrConflict
		}
		return err
	}
	res, err := tx.ExecContext(ctx, `UPDATE calls SET line_id = ?, session_id = ?, platform = ?, platform_call_id = ?,
		revision = ?, doc = ? WHERE id = ? AND revision = ?`,
		c.LineID, c.SessionID, c.Platform, c.PlatformCallID, c.Revision, mustJSON(c), c.ID, prev)
	if isUnique(err) {
		return apierr.ErrConflict
	}
	return mustChange(res, err)
}

// QueueEvent writes evt to the outbox on its own; an id that exists is ErrConflict.
func (s *Store) QueueEvent(ctx context.Context, evt callevent.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		err := InsertEvents(ctx, tx, []callevent.Event{evt})
		if isUnique(err) {
			return apierr.ErrConflict
		}
		return err
	})
}

// GetCall reads a call.
func (s *Store) GetCall(ctx context.Context, id string) (call.Call, error) {
	return getDoc[call.Call](ctx, s.db, `SELECT doc FROM calls WHERE id = ?`, id)
}

// CallByPlatformID finds a call by its platform's id.
func (s *Store) CallByPlatformID(ctx context.Context, platform, platformCallID string) (call.Call, error) {
	if platformCallID == "" {
		return call.Call{}, apierr.ErrNotFound
	}
	return getDoc[call.Call](ctx, s.db, `SELECT doc FROM calls WHERE platform = ? AND platform_call_id = ?`,
		platform, platformCallID)
}

// ListCalls lists an account's calls newest first, those that match every filter set.
func (s *Store) ListCalls(ctx context.Context, accountID string, q call.ListQuery) ([]call.Call, error) {
	where, args := `account_id = ?`, []any{accountID}
	for _, f := range []struct{ column, value string }{
		{"line_id", q.LineID}, {"session_id", q.SessionID}, {"assistant_id", q.AssistantID},
		{"status", q.Status}, {"direction", q.Direction},
	} {
		if f.value != "" {
			where, args = where+` AND `+f.column+` = ?`, append(args, f.value)
		}
	}
	query, args, ok := pageQuery("doc", "calls", where, args, q.Query)
	if !ok {
		return nil, nil
	}
	return listDocs[call.Call](ctx, s.db, query, args...)
}
