package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/store/sqlite"
	"github.com/bridgeline/bridgeline/shared/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "test.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestDataSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAssistant(ctx, assistantFixture()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.GetAssistant(ctx, assistantFixture().ID)
	if err != nil || got.Name != "Kept" {
		t.Errorf("after reopen GetAssistant = %q, %v; want Kept", got.Name, err)
	}
}

// TestCheckpointerCopiesTheLog: commits leave the log to the background checkpointer
// (SQLite's own checkpoint inside a commit is off), which copies it into the database
// file within a few CheckpointEvery; closing the last connection empties the log.
func TestCheckpointerCopiesTheLog(t *testing.T) {
	ctx := context.Background()
	s, path := openScratch(t)
	var auto int
	if err := s.DB().QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("wal_autocheckpoint = %d, %v; want 0 (no checkpoint inside a commit)", auto, err)
	}
	const rows, size = 300, 4096 // 1.2 MB: past SQLite's own 1000-page threshold
	for range rows {
		if _, err := s.DB().ExecContext(ctx, `INSERT INTO scratch (v) VALUES (randomblob(?))`, size); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * sqlite.CheckpointEvery)
	for {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() >= rows*size {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("database file is %d bytes %v after %d KB of writes: the log was not copied in", fi.Size(), 5*sqlite.CheckpointEvery, rows*size/1024)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		t.Errorf("log is %d bytes after Close, want empty", fi.Size())
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v, want the first's answer (nil)", err)
	}
}

// TestCheckpointerTruncatesALongLog: a reader that holds its snapshot keeps the log from
// starting again, so it grows past MaxLogFrames; once the reader lets go, the
// checkpointer truncates the log to nothing, and every row is still there.
func TestCheckpointerTruncatesALongLog(t *testing.T) {
	ctx := context.Background()
	s, path := openScratch(t)
	db := s.DB()
	reader, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := reader.QueryRowContext(ctx, `SELECT count(*) FROM scratch`).Scan(&n); err != nil { // takes its snapshot
		t.Fatal(err)
	}
	// One page each, and then some. Zeros fill a page as well as random bytes do, and
	// randomblob's ChaCha is most of the test's time under -race's pointer checks.
	const rows = sqlite.MaxLogFrames + 1000
	written := rows
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range rows {
		if _, err := tx.ExecContext(ctx, `INSERT INTO scratch (v) VALUES (zeroblob(4000))`); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() < sqlite.MaxLogFrames*4096 {
		t.Fatalf("log after %d rows = %v, %v; want past MaxLogFrames pages", rows, fi, err)
	}
	// While the reader holds its snapshot, the checkpointer's truncations cannot finish;
	// each gives up soon enough that writes go on.
	var slowest time.Duration
	for end := time.Now().Add(5 * sqlite.CheckpointEvery); time.Now().Before(end); {
		t0 := time.Now()
		if _, err := db.ExecContext(ctx, `INSERT INTO scratch (v) VALUES (randomblob(10))`); err != nil {
			t.Fatal(err)
		}
		written++
		slowest = max(slowest, time.Since(t0))
		time.Sleep(10 * time.Millisecond)
	}
	if slowest > time.Second {
		t.Errorf("slowest write while a truncation waited for the reader: %v, want well under the 10 s busy timeout", slowest)
	}
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("log truncated while a reader still needed it: %v, %v", fi, err)
	}
	reader.Rollback()
	deadline := time.Now().Add(20 * sqlite.CheckpointEvery)
	for {
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("log is %d bytes %v after its last reader left; want truncated", fi.Size(), 20*sqlite.CheckpointEvery)
		}
		time.Sleep(sqlite.CheckpointEvery / 4)
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM scratch`).Scan(&n); err != nil || n != written {
		t.Errorf("rows after the truncation = %d, %v; want %d", n, err, written)
	}
}

// openScratch opens a store in a new file with a table scratch (id, v BLOB) for writes of
// any size; the store is closed when the test ends.
func openScratch(t *testing.T) (*sqlite.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.DB().Exec(`CREATE TABLE scratch (id INTEGER PRIMARY KEY, v BLOB)`); err != nil {
		t.Fatal(err)
	}
	return s, path
}
