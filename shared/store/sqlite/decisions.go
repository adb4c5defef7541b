package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/decision"
)

var (
	_ decision.Store    = (*Store)(nil)
	_ decision.EventLog = (*Store)(nil)
)

// decisionsSchema keeps customer_decides decisions, one row per inbound call; `decision`
// is empty while the call rings, and the first answer fills it.
const decisionsSchema = `
CREATE TABLE call_decisions (
	call_id  TEXT PRIMARY KEY,
	decision TEXT NOT NULL,
	doc      BLOB NOT NULL
);
`

// CreateDecision inserts a pending decision.
func (s *Store) CreateDecision(ctx context.Context, r decision.Record) error {
	_, err := s.exec(ctx, `INSERT INTO call_decisions (call_id, decision, doc) VALUES (?, ?, ?)`,
		r.CallID, r.Decision, mustJSON(r))
	if isUnique(err) {
		return apierr.ErrConflict
	}
	return err
}

// GetDecision reads a call's decision.
func (s *Store) GetDecision(ctx context.Context, callID string) (decision.Record, error) {
	return getDoc[decision.Record](ctx, s.db, `SELECT doc FROM call_decisions WHERE call_id = ?`, callID)
}

// Decide records the decision if none is recorded yet, and returns the record.
func (s *Store) Decide(ctx context.Context, callID, d, source string, vars map[string]string, at time.Time) (decision.Record, bool, error) {
	var out decision.Record
	var won bool
	err := s.tx(ctx, func(tx *sql.Tx) error {
		r, err := getDoc[decision.Record](ctx, tx, `SELECT doc FROM call_decisions WHERE call_id = ?`, callID)
		if err != nil {
			return err
		}
		if r.Decision == "" {
			r.Decision, r.Source, r.DecidedAt, r.Variables = d, source, at.UTC(), vars
			if err := mustChange(tx.ExecContext(ctx,
				`UPDATE call_decisions SET decision = ?, doc = ? WHERE call_id = ? AND decision = ''`,
				d, mustJSON(r), callID)); err != nil {
				return err
			}
			won = true
		}
		out = r
		return nil
	})
	if errors.Is(err, apierr.ErrConflict) {
		// Lost to a writer in between: read what won.
		out, err = s.GetDecision(ctx, callID)
		return out, false, err
	}
	return out, won, err
}

// RecordEvent writes an event that is not part of another state change (call.incoming,
// posted synchronously) into the event log; it is marked fanned out, so the outbox worker
// does not queue it.
func (s *Store) RecordEvent(ctx context.Context, evt callevent.Event) error {
	_, err := s.exec(ctx,
		`INSERT INTO events (id, account_id, type, created_at, data, dispatched) VALUES (?, ?, ?, ?, ?, 1)`,
		evt.ID, evt.AccountID, evt.Type, evt.CreatedAt.UTC().Format(timeLayout), []byte(evt.Data))
	return err
}
