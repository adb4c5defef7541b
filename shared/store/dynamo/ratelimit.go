package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// RateLimiter is a request limit per bucket (an account) that every Lambda instance
// shares: a counter item per bucket and time window in the rate_limits table. A window is
// Burst/Rate seconds long (at least one) and admits Burst requests, so the long-run rate
// is Rate and no more than Burst pass at once, as with the local stack's token bucket.
// Each request costs one conditional UpdateItem; a refused one changes nothing.
//
// A fixed window lets up to 2*Burst through across a window boundary; that is the price
// of one atomic write per request, with no read and no retry under contention.
type RateLimiter struct {
	Store *Store
	Rate  float64 // requests a second; <= 0 turns limiting off
	Burst float64 // at least 1
}

// Take counts one request of bucket at now, or refuses it with the time left in the
// window.
func (l *RateLimiter) Take(ctx context.Context, bucket string, now time.Time) (bool, time.Duration, error) {
	if l == nil || l.Rate <= 0 {
		return true, 0, nil
	}
	name, err := l.Store.table(RateLimits)
	if err != nil {
		return false, 0, err
	}
	limit := max(1, int64(l.Burst))
	window := max(time.Second, time.Duration(float64(limit)/l.Rate*float64(time.Second)))
	start := now.Truncate(window)
	end := start.Add(window)
	_, err = l.Store.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 name,
		Key:                       item{"bucket": str(bucket + "#" + strconv.FormatInt(start.UnixMilli(), 10))},
		UpdateExpression:          aws.String("ADD n :one SET #ttl = :ttl"),
		ConditionExpression:       aws.String("attribute_not_exists(n) OR n < :limit"),
		ExpressionAttributeNames:  map[string]string{"#ttl": "ttl"},
		ExpressionAttributeValues: item{":one": num(1), ":limit": num(limit), ":ttl": num(end.Add(time.Minute).Unix())},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return false, end.Sub(now), nil
	}
	if err != nil {
		return false, 0, fmt.Errorf("rate limit %s: %w", bucket, err)
	}
	return true, 0, nil
}
