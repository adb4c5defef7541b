package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/usage"
)

var _ usage.Store = (*Store)(nil)

// An account's usage per UTC day (shared/usage) lives in the calls table, one item a day
// keyed id "usage#<account>#<date>": every process that writes a call record can add to
// it in the same transaction, and GET /v1/usage reads the range's items by key. The
// items have none of the calls' index attributes (account_id among them), so no list of
// calls sees them, and no call id (call_...) can name one.
func usageKey(accountID, date string) item {
	return item{"id": str("usage#" + accountID + "#" + date)}
}

// usageWrite adds due to its day's item (created at the first add) with ADD, in the
// call's transaction: two calls ending at once collide, one transaction is cancelled,
// and its writer reads the call again and retries.
func (s *Store) usageWrite(due usage.Due) (types.TransactWriteItem, error) {
	calls, err := s.table(Calls)
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	fields := due.Counts.Fields()
	adds := make([]string, len(fields))
	names := map[string]string{"#acct": "usage_account", "#date": "usage_date"}
	values := item{":acct": str(due.AccountID), ":date": str(due.Date)}
	for i, f := range fields {
		adds[i] = fmt.Sprintf("#f%d :f%d", i, i)
		names[fmt.Sprintf("#f%d", i)] = f.Name
		values[fmt.Sprintf(":f%d", i)] = num(*f.Value)
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                 calls,
		Key:                       usageKey(due.AccountID, due.Date),
		UpdateExpression:          aws.String("SET #acct = :acct, #date = :date ADD " + strings.Join(adds, ", ")),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}}, nil
}

// UsageDays reads the account's items of the given dates by key, strongly consistent:
// GetItem, eight at a time (at most usage.MaxDays items; the functions' read grant is
// GetItem and Query, and no query serves a list of keys).
func (s *Store) UsageDays(ctx context.Context, accountID string, dates []string) ([]usage.Day, error) {
	keys := make([]item, len(dates))
	for i, date := range dates {
		keys[i] = usageKey(accountID, date)
	}
	its, err := s.getItems(ctx, Calls, keys)
	if err != nil {
		return nil, fmt.Errorf("usage of %s: %w", accountID, err)
	}
	var out []usage.Day
	for i, it := range its {
		if it == nil {
			continue
		}
		d := usage.Day{Date: dates[i]}
		for _, f := range d.Counts.Fields() {
			*f.Value = getN(it, f.Name)
		}
		out = append(out, d)
	}
	return out, nil
}

// getItems reads the items of keys from t, strongly consistent: GetItem, eight at a
// time (the functions' read grant is GetItem and Query, and no query serves a list of
// keys). A key with no item reads nil.
func (s *Store) getItems(ctx context.Context, t Table, keys []item) ([]item, error) {
	found := make([]item, len(keys))
	errs := make([]error, len(keys))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, key := range keys {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			it, err := s.getItem(ctx, t, key)
			switch {
			case errors.Is(err, apierr.ErrNotFound):
			case err != nil:
				errs[i] = fmt.Errorf("%s: %w", getS(key, "id"), err)
			default:
				found[i] = it
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return found, nil
}
