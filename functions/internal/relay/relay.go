// Package relay is the event-relay Lambda's handler: it reads the events table's stream
// (the outbox DynamoDB stores write in the same transaction as the state change) and
// puts each new event on the EventBridge bus.
//
// Failures are reported per record (the mapping's FunctionResponseTypes has
// ReportBatchItemFailures): the records before the first failing one are checkpointed,
// and Lambda retries from it, halving the batch on each failure (BisectBatchOnFunctionError).
// A record that cannot be decoded therefore ends up alone in its batch and, once the
// retries run out, goes to the mapping's on-failure queue without holding back the
// records after it; a failed put does the same to the records it covers. The failure
// queue keeps where the records are in the stream, and `bridgeline admin events replay`
// (events/awsbus/replay) puts them on the bus later. An event may reach the bus twice
// (a retried batch, a replay) but never zero times; webhook-deliver starts one delivery
// per event and endpoint.
package relay

import (
	"context"
	"log/slog"

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
	Logger    *slog.Logger
}

// Decode reads the event a stream record inserted; ok is false for records that are not
// inserts (updates never happen; removals are TTL expiry).
func Decode(rec events.DynamoDBEventRecord) (e callevent.Event, ok bool, err error) {
	if rec.EventName != string(events.DynamoDBOperationTypeInsert) {
		return callevent.Event{}, false, nil
	}
	img := rec.Change.NewImage
	e, err = dynamo.EventFromStream(func(name string) (string, bool) {
		v, ok := img[name]
		if !ok || v.DataType() != events.DataTypeString {
			return "", false
		}
		return v.String(), true
	})
	return e, err == nil, err
}

// Handle publishes the batch's new events, in stream order, up to the first record it
// cannot decode, and reports that record (or, when the put fails, the batch's first
// record) as the batch's failure. It never fails the invocation as a whole.
func (r *Relay) Handle(ctx context.Context, batch events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	var evts []callevent.Event
	var poison *events.DynamoDBEventRecord
	for i := range batch.Records {
		e, ok, err := Decode(batch.Records[i])
		if err != nil {
			poison = &batch.Records[i]
			r.logger().Error("undecodable stream record", "event_id", poison.EventID,
				"sequence_number", poison.Change.SequenceNumber, "err", err)
			break
		}
		if ok {
			evts = append(evts, e)
		}
	}
	if len(evts) > 0 {
		if err := r.Publisher.Publish(ctx, evts); err != nil {
			r.logger().Error("put events failed", "records", len(batch.Records), "err", err)
			return failed(batch.Records[0]), nil
		}
	}
	if poison != nil {
		return failed(*poison), nil
	}
	return events.DynamoDBEventResponse{}, nil
}

// failed reports rec as the batch's first failure: Lambda keeps the records before it.
func failed(rec events.DynamoDBEventRecord) events.DynamoDBEventResponse {
	return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{
		{ItemIdentifier: rec.Change.SequenceNumber}}}
}

func (r *Relay) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.Default()
}
