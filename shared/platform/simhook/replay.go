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

// Replays remembers the notifications a receiver accepted, so that a captured one
// replayed within its signature's tolerance is refused. Claim takes an id (false: it was
// already taken and not released); Release gives back an id whose handling failed, so the
// sender's redelivery is handled; Done marks it handled for good.
type Replays interface {
	Claim(ctx context.Context, id string, now time.Time) (bool, error)
	Done(ctx context.Context, id string) error
	Release(ctx context.Context, id string) error
}

// MemoryReplays is Replays in one process's memory (the local stack), bounded in time
// (an id is forgotten ReplayWindow after it was claimed, when its signature could no
// longer pass anyway) and in size (at most Max ids; past it the oldest is forgotten
// early, which only senders holding the secret can cause). Lambdas, whose instances do
// not share memory, keep ids in the idempotency table instead.
type MemoryReplays struct {
	// Max bounds the ids kept (default 100,000: about 10 MB).
	Max int

	mu    sync.Mutex
	seen  map[string]time.Time // id -> when it may be forgotten
	order []string             // ids in claim order, for expiry and the size bound
}

var _ Replays = (*MemoryReplays)(nil)

// Claim takes id unless it is held.
func (m *MemoryReplays) Claim(_ context.Context, id string, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[string]time.Time{}
	}
	m.expire(now)
	if _, ok := m.seen[id]; ok {
		return false, nil
	}
	max := m.Max
	if max <= 0 {
		max = 100_000
	}
	for len(m.seen) >= max && len(m.order) > 0 {
		delete(m.seen, m.order[0])
		m.order = m.order[1:]
	}
	m.seen[id] = now.Add(ReplayWindow)
	m.order = append(m.order, id)
	return true, nil
}

// expire forgets the ids past their window (they sit at the front of order, which is in
// claim order), and ids released since.
func (m *MemoryReplays) expire(now time.Time) {
	n := 0
	for _, id := range m.order {
		until, ok := m.seen[id]
		if ok && now.Before(until) {
			break
		}
		delete(m.seen, id)
		n++
	}
	m.order = m.order[n:]
}

// Done keeps id for the rest of its window.
func (m *MemoryReplays) Done(context.Context, string) error { return nil }

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

// Claim takes id unless a live record holds it. An unfinished claim older than
// idempotency.LockTimeout (its handler crashed) counts as released.
func (s StoreReplays) Claim(ctx context.Context, id string, now time.Time) (bool, error) {
	_, inserted, err := s.Store.BeginIdempotent(ctx, idempotency.Record{AccountID: ReplayAccount, Key: id,
		RequestHash: "notification", CreatedAt: now, ExpiresAt: now.Add(ReplayWindow)}, now)
	if err != nil {
		return false, fmt.Errorf("claim notification %s: %w", id, err)
	}
	return inserted, nil
}

// Done marks id handled.
func (s StoreReplays) Done(ctx context.Context, id string) error {
	return s.Store.CompleteIdempotent(ctx, ReplayAccount, id, http.StatusOK, []byte("{}"))
}

// Release forgets id.
func (s StoreReplays) Release(ctx context.Context, id string) error {
	return s.Store.ReleaseIdempotent(ctx, ReplayAccount, id)
}
