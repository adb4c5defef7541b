package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

var _ webhookendpoint.Store = (*Store)(nil)

func endpointItem(e webhookendpoint.Endpoint) item {
	return docItem(e, item{"id": str(e.ID), "account_id": str(e.AccountID), "revision": num(e.Revision)})
}

// An account's webhook endpoints are counted in one item of the endpoints table (no
// index holds it: it has no account_id):
//
//	id    "count#<account id>"
//	used  how many endpoints the account has (endpoints made before the count are not
//	      in it; the service's list check holds those)
//
// CreateWebhookEndpoint increments used under the condition that it is below max in the
// transaction that inserts the endpoint; DeleteWebhookEndpoint decrements it in the one
// that deletes it.

func endpointCountKey(accountID string) item { return item{"id": str("count#" + accountID)} }

// CreateWebhookEndpoint inserts an endpoint if its account has fewer than max (else
// webhookendpoint.ErrLimit); an existing id is ErrConflict.
func (s *Store) CreateWebhookEndpoint(ctx context.Context, e webhookendpoint.Endpoint, max int) error {
	name, err := s.table(WebhookEndpoints)
	if err != nil {
		return err
	}
	txn := []types.TransactWriteItem{
		{Update: &types.Update{
			TableName: name, Key: endpointCountKey(e.AccountID),
			UpdateExpression:          aws.String("SET used = if_not_exists(used, :zero) + :one"),
			ConditionExpression:       aws.String("attribute_not_exists(used) OR used < :max"),
			ExpressionAttributeValues: item{":zero": num(0), ":one": num(1), ":max": num(max)},
		}},
		{Put: &types.Put{
			TableName: name, Item: endpointItem(e),
			ConditionExpression: aws.String("attribute_not_exists(id)"),
		}},
	}
	// Another create or delete of the account holds the count: try again shortly.
	return s.createCounted(ctx, txn, webhookendpoint.ErrLimit, "create webhook endpoint "+e.ID)
}

// GetWebhookEndpoint reads an endpoint.
func (s *Store) GetWebhookEndpoint(ctx context.Context, id string) (webhookendpoint.Endpoint, error) {
	return getDoc[webhookendpoint.Endpoint](ctx, s, WebhookEndpoints, item{"id": str(id)})
}

// ListWebhookEndpoints lists an account's endpoints newest first.
func (s *Store) ListWebhookEndpoints(ctx context.Context, accountID string, q listing.Query) ([]webhookendpoint.Endpoint, error) {
	items, err := s.pageNewestFirst(ctx, WebhookEndpoints, "by_account", attrEq{"account_id", accountID}, q)
	if err != nil {
		return nil, err
	}
	out := make([]webhookendpoint.Endpoint, len(items))
	for i, it := range items {
		if out[i], err = fromDoc[webhookendpoint.Endpoint](it); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// UpdateWebhookEndpoint writes e if the stored revision is still e.Revision (a missing
// endpoint fails the same way), storing e.Revision+1.
func (s *Store) UpdateWebhookEndpoint(ctx context.Context, e webhookendpoint.Endpoint) error {
	name, err := s.table(WebhookEndpoints)
	if err != nil {
		return err
	}
	prev := e.Revision
	e.Revision++
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: name, Item: endpointItem(e),
		ConditionExpression:       aws.String("revision = :rev"),
		ExpressionAttributeValues: item{":rev": num(prev)},
	})
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("update webhook endpoint %s: %w", e.ID, err)
	}
	return err
}

