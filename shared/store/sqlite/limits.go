package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/session"
)

// sessionSlotsSchema marks the sessions that hold one of their account's
// concurrent-session slots; the partial index makes counting an account's a short range
// read. Sessions from before hold none (they never took one).
const sessionSlotsSchema = `
ALTER TABLE sessions ADD COLUMN slot INTEGER NOT NULL DEFAULT 0;
CREATE INDEX sessions_slots ON sessions (account_id) WHERE slot = 1;
`

// CreateSession inserts a new session and its call, if the account's sessions that hold
// a slot are fewer than its limit. Counting and inserting happen in one transaction, and
// the store's transactions are immediate (one writer at a time), so two creates cannot
// both see the last free slot.
func (s *Store) CreateSession(ctx context.Context, ses session.Session, c call.Call, evts []callevent.Event, defaultLimit int) error {
	if ses.Revision != 0 || !ses.Slot {
		return fmt.Errorf("create session %s: not a new session that takes a slot", ses.ID)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		ses.Revision = 1
		res, err := tx.ExecContext(ctx, insertWithinLimit,
			ses.ID, ses.AccountID, ses.Revision, sweepDue(ses), mustJSON(ses), defaultLimit)
		if isUnique(err) {
			return apierr.ErrConflict
		}
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return session.ErrConcurrentLimit
		}
		if err := saveCall(ctx, tx, c); err != nil {
			return err
		}
		return InsertEvents(ctx, tx, evts)
	})
}

// insertWithinLimit inserts a session holding a slot only while the account's sessions
// that hold one are fewer than its own limit (its doc's max_concurrent_sessions) or,
// without one, the default (?6): the check and the insert are one statement.
const insertWithinLimit = `
INSERT INTO sessions (id, account_id, revision, sweep_due, slot, doc)
SELECT ?1, ?2, ?3, ?4, 1, ?5
WHERE (SELECT count(*) FROM sessions WHERE account_id = ?2 AND slot = 1) <
	COALESCE((SELECT json_extract(CAST(doc AS TEXT), '$.max_concurrent_sessions') FROM accounts WHERE id = ?2), ?6)`

// SessionSlotsInUse counts the account's sessions that hold a slot (the operator's view).
func (s *Store) SessionSlotsInUse(ctx context.Context, accountID string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE account_id = ? AND slot = 1`, accountID).Scan(&n)
	return n, err
}

// SetMaxConcurrentSessions sets the account's own limit of live sessions (nil: the
// deployment's default) and returns the account.
func (s *Store) SetMaxConcurrentSessions(ctx context.Context, accountID string, limit *int) (account.Account, error) {
	var a account.Account
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		if a, err = getDoc[account.Account](ctx, tx, `SELECT doc FROM accounts WHERE id = ?`, accountID); err != nil {
			return err
		}
		a.MaxConcurrentSessions = limit
		_, err = tx.ExecContext(ctx, `UPDATE accounts SET doc = ? WHERE id = ?`, mustJSON(a), accountID)
		return err
	})
	return a, err
}

// SetOutbound sets the account's destination policy (shared/destination) and returns
// the account.
func (s *Store) SetOutbound(ctx context.Context, accountID string, o account.Outbound) (account.Account, error) {
	var a account.Account
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		if a, err = getDoc[account.Account](ctx, tx, `SELECT doc FROM accounts WHERE id = ?`, accountID); err != nil {
			return err
		}
		a.Outbound = o
		_, err = tx.ExecContext(ctx, `UPDATE accounts SET doc = ? WHERE id = ?`, mustJSON(a), accountID)
		return err
	})
	return a, err
}
