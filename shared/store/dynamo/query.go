package dynamo

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/shared/listing"
)

// attrEq is an index's partition key condition.
type attrEq struct {
	name, value string
}

// pageNewestFirst reads up to q.Limit+1 items of one index partition within the query's
// id range (its cursor and created bounds on the sort key `id`), newest first: the
// listing contract. For ending_before they are the items nearest above the cursor.
func (s *Store) pageNewestFirst(ctx context.Context, t Table, index string, part attrEq, q listing.Query) ([]item, error) {
	return s.pageOfPartitions(ctx, t, index, part.name, []string{part.value}, q)
}

// pageOfPartitions is pageNewestFirst over several partitions of one index (a filter
// whose index key combines values the query leaves open: calls of any status and one
// direction read the partitions of each status). Each partition is read as a page of
// its own, at most Limit+1 items, and the pages are merged by id: a bounded number of
// key-range reads, never a scan or an unbounded filter.
func (s *Store) pageOfPartitions(ctx context.Context, t Table, index, partName string, values []string, q listing.Query) ([]item, error) {
	lo, hi := q.Range()
	if listing.Empty(lo, hi) {
		return nil, nil
	}
	var all []item
	for _, v := range values {
		got, err := s.queryRange(ctx, t, index, attrEq{partName, v}, lo, hi, q)
		if err != nil {
			return nil, err
		}
		all = append(all, got...)
	}
	if len(values) > 1 {
		slices.SortFunc(all, func(a, b item) int { return strings.Compare(getS(b, "id"), getS(a, "id")) })
	}
	// all is newest first; a page is the Limit+1 nearest its cursor.
	if want := q.Want(); len(all) > want {
		if q.Ascending() {
			all = all[len(all)-want:]
		} else {
			all = all[:want]
		}
	}
	return all, nil
}

// queryRange reads up to Limit+1 items of one partition with ids in [lo, hi], nearest
// the cursor first, and returns them newest first.
func (s *Store) queryRange(ctx context.Context, t Table, index string, part attrEq, lo, hi listing.Bound, q listing.Query) ([]item, error) {
	name, err := s.table(t)
	if err != nil {
		return nil, err
	}
	want := q.Want()
	in := &dynamodb.QueryInput{
		TableName:                 name,
		IndexName:                 aws.String(index),
		KeyConditionExpression:    aws.String("#p = :p"),
		ExpressionAttributeNames:  map[string]string{"#p": part.name},
		ExpressionAttributeValues: item{":p": str(part.value)},
		ScanIndexForward:          aws.Bool(q.Ascending()),
	}
	// A key condition has one comparison on the sort key: BETWEEN when both ends are
	// bounded (inclusive; an exclusive end, a cursor, is dropped below: one item at
	// most), else the one comparison.
	switch {
	case lo.ID != "" && hi.ID != "":
		*in.KeyConditionExpression += " AND id BETWEEN :lo AND :hi"
		in.ExpressionAttributeValues[":lo"], in.ExpressionAttributeValues[":hi"] = str(lo.ID), str(hi.ID)
	case lo.ID != "":
		*in.KeyConditionExpression += " AND id " + cmp(">", lo.Inclusive) + " :lo"
		in.ExpressionAttributeValues[":lo"] = str(lo.ID)
	case hi.ID != "":
		*in.KeyConditionExpression += " AND id " + cmp("<", hi.Inclusive) + " :hi"
		in.ExpressionAttributeValues[":hi"] = str(hi.ID)
	}
	var out []item
	// A page can stop short of Limit (1 MB per query response); keep reading until
	// there are enough items or none are left.
	for len(out) < want {
		// One more than missing: a BETWEEN may read the cursor itself, which is dropped.
		in.Limit = aws.Int32(int32(want - len(out) + 1))
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", t, err)
		}
		for _, it := range page.Items {
			if len(out) < want && listing.In(getS(it, "id"), lo, hi) {
				out = append(out, it)
			}
		}
		if page.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	if q.Ascending() {
		slices.Reverse(out)
	}
	return out, nil
}

func cmp(op string, inclusive bool) string {
	if inclusive {
		return op + "="
	}
	return op
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
