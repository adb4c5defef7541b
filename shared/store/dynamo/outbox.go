package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/shared/apierr"
)

// The local outbox: `bridgeline dev --store dynamodb` delivers webhooks with the same
// delivery.Worker as on SQLite, so the store keeps its queue. On AWS the events table's
// stream, EventBridge and SQS do that instead, and the outbox is off (Config.LocalOutbox):
// events then carry no "undispatched" mark that nothing would ever clear.
//
// Deliveries live in webhook_deliveries. Sparse index attributes say where each is:
//   - due ("1", sorted by next_at) while it is pending and unclaimed;
//   - claimed ("1", sorted by claimed_at) while an attempt is in flight.

var _ delivery.Outbox = (*Store)(nil)

// EnableLocalOutbox makes the store mark new events for the local delivery worker.
func (s *Store) EnableLocalOutbox() { s.localOutbox = true }

// deliveryItem is d as stored; claimedAt is "" when no attempt is in flight.
func deliveryItem(d delivery.Delivery, claimedAt string) item {
	it := docItem(d, item{
		"id":          str(d.ID),
		"event_id":    str(d.EventID),
		"endpoint_id": str(d.EndpointID),
		"state":       str(d.State),
		"next_at":     timeAttr(d.NextAttemptAt),
	})
	switch {
	case claimedAt != "":
		it["claimed"], it["claimed_at"] = str("1"), str(claimedAt)
	case d.State == delivery.StatePending:
		it["due"] = str("1")
	}
	return it
}

func (s *Store) deliveryPuts(ds []delivery.Delivery) ([]types.TransactWriteItem, error) {
	name, err := s.table(WebhookDeliveries)
	if err != nil {
		return nil, err
	}
	var out []types.TransactWriteItem
	for _, d := range ds {
		out = append(out, types.TransactWriteItem{Put: &types.Put{
			TableName: name, Item: deliveryItem(d, ""),
			ConditionExpression: aws.String("attribute_not_exists(id)"),
		}})
	}
	return out, nil
}

// UndispatchedEvents returns events not fanned out yet, oldest first.
func (s *Store) UndispatchedEvents(ctx context.Context, limit int) ([]callevent.Event, error) {
	name, err := s.table(Events)
	if err != nil {
		return nil, err
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                 name,
		IndexName:                 aws.String("undispatched"),
		KeyConditionExpression:    aws.String("undispatched = :u"),
		ExpressionAttributeValues: item{":u": str("1")},
		Limit:                     aws.Int32(int32(limit)),
	})
	if err != nil {
		return nil, fmt.Errorf("undispatched events: %w", err)
	}
	evts := make([]callevent.Event, 0, len(out.Items))
	for _, it := range out.Items {
		e, err := fromEventItem(it)
		if err != nil {
			return nil, err
		}
		evts = append(evts, e)
	}
	return evts, nil
}

// AddDeliveries clears the event's undispatched mark and writes its deliveries in one
// transaction; an event already fanned out is ErrConflict.
func (s *Store) AddDeliveries(ctx context.Context, eventID string, ds []delivery.Delivery) error {
	events, err := s.table(Events)
	if err != nil {
		return err
	}
	puts, err := s.deliveryPuts(ds)
	if err != nil {
		return err
	}
	txn := append([]types.TransactWriteItem{{Update: &types.Update{
		TableName: events, Key: item{"id": str(eventID)},
		UpdateExpression:    aws.String("REMOVE undispatched"),
		ConditionExpression: aws.String("attribute_exists(undispatched)"),
	}}}, puts...)
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: txn})
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("add deliveries of %s: %w", eventID, err)
	}
	return err
}

// AddRedeliveries writes deliveries of an event already fanned out.
func (s *Store) AddRedeliveries(ctx context.Context, ds []delivery.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	puts, err := s.deliveryPuts(ds)
	if err != nil {
		return err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: puts})
	if err != nil {
		return fmt.Errorf("add redeliveries: %w", conflict(err))
	}
	return nil
}

// ClaimDueDeliveries walks the due index oldest first and claims what fits within lim
// (in all, per endpoint, per account), so the endpoints whose deliveries waited longest
// come first. Each claim is conditional: a delivery another process claimed, or that was
// finished meanwhile, is skipped.
func (s *Store) ClaimDueDeliveries(ctx context.Context, now time.Time, lim delivery.ClaimLimits) ([]delivery.Delivery, error) {
	limit := lim.Limit
	name, err := s.table(WebhookDeliveries)
	if err != nil {
		return nil, err
	}
	at := now.UTC().Format(timeLayout)
	taken, takenAcct := map[string]int{}, map[string]int{}
	var out []delivery.Delivery
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:                 name,
		IndexName:                 aws.String("due"),
		KeyConditionExpression:    aws.String("due = :d AND next_at <= :now"),
		ExpressionAttributeValues: item{":d": str("1"), ":now": str(at)},
	})
	for p.HasMorePages() && len(out) < limit {
		page, err := p.NextPage(ctx)
		if err != nil {
			return out, fmt.Errorf("due deliveries: %w", err)
		}
		for _, it := range page.Items {
			if len(out) >= limit {
				break
			}
			ep := getS(it, "endpoint_id")
			d, err := fromDoc[delivery.Delivery](it)
			if err != nil {
				return out, err
			}
			if lim.Room(ep, d.AccountID, taken[ep], takenAcct[d.AccountID]) <= 0 {
				continue
			}
			_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName:                 name,
				Key:                       item{"id": it["id"]},
				UpdateExpression:          aws.String("SET claimed = :one, claimed_at = :at REMOVE due"),
				ConditionExpression:       aws.String("#st = :pending AND attribute_exists(due)"),
				ExpressionAttributeNames:  map[string]string{"#st": "state"},
				ExpressionAttributeValues: item{":one": str("1"), ":at": str(at), ":pending": str(delivery.StatePending)},
			})
			var ccf *types.ConditionalCheckFailedException
			if errors.As(err, &ccf) {
				continue
			}
			if err != nil {
				return out, fmt.Errorf("claim delivery: %w", err)
			}
			taken[ep]++
			takenAcct[d.AccountID]++
			out = append(out, d)
		}
	}
	return out, nil
}

