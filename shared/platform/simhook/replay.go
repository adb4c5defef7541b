package simhook

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/bridgeline/bridgeline/shared/idempotency"
)

// ReplayWindow is how long a notification id must be remembered: a signature is accepted
// from Tolerance before to Tolerance after the receiver's clock, so a captured
// notification can be replayed for at most twice Tolerance after it was first seen.
const ReplayWindow = 2 * Tolerance

// Replays remembers the notifications a receiver handled, so that a captured one
// replayed within its signature's tolerance is refused. Claim takes an id, or says who
// has it; Release gives back an id whose handling failed (also by a panic), so the
// sender's redelivery is handled; Done marks it handled for good.
type Replays interface {
	Claim(ctx context.Context, id string, now time.Time) (Claim, error)
	Done(ctx context.Context, id string) error
	Release(ctx context.Context, id string) error
}

// Claim is the state of a notification id when a receiver claims it.
type Claim int

const (
	// Claimed: the id was free; the caller holds it until Done or Release.
	Claimed Claim = iota
	// Held: another delivery holds it and has not finished, or died without releasing
	// it (a crashed process). The receiver handles the notification anyway: handling is
	// idempotent, and refusing would lose a redelivery that follows a crash.
	Held
	// Handled: a delivery of this id was handled: this one is a replay.
	Handled
)

// MemoryReplays is Replays in one process's memory (the local stack), bounded in time
// (an id is forgotten ReplayWindow after it was claimed, when its signature could no
// longer pass anyway) and in size (at most Max ids; past it the oldest is forgotten
// early, which only senders holding the secret can cause). Lambdas, whose instances do
// not share memory, keep ids in the idempotency table instead.
type MemoryReplays struct {
	// Max bounds the ids kept (default 100,000: about 10 MB).
	Max int

	mu    sync.Mutex
	seen  map[string]memoryClaim
	order []string // ids in claim order, for expiry and the size bound
}

type memoryClaim struct {
	until time.Time // when it may be forgotten
	done  bool
}

var _ Replays = (*MemoryReplays)(nil)

// Claim takes id, or says who has it.
func (m *MemoryReplays) Claim(_ context.Context, id string, now time.Time) (Claim, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[string]memoryClaim{}
	}
	m.expire(now)
	if c, ok := m.seen[id]; ok {
		if c.done {
			return Handled, nil
		}
		return Held, nil
	}
	max := m.Max
	if max <= 0 {
		max = 100_000
	}
	for len(m.seen) >= max && len(m.order) > 0 {
		delete(m.seen, m.order[0])
		m.order = m.order[1:]
	}
	m.seen[id] = memoryClaim{until: now.Add(ReplayWindow)}
	m.order = append(m.order, id)
	return Claimed, nil
}

// expire forgets the ids past their window (they sit at the front of order, which is in
// claim order), and ids released since.
func (m *MemoryReplays) expire(now time.Time) {
	n := 0
	for _, id := range m.order {
		c, ok := m.seen[id]
		if ok && now.Before(c.until) {
			break
		}
		delete(m.seen, id)
		n++
	}
	m.order = m.order[n:]
}

// Done marks id handled, for the rest of its window.
func (m *MemoryReplays) Done(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.seen[id]; ok {
		c.done = true
		m.seen[id] = c
	}
	return nil
}

// Release forgets id.
func (m *MemoryReplays) Release(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.seen, id)
	return nil
}

// Len is how many ids are kept.
func (m *MemoryReplays) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.seen)
}

// StoreReplays is Replays in the idempotency store (on Lambda, the idempotency table:
// BeginIdempotent is a conditional put, so every instance of the receiver shares the
// ids, and the table's TTL deletes each one after ReplayWindow). Ids are kept under an
// account id no API key can have.
type StoreReplays struct {
	Store idempotency.Store
}

var _ Replays = StoreReplays{}

// ReplayAccount is the idempotency records' account id for notification ids.
const ReplayAccount = "internal:platform-notification"

// Claim takes id unless a live record has it: a finished record is Handled, an
// unfinished one Held (an unfinished one older than idempotency.LockTimeout counts as
// absent and is taken).
func (s StoreReplays) Claim(ctx context.Context, id string, now time.Time) (Claim, error) {
	rec, inserted, err := s.Store.BeginIdempotent(ctx, idempotency.Record{AccountID: ReplayAccount, Key: id,
		RequestHash: "notification", CreatedAt: now, ExpiresAt: now.Add(ReplayWindow)}, now)
	switch {
	case err != nil:
		return Held, fmt.Errorf("claim notification %s: %w", id, err)
	case inserted:
		return Claimed, nil
	case rec.Status != 0:
		return Handled, nil
	}
	return Held, nil
}

// Done marks id handled.
func (s StoreReplays) Done(ctx context.Context, id string) error {
	return s.Store.CompleteIdempotent(ctx, ReplayAccount, id, http.StatusOK, []byte("{}"))
}

// Release forgets id.
func (s StoreReplays) Release(ctx context.Context, id string) error {
	return s.Store.ReleaseIdempotent(ctx, ReplayAccount, id)
}
