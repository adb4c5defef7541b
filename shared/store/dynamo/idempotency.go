package dynamo

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/shared/apierr"
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
	r := idemRecord(held)
	if r.Body, err = s.idemBody(ctx, held); err != nil {
		return idempotency.Record{}, false, fmt.Errorf("read idempotency record %s: %w", rec.Key, err)
	}
	return r, false, nil
}

// DynamoDB refuses an item over 400 KB, and an idempotent route's response can be larger:
// an assistant object at the field limits is about 1.5 MB (the newest 10 versions of up to
// 22,000 characters each). So a stored body is gzipped into `body_gz`, and one that is
// still over maxIdemInline after that is split into parts of maxIdemInline, each its own
// item of the same table under the key "<key>\n<n>" (a customer key is printable ASCII,
// so it never collides with a part). The parts are written before the record names them,
// so a replay reads either no body yet (status 0, 409 in progress) or all of it, and the
// guarantee holds at any size.
const maxIdemInline = 300 << 10

func idemPartKey(accountID, key string, n int) item {
	return idemKey(accountID, fmt.Sprintf("%s\n%d", key, n))
}

// idemBody reads a record's body: inline, gzipped, or gzipped in parts.
func (s *Store) idemBody(ctx context.Context, it item) ([]byte, error) {
	if b, ok := it["body"].(*types.AttributeValueMemberB); ok {
		return b.Value, nil // written before bodies were compressed
	}
	var gz []byte
	if b, ok := it["body_gz"].(*types.AttributeValueMemberB); ok {
		gz = b.Value
	}
	for n := range int(getN(it, "body_parts")) {
		part, err := s.getItem(ctx, Idempotency, idemPartKey(getS(it, "account_id"), getS(it, "key"), n))
		if err != nil {
			return nil, fmt.Errorf("body part %d: %w", n, err)
		}
		b, _ := part["body_gz"].(*types.AttributeValueMemberB)
		if b == nil || getS(part, "request_hash") != getS(it, "request_hash") {
			return nil, fmt.Errorf("body part %d is missing or of another request", n)
		}
		gz = append(gz, b.Value...)
	}
	if gz == nil {
		return nil, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("gunzip body: %w", err)
	}
	return io.ReadAll(zr)
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
	return r
}

// CompleteIdempotent stores the response of a claimed key, gzipped, in parts when it is
// large (see maxIdemInline). A record that is gone (it was released or replaced) is left
// alone.
func (s *Store) CompleteIdempotent(ctx context.Context, accountID, key string, status int, body []byte) error {
	name, err := s.table(Idempotency)
	if err != nil {
		return err
	}
	expr := "SET #st = :st REMOVE body, body_gz, body_parts"
	values := item{":st": num(status)}
	if len(body) > 0 {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(body)
		if err := zw.Close(); err != nil {
			return fmt.Errorf("complete idempotent %s: gzip: %w", key, err)
		}
		gz := buf.Bytes()
		if len(gz) <= maxIdemInline {
			expr = "SET #st = :st, body_gz = :b REMOVE body, body_parts"
			values[":b"] = &types.AttributeValueMemberB{Value: gz}
		} else {
			held, err := s.getItem(ctx, Idempotency, idemKey(accountID, key))
			if errors.Is(err, apierr.ErrNotFound) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("complete idempotent %s: %w", key, err)
			}
			parts := 0
			for off := 0; off < len(gz); off += maxIdemInline {
				part := idemPartKey(accountID, key, parts)
				part["request_hash"] = held["request_hash"]
				part["ttl"] = held["ttl"]
				part["body_gz"] = &types.AttributeValueMemberB{Value: gz[off:min(off+maxIdemInline, len(gz))]}
				if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: name, Item: part}); err != nil {
					return fmt.Errorf("complete idempotent %s: part %d: %w", key, parts, err)
				}
				parts++
			}
			expr = "SET #st = :st, body_parts = :p REMOVE body, body_gz"
			values[":p"] = num(parts)
		}
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
