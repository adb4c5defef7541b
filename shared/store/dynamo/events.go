package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/listing"
)

var _ delivery.Log = (*Store)(nil)

// eventItem is an event as stored. The envelope's JSON leaves the account out, so it is
// an attribute of its own (and the index partitions).
func eventItem(e callevent.Event) item {
	return docItem(e, item{
		"id":           str(e.ID),
		"account_id":   str(e.AccountID),
		"account_type": str(e.AccountID + "#" + e.Type),
		"type":         str(e.Type),
		"created_at":   timeAttr(e.CreatedAt),
		"ttl":          num(e.CreatedAt.Add(Retention).Unix()),
	})
}

func fromEventItem(it item) (callevent.Event, error) {
	e, err := fromDoc[callevent.Event](it)
	e.AccountID = getS(it, "account_id")
	return e, err
}

// EventPut is the transaction action that writes evt into the events table, for stores
// that record a state change and the event it causes in one TransactWriteItems (the
// outbox: the table's stream relays new events to EventBridge). A given event id is
// written once.
func (s *Store) EventPut(evt callevent.Event) (types.TransactWriteItem, error) {
	return s.eventPut(evt, s.localOutbox)
}

// eventPut writes evt, marked for the local delivery worker when undispatched is set.
func (s *Store) eventPut(evt callevent.Event, undispatched bool) (types.TransactWriteItem, error) {
	name, err := s.table(Events)
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	it := eventItem(evt)
	if undispatched {
		it["undispatched"] = str("1")
	}
	return types.TransactWriteItem{Put: &types.Put{
		TableName: name, Item: it,
		ConditionExpression: aws.String("attribute_not_exists(id)"),
	}}, nil
}

// GetEvent reads an event.
func (s *Store) GetEvent(ctx context.Context, id string) (callevent.Event, error) {
	it, err := s.getItem(ctx, Events, item{"id": str(id)})
	if err != nil {
		return callevent.Event{}, err
	}
	return fromEventItem(it)
}

// CountRedelivery counts one redelivery of the event in its item's redeliveries, unless
// it has max already: one conditional update, so concurrent requests cannot pass max
// together.
func (s *Store) CountRedelivery(ctx context.Context, eventID string, max int) error {
	name, err := s.table(Events)
	if err != nil {
		return err
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 name,
		Key:                       item{"id": str(eventID)},
		UpdateExpression:          aws.String("ADD redeliveries :one"),
		ConditionExpression:       aws.String("attribute_exists(id) AND (attribute_not_exists(redeliveries) OR redeliveries < :max)"),
		ExpressionAttributeValues: item{":one": num(1), ":max": num(max)},
	})
	if err = conflict(err); err != nil && !errors.Is(err, apierr.ErrConflict) {
		return fmt.Errorf("count redelivery of %s: %w", eventID, err)
	}
	return err
}

// ListEvents lists an account's events newest first, of one type when typ is set.
func (s *Store) ListEvents(ctx context.Context, accountID, typ string, q listing.Query) ([]callevent.Event, error) {
	index, part := "by_account", attrEq{"account_id", accountID}
	if typ != "" {
		index, part = "by_account_type", attrEq{"account_type", accountID + "#" + typ}
	}
	items, err := s.pageNewestFirst(ctx, Events, index, part, q)
	if err != nil {
		return nil, err
	}
	out := make([]callevent.Event, len(items))
	for i, it := range items {
		if out[i], err = fromEventItem(it); err != nil {
			return nil, fmt.Errorf("list events: %w", err)
		}
	}
	return out, nil
}

// EventFromStream decodes the new image of an events-table stream record, given as a
// lookup of its string attributes (the relay gets images in Lambda's stream format).
func EventFromStream(attr func(name string) (string, bool)) (callevent.Event, error) {
	doc, ok := attr("doc")
	if !ok {
		return callevent.Event{}, fmt.Errorf("events item without doc")
	}
	acct, _ := attr("account_id")
	return fromEventItem(item{"doc": str(doc), "account_id": str(acct)})
}