// DeleteWebhookEndpoint deletes an endpoint and takes it off its account's count; a
// missing one is ErrNotFound. A count already at zero (the endpoint was made before the
// count) is left alone.
func (s *Store) DeleteWebhookEndpoint(ctx context.Context, id string) error {
	name, err := s.table(WebhookEndpoints)
	if err != nil {
		return err
	}
	e, err := s.GetWebhookEndpoint(ctx, id)
	if err != nil {
		return err
	}
	del := types.TransactWriteItem{Delete: &types.Delete{
		TableName: name, Key: item{"id": str(id)},
		ConditionExpression: aws.String("attribute_exists(id)"),
	}}
	txn := []types.TransactWriteItem{del, {Update: &types.Update{
		TableName: name, Key: endpointCountKey(e.AccountID),
		UpdateExpression:          aws.String("SET used = used - :one"),
		ConditionExpression:       aws.String("used > :zero"),
		ExpressionAttributeValues: item{":zero": num(0), ":one": num(1)},
	}}}
	for attempt := 1; ; attempt++ {
		_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: txn})
		reasons := cancelReasons(err)
		switch {
		case err == nil:
			return nil
		case len(reasons) > 0 && reasons[0] == "ConditionalCheckFailed":
			return apierr.ErrNotFound
		case len(reasons) > 1 && reasons[1] == "ConditionalCheckFailed":
			txn = txn[:1] // not counted: delete it alone
			continue
		case contended(err, reasons) && attempt < createAttempts:
			if err := contentionPause(ctx, attempt); err != nil {
				return fmt.Errorf("delete webhook endpoint %s: %w", id, err)
			}
			continue
		}
		return fmt.Errorf("delete webhook endpoint %s: %w", id, err)
	}
}

// RecordDeliveryAttempt logs an attempt once: the first write of an attempt id wins.
// Attempt ids sort by creation time, so an event's attempts read back oldest first.
func (s *Store) RecordDeliveryAttempt(ctx context.Context, a delivery.Attempt) error {
	name, err := s.table(WebhookAttempts)
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           name,
		Item:                attemptItem(a),
		ConditionExpression: aws.String("attribute_not_exists(event_id)"),
	})
	var ccf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &ccf) {
		return fmt.Errorf("record attempt %s: %w", a.ID, err)
	}
	return nil
}

// ListDeliveryAttempts returns an event's attempts, oldest first.
func (s *Store) ListDeliveryAttempts(ctx context.Context, eventID string) ([]delivery.Attempt, error) {
	name, err := s.table(WebhookAttempts)
	if err != nil {
		return nil, err
	}
	var out []delivery.Attempt
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:                 name,
		KeyConditionExpression:    aws.String("event_id = :e"),
		ExpressionAttributeValues: item{":e": str(eventID)},
		ConsistentRead:            aws.Bool(true),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("attempts of %s: %w", eventID, err)
		}
		for _, it := range page.Items {
			a, err := fromDoc[delivery.Attempt](it)
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		}
	}
	return out, nil
}

// DeliveryAttemptsPage returns up to limit of an event's attempts after startingAfter,
// oldest first (the sort key is the attempt id), and whether more follow. It reads
// limit+1 items at most, whatever the event holds.
func (s *Store) DeliveryAttemptsPage(ctx context.Context, eventID, startingAfter string, limit int) ([]delivery.Attempt, bool, error) {
	name, err := s.table(WebhookAttempts)
	if err != nil {
		return nil, false, err
	}
	cond, vals := "event_id = :e", item{":e": str(eventID)}
	if startingAfter != "" {
		cond, vals[":a"] = cond+" AND id > :a", str(startingAfter)
	}
	in := &dynamodb.QueryInput{TableName: name, KeyConditionExpression: aws.String(cond),
		ExpressionAttributeValues: vals, ConsistentRead: aws.Bool(true), Limit: aws.Int32(int32(limit + 1))}
	var out []delivery.Attempt
	for {
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, false, fmt.Errorf("attempts of %s: %w", eventID, err)
		}
		for _, it := range page.Items {
			a, err := fromDoc[delivery.Attempt](it)
			if err != nil {
				return nil, false, err
			}
			out = append(out, a)
		}
		if len(out) > limit {
			return out[:limit], true, nil
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, false, nil
		}
		in.ExclusiveStartKey, in.Limit = page.LastEvaluatedKey, aws.Int32(int32(limit+1-len(out)))
	}
}

func attemptItem(a delivery.Attempt) item {
	return docItem(a, item{"event_id": str(a.EventID), "id": str(a.ID), "ttl": num(a.StartedAt.Add(Retention).Unix())})
}
