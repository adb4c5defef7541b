package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/shared/idempotency"
)

var _ idempotency.Store = (*Store)(nil)

func idemKey(accountID, key string) item {
	return item{"account_id": str(accountID), "key": str(key)}
}

// BeginIdempotent claims a key with one conditional put: it succeeds when no record
// holds the key, or the one there is expired, or unfinished and older than LockTimeout.
// DynamoDB's TTL deletes expired records only eventually, so the condition checks the
// expiry itself. When the put loses, the record that holds the key is returned.
func (s *Store) BeginIdempotent(ctx context.Context, rec idempotency.Record, now time.Time) (idempotency.Record, bool, error) {
	name, err := s.table(Idempotency)
	if err != nil {
		return idempotency.Record{}, false, err
	}
	it := idemKey(rec.AccountID, rec.Key)
	it["request_hash"] = str(rec.RequestHash)
	it["status"] = num(0)
	it["created_at"] = timeAttr(rec.CreatedAt)
	it["created_ms"] = num(rec.CreatedAt.UnixMilli())
	it["expires_at"] = timeAttr(rec.ExpiresAt)
	it["expires_ms"] = num(rec.ExpiresAt.UnixMilli())
	it["ttl"] = num(rec.ExpiresAt.Unix())
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: name,
		Item:      it,
		ConditionExpression: aws.String("attribute_not_exists(account_id) OR expires_ms <= :now" +
			" OR (#st = :zero AND created_ms <= :stale)"),
		ExpressionAttributeNames: map[string]string{"#st": "status"},
		ExpressionAttributeValues: item{
			":now":   num(now.UnixMilli()),
			":zero":  num(0),
			":stale": num(now.Add(-idempotency.LockTimeout).UnixMilli()),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err == nil {
		rec.Status, rec.Body = 0, nil
		return rec, true, nil
	}
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return idempotency.Record{}, false, fmt.Errorf("begin idempotent %s: %w", rec.Key, err)
	}
	held := ccf.Item
	if held == nil {
		if held, err = s.getItem(ctx, Idempotency, idemKey(rec.AccountID, rec.Key)); err != nil {
			return idempotency.Record{}, false, fmt.Errorf("read idempotency record %s: %w", rec.Key, err)
		}
	}
	return idemRecord(held), false, nil
}

func idemRecord(it item) idempotency.Record {
	r := idempotency.Record{
		AccountID:   getS(it, "account_id"),
		Key:         getS(it, "key"),
		RequestHash: getS(it, "request_hash"),
		Status:      int(getN(it, "status")),
	}
	r.CreatedAt, _ = time.Parse(timeLayout, getS(it, "created_at"))
	r.ExpiresAt, _ = time.Parse(timeLayout, getS(it, "expires_at"))
	if b, ok := it["body"].(*types.AttributeValueMemberB); ok {
		r.Body = b.Value
	}
	return r
}

// CompleteIdempotent stores the response of a claimed key. A record that is gone (it
// was released or replaced) is left alone.
func (s *Store) CompleteIdempotent(ctx context.Context, accountID, key string, status int, body []byte) error {
	name, err := s.table(Idempotency)
	if err != nil {
		return err
	}
	expr := "SET #st = :st REMOVE body"
	values := item{":st": num(status)}
	if len(body) > 0 {
		expr = "SET #st = :st, body = :b"
		values[":b"] = &types.AttributeValueMemberB{Value: body}
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 name,
		Key:                       idemKey(accountID, key),
		UpdateExpression:          aws.String(expr),
		ConditionExpression:       aws.String("attribute_exists(account_id)"),
		ExpressionAttributeNames:  map[string]string{"#st": "status"},
		ExpressionAttributeValues: values,
	})
	var ccf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &ccf) {
		return fmt.Errorf("complete idempotent %s: %w", key, err)
	}
	return nil
}

// ReleaseIdempotent forgets a claimed key.
func (s *Store) ReleaseIdempotent(ctx context.Context, accountID, key string) error {
	name, err := s.table(Idempotency)
	if err != nil {
		return err
	}
	if _, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: name, Key: idemKey(accountID, key)}); err != nil {
		return fmt.Errorf("release idempotent %s: %w", key, err)
	}
	return nil
}
