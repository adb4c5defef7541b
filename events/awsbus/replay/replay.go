// Package replay empties the AWS event path's failure queues back into it (`bridgeline
// admin events replay`). It is a package of its own so the functions, which never
// replay, do not link the DynamoDB Streams client.
package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/bridgeline/bridgeline/events/awsbus"
	"github.com/bridgeline/bridgeline/events/callevent"
)

// The failure queues of the event path, and what a replay does with their messages:
//
//   - the relay's on-failure queue (template.yaml RelayFailureQueue) holds Lambda's
//     invocation records: where a failed stream batch is (shard, first and last sequence
//     number), not the records. The replay reads those records from the stream (which
//     keeps them 24 hours) and puts their events on the bus. A record that still cannot
//     be decoded is reported and its message kept.
//   - the rule's dead-letter queue (BusDeadLetterQueue) holds bus events EventBridge could
//     not put on the delivery queue; they go to the delivery queue as they are.
//   - the delivery dead-letter queue (DeliveryDeadLetterQueue) holds exhausted deliveries
//     and messages the delivery queue gave up on; they go back to the delivery queue as a
//     fresh attempt.
//
// Nothing is delivered twice: webhook-deliver starts one delivery per event and endpoint
// (it skips endpoints the attempt log shows the event was sent to) and a replayed task is
// skipped when the event already reached its endpoint.

// QueueAPI is the part of the SQS client a Replayer uses.
type QueueAPI interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	DeleteMessage(ctx context.Context, in *sqs.DeleteMessageInput, opts ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
}

// StreamsAPI is the part of the DynamoDB Streams client a Replayer uses.
type StreamsAPI interface {
	GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, opts ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, opts ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

// EventPublisher puts events on the bus (*awsbus.Publisher).
type EventPublisher interface {
	Publish(ctx context.Context, evts []callevent.Event) error
}

// Replayer empties a failure queue back into the event path.
type Replayer struct {
	Queue QueueAPI
	// Streams, Publisher and Decode replay the relay's failures; Decode reads an events
	// item's stream image (dynamo.EventFromStream).
	Streams   StreamsAPI
	Publisher EventPublisher
	Decode    func(attr func(name string) (string, bool)) (callevent.Event, error)
	// DeliveryQueueURL is webhook-deliver's queue.
	DeliveryQueueURL string
	Now              func() time.Time
	Logger           *slog.Logger
}

// Report counts what a replay did.
type Report struct {
	Messages    int `json:"messages"`    // messages taken from the failure queue
	BusEvents   int `json:"bus_events"`  // bus events sent to the delivery queue
	Tasks       int `json:"tasks"`       // deliveries sent back to the delivery queue
	Published   int `json:"published"`   // stream records put on the bus
	Undecodable int `json:"undecodable"` // stream records that still cannot be decoded
	Kept        int `json:"kept"`        // messages left in the failure queue
}

// streamFailure is Lambda's on-failure invocation record for a stream batch.
type streamFailure struct {
	Info *struct {
		ShardID       string `json:"shardId"`
		StartSequence string `json:"startSequenceNumber"`
		EndSequence   string `json:"endSequenceNumber"`
		StreamARN     string `json:"streamArn"`
	} `json:"DDBStreamBatchInfo"`
}

// Replay takes every message of the queue at queueURL and puts what it describes back on
// the event path; each message is deleted once replayed. A message it cannot replay stays
// in the queue, invisible until the replay ends (so one run looks at each message once).
func (r *Replayer) Replay(ctx context.Context, queueURL string) (Report, error) {
	var rep Report
	for {
		out, err := r.Queue.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL),
			MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 300})
		if err != nil {
			return rep, fmt.Errorf("receive from %s: %w", queueURL, err)
		}
		if len(out.Messages) == 0 {
			return rep, nil
		}
		for _, m := range out.Messages {
			rep.Messages++
			done, err := r.replayOne(ctx, aws.ToString(m.Body), &rep)
			if err != nil {
				return rep, fmt.Errorf("message %s: %w", aws.ToString(m.MessageId), err)
			}
			if !done {
				rep.Kept++
				continue
			}
			if _, err := r.Queue.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(queueURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				return rep, fmt.Errorf("delete %s: %w", aws.ToString(m.MessageId), err)
			}
		}
	}
}

