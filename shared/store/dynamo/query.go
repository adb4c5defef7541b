package dynamo

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/shared/listing"
)

// attrEq is an index's partition key condition.
type attrEq struct {
	name, value string
}

// pageNewestFirst reads up to q.Limit+1 items of one index partition whose sort key `id`
// is below q.StartingAfter, highest (newest) id first: the listing contract.
func (s *Store) pageNewestFirst(ctx context.Context, t Table, index string, part attrEq, q listing.Query) ([]item, error) {
	name, err := s.table(t)
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = listing.DefaultLimit
	}
	want := limit + 1
	in := &dynamodb.QueryInput{
		TableName:                 name,
		IndexName:                 aws.String(index),
		KeyConditionExpression:    aws.String("#p = :p"),
		ExpressionAttributeNames:  map[string]string{"#p": part.name},
		ExpressionAttributeValues: item{":p": str(part.value)},
		ScanIndexForward:          aws.Bool(false),
	}
	if q.StartingAfter != "" {
		in.KeyConditionExpression = aws.String("#p = :p AND id < :after")
		in.ExpressionAttributeValues[":after"] = str(q.StartingAfter)
	}
	var out []item
	// A page can stop short of Limit (1 MB per query response); keep reading until
	// there are enough items or none are left.
	for len(out) < want {
		in.Limit = aws.Int32(int32(want - len(out)))
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", t, err)
		}
		out = append(out, page.Items...)
		if page.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	return out, nil
}

// putItem turns a transaction's Put into a PutItem request with the same condition.
func putItem(p *types.Put) *dynamodb.PutItemInput {
	return &dynamodb.PutItemInput{
		TableName:                 p.TableName,
		Item:                      p.Item,
		ConditionExpression:       p.ConditionExpression,
		ExpressionAttributeNames:  p.ExpressionAttributeNames,
		ExpressionAttributeValues: p.ExpressionAttributeValues,
	}
}
