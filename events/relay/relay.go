// Package relay is the event-relay Lambda's handler, the AWS event path's first hop
// beside awsbus: it reads the events table's stream (the outbox DynamoDB stores write in
// the same transaction as the state change) and puts each new event on the EventBridge
// bus. The store's item format stays the store's: New takes its decoder
// (dynamo.EventFromStream), so the event transport imports no store.
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
)

// Publisher puts events on the bus (awsbus.Publisher).
type Publisher interface {
	Publish(ctx context.Context, evts []callevent.Event) error
}

// Decoder reads the event an events-table item holds, given a lookup of the item's
// string attributes: dynamo.EventFromStream.
type Decoder func(attr func(name string) (string, bool)) (callevent.Event, error)

// Relay relays stream batches to a Publisher.
type Relay struct {
	publisher Publisher
	decode    Decoder
	log       *slog.Logger
}

// New is a relay that decodes stream records with decode and puts their events on p;
// log nil discards its log.
func New(p Publisher, decode Decoder, log *slog.Logger) *Relay {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Relay{publisher: p, decode: decode, log: log}
}

// Decode reads the event a stream record inserted; ok is false for records that are not
// inserts (updates never happen; removals are TTL expiry).
func (r *Relay) Decode(rec events.DynamoDBEventRecord) (e callevent.Event, ok bool, err error) {
	if rec.EventName != string(events.DynamoDBOperationTypeInsert) {
		return callevent.Event{}, false, nil
	}
	img := rec.Change.NewImage
	e, err = r.decode(func(name string) (string, bool) {
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
		e, ok, err := r.Decode(batch.Records[i])
		if err != nil {
			poison = &batch.Records[i]
			r.log.Error("undecodable stream record", "event_id", poison.EventID,
				"sequence_number", poison.Change.SequenceNumber, "err", err)
			break
		}
		if ok {
			evts = append(evts, e)
		}
	}
	if len(evts) > 0 {
		if err := r.publisher.Publish(ctx, evts); err != nil {
			r.log.Error("put events failed", "records", len(batch.Records), "err", err)
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
