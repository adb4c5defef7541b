package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/bridgeline/bridgeline/shared/usage"
)

var _ usage.Store = (*Store)(nil)

// usageSchema keeps each account's usage per UTC day (shared/usage): one row a day,
// added to in the transaction that writes a call's usage (saveCall).
const usageSchema = `
CREATE TABLE usage_days (
	account_id            TEXT NOT NULL,
	date                  TEXT NOT NULL,
	calls                 INTEGER NOT NULL DEFAULT 0,
	duration_ms           INTEGER NOT NULL DEFAULT 0,
	billable_seconds      INTEGER NOT NULL DEFAULT 0,
	stt_audio_ms          INTEGER NOT NULL DEFAULT 0,
	tts_characters        INTEGER NOT NULL DEFAULT 0,
	llm_prompt_tokens     INTEGER NOT NULL DEFAULT 0,
	llm_completion_tokens INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (account_id, date)
);
`

// usageOutboundSchema adds what the daily outbound minutes cap counts
// (shared/destination): the outbound calls on real networks and the transfers.
const usageOutboundSchema = `
ALTER TABLE usage_days ADD COLUMN outbound_duration_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_days ADD COLUMN transfers INTEGER NOT NULL DEFAULT 0;
`

// addUsage adds due to its account's day, in tx.
func addUsage(ctx context.Context, tx *sql.Tx, due usage.Due) error {
	fields := due.Counts.Fields()
	cols, marks, sets := make([]string, len(fields)), make([]string, len(fields)), make([]string, len(fields))
	args := []any{due.AccountID, due.Date}
	for i, f := range fields {
		cols[i], marks[i] = f.Name, "?"
		sets[i] = f.Name + " = " + f.Name + " + excluded." + f.Name
		args = append(args, *f.Value)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO usage_days (account_id, date, `+strings.Join(cols, ", ")+`)
		VALUES (?, ?, `+strings.Join(marks, ", ")+`)
		ON CONFLICT (account_id, date) DO UPDATE SET `+strings.Join(sets, ", "), args...)
	if err != nil {
		return fmt.Errorf("add usage of %s on %s: %w", due.AccountID, due.Date, err)
	}
	return nil
}

// UsageDays reads the account's rows of the given dates.
func (s *Store) UsageDays(ctx context.Context, accountID string, dates []string) ([]usage.Day, error) {
	if len(dates) == 0 {
		return nil, nil
	}
	var c usage.Counts
	fields := c.Fields()
	cols := make([]string, len(fields))
	for i, f := range fields {
		cols[i] = f.Name
	}
	args := []any{accountID}
	for _, d := range dates {
		args = append(args, d)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT date, `+strings.Join(cols, ", ")+` FROM usage_days
		WHERE account_id = ? AND date IN (?`+strings.Repeat(", ?", len(dates)-1)+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("usage days: %w", err)
	}
	defer rows.Close()
	var out []usage.Day
	for rows.Next() {
		var d usage.Day
		dest := []any{&d.Date}
		for _, f := range d.Counts.Fields() {
			dest = append(dest, f.Value)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}
