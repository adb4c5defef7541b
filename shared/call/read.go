package call

import (
	"context"

	"github.com/bridgeline/bridgeline/shared/apierr"
)

// ReadStore is what Reader needs of a store: Store's reads.
type ReadStore interface {
	GetCall(ctx context.Context, id string) (Call, error)
	ListCalls(ctx context.Context, accountID string, q ListQuery) ([]Call, error)
}

// Reader serves an account's call records (GET /v1/calls and /v1/calls/{id}). The
// records are written by the flows that run calls (shared/session); reading them needs
// nothing of those flows.
type Reader struct {
	Store ReadStore
}

// Get returns the account's call record; another account's is resource_not_found.
func (r Reader) Get(ctx context.Context, accountID, id string) (Call, error) {
	c, err := r.Store.GetCall(ctx, id)
	return apierr.Owned(c, c.AccountID, err, accountID, apierr.NotFound("call", id))
}

// List returns up to q.Limit+1 of the account's calls, newest first.
func (r Reader) List(ctx context.Context, accountID string, q ListQuery) ([]Call, error) {
	return r.Store.ListCalls(ctx, accountID, q)
}
