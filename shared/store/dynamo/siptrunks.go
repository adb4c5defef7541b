package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/siptrunk"
)

var (
	_ siptrunk.Store     = (*Store)(nil)
	_ siptrunk.LineStore = (*Store)(nil)
)

// allTrunks is the one partition of the sip_trunks "all" index: every trunk, by id, for
// the reconcile (a deployment has few trunks next to its calls).
const allTrunks = "trunk"

func trunkItem(t siptrunk.Trunk) item {
	return docItem(t, item{"id": str(t.ID), "account_id": str(t.AccountID), "revision": num(t.Revision), "all": str(allTrunks)})
}

// CreateTrunk inserts a trunk.
func (s *Store) CreateTrunk(ctx context.Context, t siptrunk.Trunk) error {
	name, err := s.table(SIPTrunks)
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: name, Item: trunkItem(t),
		ConditionExpression: aws.String("attribute_not_exists(id)")})
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("create trunk %s: %w", t.ID, err)
	}
	return err
}

// GetTrunk reads a trunk.
func (s *Store) GetTrunk(ctx context.Context, id string) (siptrunk.Trunk, error) {
	return getDoc[siptrunk.Trunk](ctx, s, SIPTrunks, item{"id": str(id)})
}

// ListTrunks lists an account's trunks newest first.
func (s *Store) ListTrunks(ctx context.Context, accountID string, q listing.Query) ([]siptrunk.Trunk, error) {
	items, err := s.pageNewestFirst(ctx, SIPTrunks, "by_account", attrEq{"account_id", accountID}, q)
	if err != nil {
		return nil, err
	}
	return trunks(items)
}

// AllTrunks pages through every trunk by id (the "all" index).
func (s *Store) AllTrunks(ctx context.Context, afterID string, limit int) ([]siptrunk.Trunk, error) {
	name, err := s.table(SIPTrunks)
	if err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{
		TableName: name, IndexName: aws.String("all"),
		KeyConditionExpression:    aws.String("#a = :a"),
		ExpressionAttributeNames:  map[string]string{"#a": "all"},
		ExpressionAttributeValues: item{":a": str(allTrunks)},
		ScanIndexForward:          aws.Bool(true), Limit: aws.Int32(int32(limit)),
	}
	if afterID != "" {
		in.KeyConditionExpression = aws.String("#a = :a AND id > :after")
		in.ExpressionAttributeValues[":after"] = str(afterID)
	}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("list every trunk: %w", err)
	}
	return trunks(out.Items)
}

func trunks(items []item) ([]siptrunk.Trunk, error) {
	out := make([]siptrunk.Trunk, len(items))
	var err error
	for i, it := range items {
		if out[i], err = fromDoc[siptrunk.Trunk](it); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// putTrunk is the conditional put of t at its next revision.
func putTrunk(table *string, t siptrunk.Trunk) *types.Put {
	prev := t.Revision
	t.Revision++
	return &types.Put{TableName: table, Item: trunkItem(t), ConditionExpression: aws.String("revision = :rev"),
		ExpressionAttributeValues: item{":rev": num(prev)}}
}

// UpdateTrunk writes t if its revision is unchanged.
func (s *Store) UpdateTrunk(ctx context.Context, t siptrunk.Trunk) error {
	name, err := s.table(SIPTrunks)
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, putItem(putTrunk(name, t)))
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("update trunk %s: %w", t.ID, err)
	}
	return err
}

// DeleteTrunk removes t if its revision is unchanged.
func (s *Store) DeleteTrunk(ctx context.Context, t siptrunk.Trunk) error {
	name, err := s.table(SIPTrunks)
	if err != nil {
		return err
	}
	_, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: name, Key: item{"id": str(t.ID)},
		ConditionExpression: aws.String("revision = :rev"), ExpressionAttributeValues: item{":rev": num(t.Revision)}})
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("delete trunk %s: %w", t.ID, err)
	}
	return err
}

// CreateLineOnTrunk inserts l and claims its handle, counts its assignment, and saves t,
// in one transaction.
func (s *Store) CreateLineOnTrunk(ctx context.Context, l line.Line, change *line.AssistantChange, t siptrunk.Trunk) error {
	lines, err := s.table(Lines)
	if err != nil {
		return err
	}
	handles, err := s.table(LineHandles)
	if err != nil {
		return err
	}
	trunks, err := s.table(SIPTrunks)
	if err != nil {
		return err
	}
	txn := []types.TransactWriteItem{
		{Put: &types.Put{TableName: lines, Item: lineItem(l), ConditionExpression: aws.String("attribute_not_exists(id)")}},
		{Put: &types.Put{TableName: handles, Item: item{"platform_handle": handleKey(l.Platform, l.Handle), "line_id": str(l.ID)},
			ConditionExpression: aws.String("attribute_not_exists(platform_handle)")}},
		{Put: putTrunk(trunks, t)},
	}
	if change != nil && change.To != "" {
		assistants, err := s.table(Assistants)
		if err != nil {
			return err
		}
		to, err := s.assignedDelta(ctx, assistants, change.To, &change.ToRevision, +1, false)
		if err != nil {
			return err
		}
		txn = append(txn, types.TransactWriteItem{Put: to})
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: txn})
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("create line %s: %w", l.ID, err)
	}
	return err
}

// DeleteLineFromTrunk removes l and its handle, takes it off its assistant's count, and
// saves t (when it has one), in one transaction.
func (s *Store) DeleteLineFromTrunk(ctx context.Context, l line.Line, t siptrunk.Trunk) error {
	lines, err := s.table(Lines)
	if err != nil {
		return err
	}
	handles, err := s.table(LineHandles)
	if err != nil {
		return err
	}
	txn := []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: lines, Key: item{"id": str(l.ID)}, ConditionExpression: aws.String("revision = :rev"),
			ExpressionAttributeValues: item{":rev": num(l.Revision)}}},
		{Delete: &types.Delete{TableName: handles, Key: item{"platform_handle": handleKey(l.Platform, l.Handle)}}},
	}
	if t.ID != "" {
		trunks, err := s.table(SIPTrunks)
		if err != nil {
			return err
		}
		txn = append(txn, types.TransactWriteItem{Put: putTrunk(trunks, t)})
	}
	if l.AssistantID != "" {
		assistants, err := s.table(Assistants)
		if err != nil {
			return err
		}
		from, err := s.assignedDelta(ctx, assistants, l.AssistantID, nil, -1, false)
		if err != nil {
			return err
		}
		txn = append(txn, types.TransactWriteItem{Put: from})
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: txn})
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("delete line %s: %w", l.ID, err)
	}
	return err
}
