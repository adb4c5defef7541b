package dynamo

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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

// UsageDays reads the account's items of the given dates by key (BatchGetItem, strongly
// consistent), 100 keys a request.
func (s *Store) UsageDays(ctx context.Context, accountID string, dates []string) ([]usage.Day, error) {
	calls, err := s.table(Calls)
	if err != nil {
		return nil, err
	}
	var out []usage.Day
	for len(dates) > 0 {
		n := min(len(dates), 100)
		keys := make([]item, n)
		for i, d := range dates[:n] {
			keys[i] = usageKey(accountID, d)
		}
		dates = dates[n:]
		req := map[string]types.KeysAndAttributes{*calls: {Keys: keys, ConsistentRead: aws.Bool(true)}}
		for attempt := 0; len(req) > 0; attempt++ {
			if attempt > 0 {
				if err := contentionPause(ctx, attempt); err != nil {
					return nil, err
				}
			}
			res, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return nil, fmt.Errorf("usage days: %w", err)
			}
			for _, it := range res.Responses[*calls] {
				if getS(it, "usage_account") != accountID {
					continue
				}
				d := usage.Day{Date: getS(it, "usage_date")}
				for _, f := range d.Counts.Fields() {
					*f.Value = getN(it, f.Name)
				}
				out = append(out, d)
			}
			req = res.UnprocessedKeys
		}
	}
	return out, nil
}
