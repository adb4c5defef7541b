package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/bridgeline/bridgeline/shared/quality"
)

var _ quality.Store = (*Store)(nil)

// versionQualitySchema keeps each version's quality aggregate (shared/quality): one row
// per version and count (quality.Counts.Fields names them), added to in the
// transaction that writes a call's final report (saveCall).
const versionQualitySchema = `
CREATE TABLE version_quality (
	account_id TEXT NOT NULL,
	version_id TEXT NOT NULL,
	name       TEXT NOT NULL,
	value      INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (account_id, version_id, name)
);
`

// addQuality adds due to its version's rows, in tx; counts of zero add no row.
func addQuality(ctx context.Context, tx *sql.Tx, due quality.Due) error {
	for _, f := range due.Counts.Fields() {
		if *f.Value == 0 {
			continue
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO version_quality (account_id, version_id, name, value) VALUES (?, ?, ?, ?)
			ON CONFLICT (account_id, version_id, name) DO UPDATE SET value = value + excluded.value`,
			due.AccountID, due.VersionID, f.Name, *f.Value)
		if err != nil {
			return fmt.Errorf("add quality of %s: %w", due.VersionID, err)
		}
	}
	return nil
}

// VersionQuality reads the account's rows of the given versions.
func (s *Store) VersionQuality(ctx context.Context, accountID string, versionIDs []string) ([]quality.Version, error) {
	if len(versionIDs) == 0 {
		return nil, nil
	}
	args := []any{accountID}
	for _, id := range versionIDs {
		args = append(args, id)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT version_id, name, value FROM version_quality
		WHERE account_id = ? AND version_id IN (?`+strings.Repeat(", ?", len(versionIDs)-1)+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("version quality: %w", err)
	}
	defer rows.Close()
	byVersion := map[string]*quality.Version{}
	var order []string
	for rows.Next() {
		var id, name string
		var value int64
		if err := rows.Scan(&id, &name, &value); err != nil {
			return nil, err
		}
		v := byVersion[id]
		if v == nil {
			v = &quality.Version{VersionID: id}
			byVersion[id] = v
			order = append(order, id)
		}
		for _, f := range v.Counts.Fields() {
			if f.Name == name {
				*f.Value = value
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]quality.Version, len(order))
	for i, id := range order {
		out[i] = *byVersion[id]
	}
	return out, nil
}
