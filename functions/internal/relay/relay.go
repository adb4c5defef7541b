// Package relay is the event-relay Lambda's handler: it reads the events table's stream
// (the outbox DynamoDB stores write in the same transaction as the state change) and
// puts each new event on the EventBridge bus. A failed put fails the batch, and Lambda
// retries it (halving it on each failure, as template.yaml configures), so an event may
// reach the bus twice but never zero times; receivers deduplicate on the event id.
package relay

import (
	"context"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/store/dynamo"
)

// Publisher puts events on the bus (awsbus.Publisher).
type Publisher interface {
	Publish(ctx context.Context, evts []callevent.Event) error
}

// Relay relays stream batches to a Publisher.
type Relay struct {
	Publisher Publisher
}

// Handle publishes the batch's new events, in stream order.
func (r *Relay) Handle(ctx context.Context, batch events.DynamoDBEvent) error {
	var evts []callevent.Event
	for _, rec := range batch.Records {
		if rec.EventName != string(events.DynamoDBOperationTypeInsert) {
			continue // updates never happen; removals are TTL expiry
		}
		img := rec.Change.NewImage
		e, err := dynamo.EventFromStream(func(name string) (string, bool) {
			v, ok := img[name]
			if !ok || v.DataType() != events.DataTypeString {
				return "", false
			}
			return v.String(), true
		})
		if err != nil {
			return fmt.Errorf("stream record %s: %w", rec.EventID, err)
		}
		evts = append(evts, e)
	}
	if len(evts) == 0 {
		return nil
	}
	return r.Publisher.Publish(ctx, evts)
}
