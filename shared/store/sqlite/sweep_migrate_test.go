package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/session"
)

// TestSweepIndexMigration: a database written before the sweep index had its live
// sessions marked live = 1; after the migration each is due at once (the sweeper then
// writes its due time), and the sessions that had ended are not in the index.
func TestSweepIndexMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	// The database as the version before the sweep index left it.
	before := migrations
	for i, m := range migrations {
		if m.name == "0009_sweep_due" {
			migrations = migrations[:i]
		}
	}
	old, err := Open(ctx, path)
	migrations = before
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	for _, r := range []struct {
		id, status string
		live       int
	}{{"ses_live", session.StatusActive, 1}, {"ses_over", session.StatusEnded, 0}} {
		doc := mustJSON(session.Session{ID: r.id, AccountID: "acct_1", Status: r.status, CreatedAt: now, Revision: 1})
		if _, err := old.db.ExecContext(ctx, `INSERT INTO sessions (id, account_id, revision, live, doc) VALUES (?, ?, 1, ?, ?)`,
			r.id, "acct_1", r.live, doc); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.DueSessions(ctx, time.Time{}, session.DueKey{}, 10)
	if err != nil || len(got) != 1 || got[0].ID != "ses_live" {
		t.Fatalf("DueSessions(the zero time) after the migration = %v, %v; want the live session only", got, err)
	}
	// Written again, it takes its own due time.
	due := now.Add(time.Hour)
	got[0].SweepAt = &due
	if err := s.SaveSession(ctx, got[0], call.Call{ID: "call_1", AccountID: "acct_1", Status: call.StatusActive, StartedAt: now}, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := s.DueSessions(ctx, now, session.DueKey{}, 10); err != nil || len(got) != 0 {
		t.Errorf("DueSessions(now) after the write = %d, %v; want none", len(got), err)
	}
	if got, err := s.DueSessions(ctx, due, session.DueKey{}, 10); err != nil || len(got) != 1 {
		t.Errorf("DueSessions(its due time) = %d, %v; want it", len(got), err)
	}
}
