package erasure

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/retry"
)

// RetentionStore is what Retain needs of a store beyond Store: the accounts whose
// retention is set, the mark of how far it got for each, and an account's calls by
// creation time.
type RetentionStore interface {
	AccountsWithRetention(ctx context.Context) ([]account.Account, error)
	SetRetainedThrough(ctx context.Context, accountID string, t time.Time) error
	ListCalls(ctx context.Context, accountID string, q call.ListQuery) ([]call.Call, error)
}

// MaxRetentionDays bounds an account's call retention (ten years).
const MaxRetentionDays = 3650

// retainPage is how many calls Retain reads at a time.
const retainPage = 100

// Retain deletes the data of every call of an account with a retention setting that was
// created more than its CallRetentionDays ago, as DeleteCall does, and returns how many
// calls it redacted. Each account's RetainedThrough marks how far it got, so a run reads
// only the calls created since the last run's cutoff: the mark moves to this run's
// cutoff, or to the oldest call it had to leave (still live, or its report awaited; the
// sweeper settles those), so that one is looked at again next time. An account whose
// run failed keeps its mark and is tried again whole.
func (s Service) Retain(ctx context.Context, st RetentionStore) (int, error) {
	accts, err := st.AccountsWithRetention(ctx)
	if err != nil {
		return 0, fmt.Errorf("retain: list accounts: %w", err)
	}
	total := 0
	var errs []error
	for _, a := range accts {
		n, err := s.retainAccount(ctx, st, a)
		total += n
		if err != nil {
			errs = append(errs, fmt.Errorf("retain %s: %w", a.ID, err))
		}
	}
	return total, errors.Join(errs...)
}

func (s Service) retainAccount(ctx context.Context, st RetentionStore, a account.Account) (int, error) {
	if a.CallRetentionDays == nil {
		return 0, nil
	}
	cutoff := s.now().Add(-time.Duration(*a.CallRetentionDays) * 24 * time.Hour)
	q := call.ListQuery{Query: listing.Query{Limit: retainPage, IDTo: ident.Floor("call", cutoff)}}
	if a.RetainedThrough != nil {
		if !a.RetainedThrough.Before(cutoff) {
			return 0, nil // a longer retention than last time: nothing new is due
		}
		q.IDFrom = ident.Floor("call", *a.RetainedThrough)
	}
	through := cutoff
	redacted := 0
	for {
		page, err := st.ListCalls(ctx, a.ID, q)
		if err != nil {
			return redacted, err
		}
		more := len(page) > retainPage
		if more {
			page = page[:retainPage]
		}
		for _, c := range page {
			if c.Redacted() {
				continue
			}
			did, err := s.retainCall(ctx, a.ID, c.ID)
			var ae *apierr.Error
			switch {
			case errors.As(err, &ae) && ae.Code == apierr.CodeCallInProgress:
				if created, ok := ident.Time("call", c.ID); ok && created.Before(through) {
					through = created // look at it again next run
				}
				s.log().Warn("retention left a call whose data is still coming", "account_id", a.ID, "call_id", c.ID)
			case err != nil:
				return redacted, err
			case did:
				redacted++
			}
		}
		if !more {
			break
		}
		q.StartingAfter = page[len(page)-1].ID
	}
	if err := st.SetRetainedThrough(ctx, a.ID, through); err != nil {
		return redacted, fmt.Errorf("mark: %w", err)
	}
	if redacted > 0 {
		s.log().Info("retention deleted calls' data", "account_id", a.ID, "calls", redacted, "retention_days", *a.CallRetentionDays)
	}
	return redacted, nil
}

// retainCall redacts one call, read again (a conditional write, retried on a conflict).
func (s Service) retainCall(ctx context.Context, accountID, id string) (bool, error) {
	did := false
	err := retry.OnConflict(func() error {
		c, err := s.Store.GetCall(ctx, id)
		if c, err = apierr.Owned(c, c.AccountID, err, accountID, apierr.NotFound("call", id)); err != nil {
			return err
		}
		if c.Redacted() {
			return nil
		}
		_, err = s.redact(ctx, c)
		did = err == nil
		return err
	})
	return did, err
}

// RunRetention runs Retain at once and then every interval until ctx ends; errors are
// logged, and the next run tries again.
func (s Service) RunRetention(ctx context.Context, st RetentionStore, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := s.Retain(ctx, st); err != nil && ctx.Err() == nil {
			s.log().Error("retention", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