// FinishDelivery stores d, releases its claim and logs a in one transaction. A delivery
// that is no longer pending (canceled meanwhile) stays as it is; a is logged anyway.
func (s *Store) FinishDelivery(ctx context.Context, d delivery.Delivery, a *delivery.Attempt) error {
	name, err := s.table(WebhookDeliveries)
	if err != nil {
		return err
	}
	put := &types.Put{
		TableName: name, Item: deliveryItem(d, ""),
		ConditionExpression:       aws.String("#st = :pending"),
		ExpressionAttributeNames:  map[string]string{"#st": "state"},
		ExpressionAttributeValues: item{":pending": str(delivery.StatePending)},
	}
	txn := []types.TransactWriteItem{{Put: put}}
	if a != nil {
		attempts, err := s.table(WebhookAttempts)
		if err != nil {
			return err
		}
		txn = append(txn, types.TransactWriteItem{Put: &types.Put{TableName: attempts, Item: attemptItem(*a)}})
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: txn})
	if reasons := cancelReasons(err); len(reasons) > 0 && reasons[0] == "ConditionalCheckFailed" {
		if a == nil {
			return nil
		}
		return s.RecordDeliveryAttempt(ctx, *a)
	}
	if err != nil {
		return fmt.Errorf("finish delivery %s: %w", d.ID, conflict(err))
	}
	return nil
}

// ReleaseDeliveryClaims makes deliveries claimed before the given time due again, and
// cancels pending deliveries whose endpoint is gone.
func (s *Store) ReleaseDeliveryClaims(ctx context.Context, before time.Time) (int, error) {
	name, err := s.table(WebhookDeliveries)
	if err != nil {
		return 0, err
	}
	released := 0
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:                 name,
		IndexName:                 aws.String("claimed"),
		KeyConditionExpression:    aws.String("claimed = :one AND claimed_at < :before"),
		ExpressionAttributeValues: item{":one": str("1"), ":before": str(before.UTC().Format(timeLayout))},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return released, fmt.Errorf("claimed deliveries: %w", err)
		}
		for _, it := range page.Items {
			_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName:                 name,
				Key:                       item{"id": it["id"]},
				UpdateExpression:          aws.String("SET due = :one REMOVE claimed, claimed_at"),
				ConditionExpression:       aws.String("claimed_at = :seen"),
				ExpressionAttributeValues: item{":one": str("1"), ":seen": it["claimed_at"]},
			})
			var ccf *types.ConditionalCheckFailedException
			if errors.As(err, &ccf) {
				continue
			}
			if err != nil {
				return released, fmt.Errorf("release delivery: %w", err)
			}
			released++
		}
	}
	return released, s.cancelOrphans(ctx)
}

// cancelOrphans cancels due deliveries whose endpoint was deleted.
func (s *Store) cancelOrphans(ctx context.Context) error {
	name, err := s.table(WebhookDeliveries)
	if err != nil {
		return err
	}
	exists := map[string]bool{}
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName:                 name,
		IndexName:                 aws.String("due"),
		KeyConditionExpression:    aws.String("due = :one"),
		ExpressionAttributeValues: item{":one": str("1")},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("due deliveries: %w", err)
		}
		for _, it := range page.Items {
			ep := getS(it, "endpoint_id")
			if _, ok := exists[ep]; !ok {
				_, err := s.GetWebhookEndpoint(ctx, ep)
				if err != nil && !errors.Is(err, apierr.ErrNotFound) {
					return err
				}
				exists[ep] = err == nil
			}
			if exists[ep] {
				continue
			}
			d, err := fromDoc[delivery.Delivery](it)
			if err != nil {
				return err
			}
			d.State = delivery.StateCanceled
			_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
				TableName: name, Item: deliveryItem(d, ""),
				ConditionExpression: aws.String("attribute_exists(due)"),
			})
			var ccf *types.ConditionalCheckFailedException
			if err != nil && !errors.As(err, &ccf) {
				return fmt.Errorf("cancel delivery %s: %w", d.ID, err)
			}
		}
	}
	return nil
}

// NextDeliveryDue is the earliest next attempt of a pending, unclaimed delivery.
func (s *Store) NextDeliveryDue(ctx context.Context) (time.Time, bool, error) {
	name, err := s.table(WebhookDeliveries)
	if err != nil {
		return time.Time{}, false, err
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:                 name,
		IndexName:                 aws.String("due"),
		KeyConditionExpression:    aws.String("due = :one"),
		ExpressionAttributeValues: item{":one": str("1")},
		Limit:                     aws.Int32(1),
	})
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next delivery: %w", err)
	}
	if len(out.Items) == 0 {
		return time.Time{}, false, nil
	}
	t, err := time.Parse(timeLayout, getS(out.Items[0], "next_at"))
	return t, err == nil, err
}
