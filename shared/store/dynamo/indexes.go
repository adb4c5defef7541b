package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/session"
)

// addMissingIndexes creates the indexes of d that an existing table lacks (a table made
// by an earlier version: DynamoDB Local with a data file), one at a time as DynamoDB
// requires, waiting for each to become active.
func (s *Store) addMissingIndexes(ctx context.Context, d Definition, name string) error {
	desc, err := s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	if err != nil {
		return fmt.Errorf("describe table %s: %w", name, err)
	}
	have := map[string]bool{}
	for _, ix := range desc.Table.GlobalSecondaryIndexes {
		have[aws.ToString(ix.IndexName)] = true
	}
	want := d.CreateTableInput(name)
	for _, ix := range want.GlobalSecondaryIndexes {
		if have[aws.ToString(ix.IndexName)] {
			continue
		}
		_, err := s.db.UpdateTable(ctx, &dynamodb.UpdateTableInput{
			TableName:            aws.String(name),
			AttributeDefinitions: want.AttributeDefinitions,
			GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
				IndexName: ix.IndexName, KeySchema: ix.KeySchema, Projection: ix.Projection,
			}}},
		})
		if err != nil {
			return fmt.Errorf("add index %s to %s: %w", aws.ToString(ix.IndexName), name, err)
		}
		if err := s.waitIndexActive(ctx, name, aws.ToString(ix.IndexName)); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) waitIndexActive(ctx context.Context, table, index string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	for {
		desc, err := s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			return fmt.Errorf("wait for index %s of %s: %w", index, table, err)
		}
		for _, ix := range desc.Table.GlobalSecondaryIndexes {
			if aws.ToString(ix.IndexName) == index && ix.IndexStatus == types.IndexStatusActive {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for index %s of %s: %w", index, table, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// BackfillListKeys gives the calls and sessions written before the list filter indexes
// and the sweep index existed the keys of those indexes (a one-off after deploying them:
// `bridgeline admin indexes backfill`). It scans both tables, which is what a migration may do and a list
// may not, and sets the keys with a condition on the revision read, so a record written
// meanwhile (which has its keys already) is left alone. It returns how many it updated.
func (s *Store) BackfillListKeys(ctx context.Context) (int, error) {
	n := 0
	for _, t := range []Table{Calls, Sessions} {
		name, err := s.table(t)
		if err != nil {
			return n, err
		}
		p := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{TableName: name})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return n, fmt.Errorf("backfill %s: %w", t, err)
			}
			for _, it := range page.Items {
				keys := item{}
				switch t {
				case Calls:
					c, err := fromDoc[call.Call](it)
					if err != nil {
						return n, err
					}
					addCallFilterKeys(keys, c)
				case Sessions:
					ses, err := fromDoc[session.Session](it)
					if err != nil {
						return n, err
					}
					addSessionFilterKeys(keys, ses)
					addSweepKeys(keys, ses)
				}
				done, err := s.setMissingKeys(ctx, name, it, keys)
				if err != nil {
					return n, fmt.Errorf("backfill %s %s: %w", t, getS(it, "id"), err)
				}
				if done {
					n++
				}
			}
		}
	}
	return n, nil
}

// setMissingKeys sets the keys it lacks on an item, if its revision is still the one read.
func (s *Store) setMissingKeys(ctx context.Context, table *string, it, keys item) (bool, error) {
	expr, names, values := "SET", map[string]string{}, item{":rev": it["revision"]}
	i := 0
	for k, v := range keys {
		if _, ok := it[k]; ok {
			continue
		}
		if i > 0 {
			expr += ","
		}
		names[fmt.Sprintf("#k%d", i)], values[fmt.Sprintf(":v%d", i)] = k, v
		expr += fmt.Sprintf(" #k%d = :v%d", i, i)
		i++
	}
	if i == 0 {
		return false, nil
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: table, Key: item{"id": it["id"]},
		UpdateExpression: aws.String(expr), ExpressionAttributeNames: names, ExpressionAttributeValues: values,
		ConditionExpression: aws.String("revision = :rev"),
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return false, nil // written meanwhile, with its keys
	}
	return err == nil, err
}
