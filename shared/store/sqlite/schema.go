package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// migration is one named schema step. Steps run once each, in list order, and are never
// edited after they land: a change is a new step at the end.
type migration struct {
	name string
	sql  string
}

// migrations is the whole schema history. Packages that keep tables here add their steps
// at the end of this list.
var migrations = []migration{
	{"0001_core", `
CREATE TABLE accounts (
	id  TEXT PRIMARY KEY,
	doc BLOB NOT NULL
);
CREATE TABLE api_keys (
	hash       TEXT PRIMARY KEY,
	account_id TEXT NOT NULL REFERENCES accounts(id),
	doc        BLOB NOT NULL
);
CREATE TABLE assistants (
	id         TEXT PRIMARY KEY,
	account_id TEXT NOT NULL,
	status     TEXT NOT NULL,
	revision   INTEGER NOT NULL,
	doc        BLOB NOT NULL
);
CREATE INDEX assistants_by_account ON assistants (account_id, id);
CREATE TABLE versions (
	id           TEXT PRIMARY KEY,
	assistant_id TEXT NOT NULL REFERENCES assistants(id),
	number       INTEGER NOT NULL,
	doc          BLOB NOT NULL,
	UNIQUE (assistant_id, number)
);
CREATE TABLE lines (
	id         TEXT PRIMARY KEY,
	account_id TEXT NOT NULL,
	platform   TEXT NOT NULL,
	handle     TEXT NOT NULL,
	revision   INTEGER NOT NULL,
	doc        BLOB NOT NULL,
	UNIQUE (platform, handle)
);
CREATE INDEX lines_by_account ON lines (account_id, id);
CREATE TABLE idempotency (
	account_id   TEXT NOT NULL,
	key          TEXT NOT NULL,
	request_hash TEXT NOT NULL,
	status       INTEGER NOT NULL,
	body         BLOB,
	created_at   TEXT NOT NULL,
	expires_at   TEXT NOT NULL,
	PRIMARY KEY (account_id, key)
);
CREATE TABLE events (
	id         TEXT PRIMARY KEY,
	account_id TEXT NOT NULL,
	type       TEXT NOT NULL,
	created_at TEXT NOT NULL,
	data       BLOB NOT NULL
);
CREATE INDEX events_by_account ON events (account_id, id);
`},
	{"0002_webhooks", webhooksSchema},                           // webhooks.go
	{"0003_call_decisions", decisionsSchema},                    // decisions.go
	{"0004_deliveries_by_endpoint", deliveriesByEndpointSchema}, // webhooks.go
	{"0005_calls_sessions", callsSchema},                        // calls.go
	{"0006_live_sessions", liveSessionsSchema},                  // sessions.go
	{"0007_api_key_ids", apiKeyIDsSchema},                       // accounts.go
	{"0008_limits_session_slots", sessionSlotsSchema},           // limits.go
	{"0008_filters_list_indexes", filtersListIndexesSchema},     // listpage.go
	{"0009_sweep_due", sweepDueSchema},                          // sessions.go
	{"0010_event_redeliveries", eventRedeliveriesSchema},        // webhooks.go
	{"0011_sip_trunks", sipTrunksSchema},                        // siptrunks.go
	{"0012_usage_days", usageSchema},                            // usage.go
	{"0013_usage_outbound", usageOutboundSchema},                // usage.go
	{"0014_account_logos", accountLogosSchema},                  // accounts.go
	{"0015_campaigns", campaignsSchema},                         // campaigns.go
	{"0015_avatars", avatarsSchema},                             // avatars.go
	{"0016_version_quality", versionQualitySchema},              // quality.go
}

func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, m := range migrations {
		err := s.tx(ctx, func(tx *sql.Tx) error {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE name = ?`, m.name).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (name) VALUES (?)`, m.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate %s: %w", m.name, err)
		}
	}
	return nil
}
