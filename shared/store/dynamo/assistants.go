package dynamo

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
)

var _ assistant.Store = (*Store)(nil)

// assistantItem is the stored form: the record without its versions (they live in the
// versions table), plus the attributes conditions and indexes use.
func assistantItem(a assistant.Assistant) item {
	a.Versions = nil
	return docItem(a, item{
		"id":                str(a.ID),
		"account_id":        str(a.AccountID),
		"account_status":    str(a.AccountID + "#" + a.Status),
		"status":            str(a.Status),
		"revision":          num(a.Revision),
		"version_count":     num(a.VersionCount),
		"active_version_id": str(a.ActiveVersionID),
		"assigned_lines":    num(a.AssignedLines),
	})
}

// CreateAssistant inserts a new assistant; an existing id is ErrConflict.
func (s *Store) CreateAssistant(ctx context.Context, a assistant.Assistant) error {
	name, err := s.table(Assistants)
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: name, Item: assistantItem(a),
		ConditionExpression: aws.String("attribute_not_exists(id)"),
	})
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("create assistant %s: %w", a.ID, err)
	}
	return err
}

// GetAssistant reads an assistant and its versions, oldest first, strongly consistent.
func (s *Store) GetAssistant(ctx context.Context, id string) (assistant.Assistant, error) {
	a, err := getDoc[assistant.Assistant](ctx, s, Assistants, item{"id": str(id)})
	if err != nil {
		return a, err
	}
	a.Versions, err = s.versionsOf(ctx, id, true)
	return a, err
}

// GetAssistantHead reads an assistant without its versions, strongly consistent.
func (s *Store) GetAssistantHead(ctx context.Context, id string) (assistant.Assistant, error) {
	return getDoc[assistant.Assistant](ctx, s, Assistants, item{"id": str(id)})
}

// versionsOf lists an assistant's versions by number.
func (s *Store) versionsOf(ctx context.Context, assistantID string, consistent bool) ([]assistant.Version, error) {
	name, err := s.table(Versions)
	if err != nil {
		return nil, err
	}
	out := []assistant.Version{}
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:                 name,
		KeyConditionExpression:    aws.String("assistant_id = :a"),
		ExpressionAttributeValues: item{":a": str(assistantID)},
		ConsistentRead:            aws.Bool(consistent),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("versions of %s: %w", assistantID, err)
		}
		for _, it := range page.Items {
			v, err := fromDoc[assistant.Version](it)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// ListAssistants lists an account's assistants newest first, with their versions, from
// the by_account (status "all") or by_account_status index.
func (s *Store) ListAssistants(ctx context.Context, accountID string, q assistant.ListQuery) ([]assistant.Assistant, error) {
	index, partition := "by_account_status", attrEq{"account_status", accountID + "#" + q.Status}
	switch q.Status {
	case "all":
		index, partition = "by_account", attrEq{"account_id", accountID}
	case "":
		partition.value = accountID + "#" + assistant.StatusActive
	}
	items, err := s.pageNewestFirst(ctx, Assistants, index, partition, q.Query)
	if err != nil {
		return nil, err
	}
	list := make([]assistant.Assistant, len(items))
	for i, it := range items {
		if list[i], err = fromDoc[assistant.Assistant](it); err != nil {
			return nil, err
		}
	}
	// Versions come from the base table of versions, a query per assistant, a few at
	// a time.
	var wg sync.WaitGroup
	errs := make([]error, len(list))
	sem := make(chan struct{}, 8)
	for i := range list {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			list[i].Versions, errs[i] = s.versionsOf(ctx, list[i].ID, false)
		}()
	}
	wg.Wait()
	return list, errors.Join(errs...)
}

// UpdateAssistant writes a if the stored revision is still a.Revision, storing
// a.Revision+1.
func (s *Store) UpdateAssistant(ctx context.Context, a assistant.Assistant) error {
	name, err := s.table(Assistants)
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, putItem(putAssistant(name, a, nil)))
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("update assistant %s: %w", a.ID, err)
	}
	return err
}

// putAssistant is a conditional write of a at revision a.Revision+1; with count set, the
// stored version counter must also be *count (the compare-and-set publish needs).
func putAssistant(table *string, a assistant.Assistant, count *int) *types.Put {
	prev := a.Revision
	a.Revision++
	p := &types.Put{
		TableName:                 table,
		Item:                      assistantItem(a),
		ConditionExpression:       aws.String("revision = :rev"),
		ExpressionAttributeValues: item{":rev": num(prev)},
	}
	if count != nil {
		p.ConditionExpression = aws.String("revision = :rev AND version_count = :count")
		p.ExpressionAttributeValues[":count"] = num(*count)
	}
	return p
}

// PublishVersion is one transaction: a conditional put of the version (its number must
// be free) and a compare-and-set of the assistant (revision and version counter as read;
// the new item carries the counter and active_version_id naming v).
func (s *Store) PublishVersion(ctx context.Context, a assistant.Assistant, v assistant.Version) error {
	assistants, err := s.table(Assistants)
	if err != nil {
		return err
	}
	versions, err := s.table(Versions)
	if err != nil {
		return err
	}
	prevCount := v.Number - 1
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{
			TableName: versions,
			Item: docItem(v, item{
				"assistant_id": str(v.AssistantID),
				"number":       num(v.Number),
				"id":           str(v.ID),
			}),
			ConditionExpression: aws.String("attribute_not_exists(assistant_id)"),
		}},
		{Put: putAssistant(assistants, a, &prevCount)},
	}})
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("publish %s version %d: %w", a.ID, v.Number, err)
	}
	return err
}

// GetVersion finds a version by id through the by_id index. Index reads are eventually
// consistent; callers that just published read the version from GetAssistant instead.
func (s *Store) GetVersion(ctx context.Context, id string) (assistant.Version, error) {
	name, err := s.table(Versions)
	if err != nil {
		return assistant.Version{}, err
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                 name,
		IndexName:                 aws.String("by_id"),
		KeyConditionExpression:    aws.String("id = :id"),
		ExpressionAttributeValues: item{":id": str(id)},
		Limit:                     aws.Int32(1),
	})
	if err != nil {
		return assistant.Version{}, fmt.Errorf("get version %s: %w", id, err)
	}
	if len(out.Items) == 0 {
		return assistant.Version{}, apierr.ErrNotFound
	}
	return fromDoc[assistant.Version](out.Items[0])
}
