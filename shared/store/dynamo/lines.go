package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/listing"
)

var _ line.Store = (*Store)(nil)

func lineItem(l line.Line) item {
	return docItem(l, item{"id": str(l.ID), "account_id": str(l.AccountID), "revision": num(l.Revision)})
}

// handleKey is a line_handles key: platform names hold no '#'.
func handleKey(platform, handle string) types.AttributeValue { return str(platform + "#" + handle) }

// CreateLine inserts a line and claims its (platform, handle) in one transaction; a
// taken id or handle is ErrConflict.
func (s *Store) CreateLine(ctx context.Context, l line.Line) error {
	lines, err := s.table(Lines)
	if err != nil {
		return err
	}
	handles, err := s.table(LineHandles)
	if err != nil {
		return err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{
			TableName: lines, Item: lineItem(l),
			ConditionExpression: aws.String("attribute_not_exists(id)"),
		}},
		{Put: &types.Put{
			TableName:           handles,
			Item:                item{"platform_handle": handleKey(l.Platform, l.Handle), "line_id": str(l.ID)},
			ConditionExpression: aws.String("attribute_not_exists(platform_handle)"),
		}},
	}})
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("create line %s: %w", l.ID, err)
	}
	return err
}

// GetLine reads a line.
func (s *Store) GetLine(ctx context.Context, id string) (line.Line, error) {
	return getDoc[line.Line](ctx, s, Lines, item{"id": str(id)})
}

// LineByHandle finds the line calls to a handle arrive on (two consistent reads).
func (s *Store) LineByHandle(ctx context.Context, platform, handle string) (line.Line, error) {
	h, err := s.getItem(ctx, LineHandles, item{"platform_handle": handleKey(platform, handle)})
	if err != nil {
		return line.Line{}, err
	}
	return s.GetLine(ctx, getS(h, "line_id"))
}

// ListLines lists an account's lines newest first.
func (s *Store) ListLines(ctx context.Context, accountID string, q listing.Query) ([]line.Line, error) {
	items, err := s.pageNewestFirst(ctx, Lines, "by_account", attrEq{"account_id", accountID}, q)
	if err != nil {
		return nil, err
	}
	out := make([]line.Line, len(items))
	for i, it := range items {
		if out[i], err = fromDoc[line.Line](it); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// FirstLine reads the account's oldest line: one query of by_account, oldest first.
func (s *Store) FirstLine(ctx context.Context, accountID string) (line.Line, error) {
	name, err := s.table(Lines)
	if err != nil {
		return line.Line{}, err
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                 name,
		IndexName:                 aws.String("by_account"),
		KeyConditionExpression:    aws.String("account_id = :a"),
		ExpressionAttributeValues: item{":a": str(accountID)},
		ScanIndexForward:          aws.Bool(true),
		Limit:                     aws.Int32(1),
	})
	if err != nil {
		return line.Line{}, fmt.Errorf("first line: %w", err)
	}
	if len(out.Items) == 0 {
		return line.Line{}, apierr.ErrNotFound
	}
	return fromDoc[line.Line](out.Items[0])
}

// UpdateLine writes l if its revision is unchanged and, with a change, moves the
// assignment count from change.From to change.To, all in one transaction. To must still
// be at change.ToRevision, active and published; From must not have changed since it was
// read here. Any of those failing is ErrConflict, and the service reads again.
func (s *Store) UpdateLine(ctx context.Context, l line.Line, change *line.AssistantChange) error {
	lines, err := s.table(Lines)
	if err != nil {
		return err
	}
	prev := l.Revision
	l.Revision++
	txn := []types.TransactWriteItem{{Put: &types.Put{
		TableName: lines, Item: lineItem(l),
		ConditionExpression:       aws.String("revision = :rev"),
		ExpressionAttributeValues: item{":rev": num(prev)},
	}}}
	if change != nil {
		assistants, err := s.table(Assistants)
		if err != nil {
			return err
		}
		if change.To != "" {
			to, err := s.assignedDelta(ctx, assistants, change.To, &change.ToRevision, +1, change.From == change.To)
			if err != nil {
				return err
			}
			txn = append(txn, types.TransactWriteItem{Put: to})
		}
		if change.From != "" && change.From != change.To {
			from, err := s.assignedDelta(ctx, assistants, change.From, nil, -1, false)
			if err != nil {
				return err
			}
			txn = append(txn, types.TransactWriteItem{Put: from})
		}
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: txn})
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("update line %s: %w", l.ID, err)
	}
	return err
}

// assignedDelta reads an assistant and returns the conditional put that adds delta to
// its AssignedLines (none when same is set: a line re-assigned to the assistant it has).
// A count going up needs the assistant active and published, and at *rev when given.
func (s *Store) assignedDelta(ctx context.Context, table *string, id string, rev *int64, delta int, same bool) (*types.Put, error) {
	a, err := getDoc[assistant.Assistant](ctx, s, Assistants, item{"id": str(id)})
	if errors.Is(err, apierr.ErrNotFound) {
		return nil, apierr.ErrConflict
	}
	if err != nil {
		return nil, err
	}
	if rev != nil && a.Revision != *rev {
		return nil, apierr.ErrConflict
	}
	if delta > 0 && (a.Status != assistant.StatusActive || a.ActiveVersionID == "") {
		return nil, apierr.ErrConflict
	}
	if !same {
		a.AssignedLines = max(0, a.AssignedLines+delta)
	}
	return putAssistant(table, a, nil), nil
}