// replayOne replays one message; done is false when it must stay in the queue.
func (r *Replayer) replayOne(ctx context.Context, body string, rep *Report) (done bool, err error) {
	var probe struct {
		Kind   string          `json:"kind"`
		Source string          `json:"source"`
		Info   json.RawMessage `json:"DDBStreamBatchInfo"`
	}
	if err := json.Unmarshal([]byte(body), &probe); err != nil {
		return false, fmt.Errorf("not JSON: %w", err)
	}
	switch {
	case probe.Kind == awsbus.TaskKind:
		var t awsbus.Task
		if err := json.Unmarshal([]byte(body), &t); err != nil {
			return false, fmt.Errorf("decode task: %w", err)
		}
		if t.Exhausted != nil { // the schedule ran out: a fresh delivery, due now
			t.Attempt, t.Exhausted = 1, nil
		}
		t.NotBefore, t.Replay = r.now(), true
		b, err := json.Marshal(t)
		if err != nil {
			return false, err
		}
		if err := r.send(ctx, string(b)); err != nil {
			return false, err
		}
		rep.Tasks++
		return true, nil
	case probe.Source == awsbus.Source:
		if err := r.send(ctx, body); err != nil {
			return false, err
		}
		rep.BusEvents++
		return true, nil
	case probe.Info != nil:
		return r.replayStream(ctx, body, rep)
	}
	return false, errors.New("neither a delivery task, a bus event nor a stream failure record")
}

func (r *Replayer) send(ctx context.Context, body string) error {
	if r.DeliveryQueueURL == "" {
		return errors.New("no delivery queue to replay to")
	}
	_, err := r.Queue.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(r.DeliveryQueueURL), MessageBody: aws.String(body)})
	if err != nil {
		return fmt.Errorf("send to the delivery queue: %w", err)
	}
	return nil
}

// replayStream reads the failed batch's records from the stream and publishes their events.
func (r *Replayer) replayStream(ctx context.Context, body string, rep *Report) (bool, error) {
	var f streamFailure
	if err := json.Unmarshal([]byte(body), &f); err != nil || f.Info == nil {
		return false, fmt.Errorf("decode stream failure record: %v", err)
	}
	if r.Streams == nil || r.Publisher == nil || r.Decode == nil {
		return false, errors.New("a stream failure record needs the streams client, the bus and a decoder")
	}
	it, err := r.Streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
		StreamArn: aws.String(f.Info.StreamARN), ShardId: aws.String(f.Info.ShardID),
		ShardIteratorType: streamtypes.ShardIteratorTypeAtSequenceNumber, SequenceNumber: aws.String(f.Info.StartSequence)})
	if err != nil {
		return false, fmt.Errorf("shard iterator (records are kept 24 hours): %w", err)
	}
	var evts []callevent.Event
	undecodable := 0
	iter := it.ShardIterator
	for reading := true; reading && iter != nil; {
		out, err := r.Streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
		if err != nil {
			return false, fmt.Errorf("stream records: %w", err)
		}
		if len(out.Records) == 0 {
			break
		}
		for _, rec := range out.Records {
			seq := aws.ToString(rec.Dynamodb.SequenceNumber)
			if seqLess(f.Info.EndSequence, seq) {
				reading = false
				break
			}
			if rec.EventName != streamtypes.OperationTypeInsert {
				continue
			}
			img := rec.Dynamodb.NewImage
			e, err := r.Decode(func(name string) (string, bool) {
				s, ok := img[name].(*streamtypes.AttributeValueMemberS)
				if !ok {
					return "", false
				}
				return s.Value, true
			})
			if err != nil {
				undecodable++
				r.logger().Error("stream record still undecodable; its failure message stays in the queue",
					"sequence_number", seq, "shard", f.Info.ShardID, "err", err)
				continue
			}
			evts = append(evts, e)
		}
		iter = out.NextShardIterator
	}
	if len(evts) > 0 {
		if err := r.Publisher.Publish(ctx, evts); err != nil {
			return false, err
		}
		rep.Published += len(evts)
	}
	rep.Undecodable += undecodable
	return undecodable == 0, nil
}

// seqLess compares stream sequence numbers: decimal strings of up to 40 digits.
func seqLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func (r *Replayer) now() time.Time {
	if r.Now != nil {
		return r.Now().UTC()
	}
	return time.Now().UTC()
}

func (r *Replayer) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.Default()
}
