// Package sqlite is Bridgeline's embedded store: one SQLite file through a pure-Go driver
// (so it builds with CGO_ENABLED=0), used by the local stack. Each table keeps the columns
// it is queried or constrained by, plus the record itself as JSON in `doc`.
//
// SQLite runs one writer at a time; every write is a transaction begun IMMEDIATE, and
// conditional writes check a revision column, so the rules match the DynamoDB store's
// condition expressions.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/store"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Every store is a whole store.Store: the assertion keeps it one.
var _ store.Store = (*Store)(nil)

// Store implements every store interface of the domain packages.
type Store struct {
	db *sql.DB
	// wmu makes this process's writes take turns before they reach SQLite: SQLite has
	// one writer, and writers that meet inside it wait in its busy handler, which
	// sleeps in steps of milliseconds; a mutex hands over in microseconds.
	wmu sync.Mutex

	stop      chan struct{} // closed by Close: the checkpointer returns
	stopped   chan struct{} // closed by the checkpointer as it returns
	closeOnce sync.Once
	closeErr  error
}

// busyTimeout is how long a statement waits for SQLite's locks held by another process.
const busyTimeout = 10 * time.Second

// CheckpointEvery is how often the store copies its write-ahead log into the database
// file, beside the requests. Left to SQLite, the copy runs inside whichever commit takes
// the log past 1000 pages, and that request waits for it: every 70th session create or
// so took several milliseconds longer (the p99 of BenchmarkSessionCreate). A pass with
// nothing to copy costs one statement.
const CheckpointEvery = 200 * time.Millisecond

// MaxLogFrames is the log's length (frames of one 4 KiB page) past which the
// checkpointer waits for readers to move on and truncates it.
const MaxLogFrames = 10000

// Open opens (creating if needed) the database file at path and brings its schema up to
// date.
func Open(ctx context.Context, path string) (*Store, error) {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "wal_autocheckpoint(0)") // the checkpointer's job, off the request path
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// One connection for writes keeps SQLite's single writer from fighting over locks;
	// WAL lets reads go on beside it.
	db.SetMaxOpenConns(8)
	s := &Store{db: db, stop: make(chan struct{}), stopped: make(chan struct{})}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	go s.checkpointer()
	return s, nil
}

// checkpointer copies the write-ahead log into the database file every CheckpointEvery.
// A PASSIVE checkpoint neither waits for nor blocks readers and writers; what it could
// not copy (a reader still using old pages) is copied by a later pass, and nothing is
// lost meanwhile: the log holds it. The log file starts again from its beginning once a
// write finds it all copied and no reader in it; readers that never pause (SQLite's own
// checkpoint has the same weakness) keep it growing, so past MaxLogFrames the
// checkpointer truncates it, waiting for those readers and holding this process's
// writers back meanwhile.
func (s *Store) checkpointer() {
	defer close(s.stopped)
	t := time.NewTicker(CheckpointEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		var busy, frames, copied int
		if err := s.db.QueryRow(`PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied); err != nil || frames < MaxLogFrames {
			continue // a failed pass is tried again at the next tick
		}
		s.truncateLog()
	}
}

// truncateWait bounds how long a truncation waits for readers (and so holds writers
// back); one that cannot finish in time is tried again at the next tick.
const truncateWait = 100 * time.Millisecond

// truncateLog copies the whole log in and truncates it, on a connection of its own that
// waits at most truncateWait for readers.
func (s *Store) truncateLog() {
	ctx := context.Background()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA busy_timeout = %d`, truncateWait.Milliseconds())); err != nil {
		return
	}
	s.wmu.Lock()
	conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	s.wmu.Unlock()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA busy_timeout = %d`, busyTimeout.Milliseconds())); err != nil {
		conn.Raw(func(any) error { return driver.ErrBadConn }) // not back to the pool with the short wait
	}
}

// Close stops the checkpointer and closes the database (SQLite copies the rest of the log
// in as the file's last connection closes). Later calls return the first call's answer.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.stopped
		s.closeErr = s.db.Close()
	})
	return s.closeErr
}

// DB exposes the handle for packages that keep their own tables in the same file.
func (s *Store) DB() *sql.DB { return s.db }

// tx runs fn in one IMMEDIATE transaction and commits it if fn returns nil.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// exec runs one write statement outside a transaction, taking its turn as tx does.
func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.db.ExecContext(ctx, query, args...)
}

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// getDoc reads one JSON doc; no row is apierr.ErrNotFound.
func getDoc[T any](ctx context.Context, q querier, query string, args ...any) (T, error) {
	var v T
	var doc []byte
	err := q.QueryRowContext(ctx, query, args...).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return v, apierr.ErrNotFound
	}
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(doc, &v); err != nil {
		return v, fmt.Errorf("decode row: %w", err)
	}
	return v, nil
}

// listDocs reads JSON docs in query order.
func listDocs[T any](ctx context.Context, q querier, query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var doc []byte
		if err := rows.Scan(&doc); err != nil {
			return nil, err
		}
		var v T
		if err := json.Unmarshal(doc, &v); err != nil {
			return nil, fmt.Errorf("decode row: %w", err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// mustChange turns "no row matched the condition" into apierr.ErrConflict.
func mustChange(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return apierr.ErrConflict
	}
	return nil
}

// isUnique reports a UNIQUE or PRIMARY KEY violation.
func isUnique(err error) bool {
	return err != nil && (contains(err.Error(), "UNIQUE constraint failed") || contains(err.Error(), "constraint failed: PRIMARY KEY"))
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("sqlite: marshal %T: %v", v, err))
	}
	return b
}

// InsertEvents writes events into the outbox inside tx, so an event exists exactly when
// the state change that caused it committed.
func InsertEvents(ctx context.Context, tx *sql.Tx, evts []callevent.Event) error {
	for _, e := range evts {
		_, err := tx.ExecContext(ctx,
			`INSERT INTO events (id, account_id, type, created_at, data) VALUES (?, ?, ?, ?, ?)`,
			e.ID, e.AccountID, e.Type, e.CreatedAt.UTC().Format(timeLayout), []byte(e.Data))
		if err != nil {
			return fmt.Errorf("insert event %s: %w", e.ID, err)
		}
	}
	return nil
}

// timeLayout sorts as text in time order.
const timeLayout = "2006-01-02T15:04:05.000000000Z"
