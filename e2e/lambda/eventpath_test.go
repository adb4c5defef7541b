package lambda_test

// The event path's failures, on moto: the events table's stream feeds the relay, the
// relay puts events on the EventBridge bus, the rule routes them to the delivery queue and
// webhook-deliver posts them to the customer. A record the relay cannot decode, a bus
// that refuses puts, a rule target that fails and a customer endpoint that is down each
// leave their work in a failure queue; `bridgeline admin events replay` (replay.Replayer)
// puts it back, and the customer gets every event exactly once.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/bridgeline/bridgeline/events/awsbus"
	"github.com/bridgeline/bridgeline/events/awsbus/replay"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/events/relay"
	"github.com/bridgeline/bridgeline/functions/functiontest"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/store/dynamo"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

// eventPath is the event path's AWS resources on moto, named as template.yaml names them.
type eventPath struct {
	ddb     *dynamodb.Client
	streams *dynamodbstreams.Client
	eb      *eventbridge.Client
	sqs     *sqs.Client

	table, streamARN, bus                       string
	delivery, deliveryDLQ, busDLQ, relayFailure string // queue URLs
	maxRetries                                  int    // the stream mapping's MaximumRetryAttempts
}

func newEventPath(t *testing.T, ctx context.Context, endpoint string) *eventPath {
	t.Helper()
	creds := credentials.NewStaticCredentialsProvider("test", "test", "")
	p := &eventPath{
		ddb:     dynamodb.New(dynamodb.Options{Region: "us-east-1", Credentials: creds, BaseEndpoint: aws.String(endpoint)}),
		streams: dynamodbstreams.New(dynamodbstreams.Options{Region: "us-east-1", Credentials: creds, BaseEndpoint: aws.String(endpoint)}),
		eb:      eventbridge.New(eventbridge.Options{Region: "us-east-1", Credentials: creds, BaseEndpoint: aws.String(endpoint)}),
		sqs:     sqs.New(sqs.Options{Region: "us-east-1", Credentials: creds, BaseEndpoint: aws.String(endpoint)}),
		table:   "events", bus: "bridgeline-test",
	}
	tpl := functiontest.Template(t)
	stream, _ := tpl.Resources["EventRelayFunction"].Properties["Events"].(map[string]any)["Stream"].(map[string]any)["Properties"].(map[string]any)
	retries, _ := stream["MaximumRetryAttempts"].(float64)
	if retries < 1 {
		t.Fatalf("EventRelayFunction's stream mapping has MaximumRetryAttempts %v", stream["MaximumRetryAttempts"])
	}
	// Lambda retries instantly; the emulated mapping below caps the count so the test
	// stays short, and what it checks (the record goes to the failure queue, alone) does
	// not depend on the number.
	p.maxRetries = min(int(retries), 3)

	out, err := p.ddb.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String(p.table),
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: ddbtypes.KeyTypeHash}},
		BillingMode:          ddbtypes.BillingModePayPerRequest,
		StreamSpecification:  &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: ddbtypes.StreamViewTypeNewImage}})
	if err != nil {
		t.Fatal(err)
	}
	p.streamARN = aws.ToString(out.TableDescription.LatestStreamArn)

	queue := func(name string, attrs map[string]string) string {
		q, err := p.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(q.QueueUrl)
	}
	p.deliveryDLQ = queue("delivery-dlq", nil)
	p.busDLQ = queue("bus-dlq", nil)
	p.relayFailure = queue("relay-failures", nil)
	redrive, _ := json.Marshal(map[string]any{"deadLetterTargetArn": p.queueARN(t, ctx, p.deliveryDLQ), "maxReceiveCount": 5})
	p.delivery = queue("delivery", map[string]string{"VisibilityTimeout": "5", "RedrivePolicy": string(redrive)})

	if _, err := p.eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String(p.bus)}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("delivery"), EventBusName: aws.String(p.bus),
		EventPattern: aws.String(awsbus.RulePattern), State: ebtypes.RuleStateEnabled}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("delivery"), EventBusName: aws.String(p.bus),
		Targets: []ebtypes.Target{{Id: aws.String("delivery-queue"), Arn: aws.String(p.queueARN(t, ctx, p.delivery)),
			DeadLetterConfig: &ebtypes.DeadLetterConfig{Arn: aws.String(p.queueARN(t, ctx, p.busDLQ))},
			RetryPolicy:      &ebtypes.RetryPolicy{MaximumRetryAttempts: aws.Int32(3), MaximumEventAgeInSeconds: aws.Int32(3600)}}}}); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *eventPath) queueARN(t *testing.T, ctx context.Context, url string) string {
	t.Helper()
	out, err := p.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
}

// streamRecords reads the whole stream from position from on, as Lambda's mapping does.
func (p *eventPath) streamRecords(t *testing.T, ctx context.Context) []events.DynamoDBEventRecord {
	t.Helper()
	desc, err := p.streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(p.streamARN)})
	if err != nil {
		t.Fatal(err)
	}
	var out []events.DynamoDBEventRecord
	for _, sh := range desc.StreamDescription.Shards {
		it, err := p.streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(p.streamARN),
			ShardId: sh.ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			t.Fatal(err)
		}
		recs, err := p.streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs.Records {
			img := map[string]events.DynamoDBAttributeValue{}
			for k, v := range r.Dynamodb.NewImage {
				switch v := v.(type) {
				case *streamtypes.AttributeValueMemberS:
					img[k] = events.NewStringAttribute(v.Value)
				case *streamtypes.AttributeValueMemberN:
					img[k] = events.NewNumberAttribute(v.Value)
				}
			}
			out = append(out, events.DynamoDBEventRecord{EventID: aws.ToString(r.EventID), EventName: string(r.EventName),
				EventSourceArn: p.streamARN, Change: events.DynamoDBStreamRecord{
					SequenceNumber: aws.ToString(r.Dynamodb.SequenceNumber), NewImage: img}})
			out[len(out)-1].Change.Keys = map[string]events.DynamoDBAttributeValue{"shard": events.NewStringAttribute(aws.ToString(sh.ShardId))}
		}
	}
	return out
}

// runMapping is Lambda's stream event source mapping, which cannot run here, as
// template.yaml configures it: batches of BatchSize, the handler's reported failure
// checkpoints the records before it and retries from it, and a record that keeps failing
// after MaximumRetryAttempts goes to the on-failure queue (by bisection, alone) as
// Lambda's invocation record, which says where it is in the stream and not what it holds.
func (p *eventPath) runMapping(t *testing.T, ctx context.Context, r *relay.Relay, recs []events.DynamoDBEventRecord) {
	t.Helper()
	retries := 0
	for pos := 0; pos < len(recs); {
		batch := recs[pos:min(pos+10, len(recs))]
		resp, err := r.Handle(ctx, events.DynamoDBEvent{Records: batch})
		if err != nil {
			t.Fatalf("relay failed the whole invocation: %v", err)
		}
		if len(resp.BatchItemFailures) == 0 {
			pos += len(batch)
			retries = 0
			continue
		}
		k := -1
		for i, rec := range batch {
			if rec.Change.SequenceNumber == resp.BatchItemFailures[0].ItemIdentifier {
				k = i
			}
		}
		if k < 0 {
			t.Fatalf("relay reported %q, not a record of its batch", resp.BatchItemFailures[0].ItemIdentifier)
		}
		if k > 0 {
			pos, retries = pos+k, 0
			continue
		}
		if retries++; retries <= p.maxRetries {
			continue
		}
		failed := batch[0]
		body, _ := json.Marshal(map[string]any{
			"requestContext": map[string]any{"condition": "RetryAttemptsExhausted", "approximateInvokeCount": retries},
			"DDBStreamBatchInfo": map[string]any{"shardId": failed.Change.Keys["shard"].String(),
				"startSequenceNumber": failed.Change.SequenceNumber, "endSequenceNumber": failed.Change.SequenceNumber,
				"streamArn": p.streamARN, "batchSize": 1},
		})
		if _, err := p.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(p.relayFailure), MessageBody: aws.String(string(body))}); err != nil {
			t.Fatal(err)
		}
		pos, retries = pos+1, 0
	}
}

// failingBus is an EventBridge that refuses every put: the bus is unavailable.
type failingBus struct{}

func (failingBus) PutEvents(context.Context, *eventbridge.PutEventsInput, ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	return nil, errors.New("ServiceUnavailable")
}

// countingHook is a customer endpoint that answers 503 while down, and counts the
// events it accepted by webhook-id.
type countingHook struct {
	*eventtest.Receiver
	mu   sync.Mutex
	down bool
	srv  *httptest.Server
}

func newCountingHook(t *testing.T) *countingHook {
	h := &countingHook{Receiver: eventtest.NewReceiver(t)}
	target := h.Receiver.URL
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		down := h.down
		h.mu.Unlock()
		if down {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		// Forward to the verifying receiver, which records what it accepts.
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, target, r.Body)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *countingHook) setDown(down bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.down = down
}

func (h *countingHook) counts() map[string]int {
	n := map[string]int{}
	for _, g := range h.Events("") {
		n[g.WebhookID]++
	}
	return n
}

// drain runs webhook-deliver on the delivery queue until it has been empty for a while.
func (p *eventPath) drain(t *testing.T, ctx context.Context, h *awsbus.Handler) {
	t.Helper()
	quiet := 0
	for deadline := time.Now().Add(60 * time.Second); quiet < 3; {
		if time.Now().After(deadline) {
			t.Fatal("delivery queue never drained")
		}
		out, err := p.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(p.delivery), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			quiet++
			continue
		}
		quiet = 0
		var evt events.SQSEvent
		for _, m := range out.Messages {
			evt.Records = append(evt.Records, events.SQSMessage{MessageId: *m.MessageId, Body: *m.Body, EventSource: "aws:sqs"})
		}
		resp, err := h.Handle(ctx, evt)
		if err != nil {
			t.Fatal(err)
		}
		failed := map[string]bool{}
		for _, f := range resp.BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
		for _, m := range out.Messages {
			if failed[*m.MessageId] {
				t.Errorf("delivery message %s failed", *m.MessageId)
				continue
			}
			if _, err := p.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(p.delivery), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// takeFromDelivery removes the bus message of event id from the delivery queue before
// webhook-deliver sees it and returns its body: the rule's target failed it.
func (p *eventPath) takeFromDelivery(t *testing.T, ctx context.Context, id string) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		out, err := p.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(p.delivery), MaxNumberOfMessages: 10,
			WaitTimeSeconds: 1, VisibilityTimeout: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			evt, _, err := awsbus.ParseBusMessage(*m.Body)
			if err == nil && evt.ID == id {
				p.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(p.delivery), ReceiptHandle: m.ReceiptHandle})
				return *m.Body
			}
		}
	}
	t.Fatalf("event %s never reached the delivery queue", id)
	return ""
}

// deadLetter puts body in the rule's dead-letter queue as EventBridge does when a target's
// retry policy runs out.
func (p *eventPath) deadLetter(t *testing.T, ctx context.Context, body string) {
	t.Helper()
	_, err := p.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(p.busDLQ), MessageBody: aws.String(body),
		MessageAttributes: map[string]sqstypes.MessageAttributeValue{
			"ERROR_CODE":     {DataType: aws.String("String"), StringValue: aws.String("SDK_CLIENT_ERROR")},
			"RULE_ARN":       {DataType: aws.String("String"), StringValue: aws.String("arn:aws:events:us-east-1:123456789012:rule/delivery")},
			"RETRY_ATTEMPTS": {DataType: aws.String("String"), StringValue: aws.String("3")},
		}})
	if err != nil {
		t.Fatal(err)
	}
}

func TestEventPathFailuresReplayExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts moto_server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := newEventPath(t, ctx, eventtest.StartMoto(t))
	quietLog := slog.New(slog.NewTextHandler(io.Discard, nil))

	// The customer: one account, one endpoint.
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The receiver is on loopback, which only the local stack allows.
	loopback := egress.Policy{AllowLoopback: true}
	eps := &webhookendpoint.Service{Store: st, Destinations: loopback}
	acct := ident.New("acct")
	hook := newCountingHook(t)
	url := hook.srv.URL
	ep, err := eps.Create(ctx, acct, webhookendpoint.Input{URL: &url})
	if err != nil {
		t.Fatal(err)
	}
	hook.SetSecret(ep.Secret)
	deliver := &awsbus.Handler{
		// One attempt, then the dead-letter queue: the endpoint's outage outlasts the schedule.
		Deliverer:   &delivery.Deliverer{Endpoints: eps, Client: delivery.NewClient(loopback), Schedule: delivery.Schedule{0}},
		Subscribers: eps, Log: st, Queue: p.sqs, QueueURL: p.delivery, DeadLetterQueueURL: p.deliveryDLQ,
		MaxDelay: time.Second, Logger: quietLog,
	}

	// The outbox: events written by the store's own transaction, and between them a record
	// no decoder reads (a broken doc).
	store := dynamo.New(p.ddb, dynamo.Tables{dynamo.Events: p.table})
	var evts []callevent.Event
	write := func() callevent.Event {
		data, _ := json.Marshal(map[string]string{"call_id": ident.New("call")})
		e := callevent.Event{ID: ident.New("evt"), AccountID: acct, Type: callevent.TypeCallEnded,
			CreatedAt: time.Now().UTC().Truncate(time.Millisecond), Data: data}
		put, err := store.EventPut(e)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{put}}); err != nil {
			t.Fatal(err)
		}
		evts = append(evts, e)
		return e
	}
	poisonID := ident.New("evt")
	write()
	if _, err := p.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(p.table), Item: map[string]ddbtypes.AttributeValue{
		"id": &ddbtypes.AttributeValueMemberS{Value: poisonID}, "account_id": &ddbtypes.AttributeValueMemberS{Value: acct},
		"doc": &ddbtypes.AttributeValueMemberS{Value: `{"id": "` + poisonID + `", truncated`}}}); err != nil {
		t.Fatal(err)
	}
	targetFails := write() // the rule's target will fail this one
	write()
	write() // the endpoint will be down for this one

	// 1. The relay over the stream: the poison record goes to the failure queue alone, the
	// others reach the bus.
	bus := &awsbus.Publisher{Client: p.eb, BusName: p.bus}
	recs := p.streamRecords(t, ctx)
	if len(recs) != 5 {
		t.Fatalf("stream has %d records, want 5", len(recs))
	}
	p.runMapping(t, ctx, relay.New(bus, dynamo.EventFromStream, quietLog), recs[:4])

	// 2. The rule's target fails one event: it waits in the rule's dead-letter queue.
	p.deadLetter(t, ctx, p.takeFromDelivery(t, ctx, targetFails.ID))
	p.drain(t, ctx, deliver)

	// 3. The customer's endpoint is down for the last event: after its schedule the
	// delivery is in the delivery dead-letter queue.
	hook.setDown(true)
	p.runMapping(t, ctx, relay.New(bus, dynamo.EventFromStream, quietLog), recs[4:])
	p.drain(t, ctx, deliver)
	hook.setDown(false)

	// 4. The bus refuses puts: a later event's record exhausts its retries and goes to
	// the relay's failure queue.
	late := write()
	all := p.streamRecords(t, ctx)
	p.runMapping(t, ctx, relay.New(&awsbus.Publisher{Client: failingBus{}, BusName: p.bus}, dynamo.EventFromStream, quietLog), all[5:])

	got := hook.counts()
	if len(got) != 2 || got[evts[0].ID] != 1 || got[evts[2].ID] != 1 {
		t.Fatalf("before the replay the customer got %v, want %s and %s once each", got, evts[0].ID, evts[2].ID)
	}

	// Duplicates a replay must not double: a copy of an event already delivered in the
	// rule's dead-letter queue (EventBridge delivers at least once), and the relay's
	// failure of a batch whose first record already went through.
	p.deadLetter(t, ctx, busMessage(t, evts[0]))
	first := recs[0].Change
	dup, _ := json.Marshal(map[string]any{"DDBStreamBatchInfo": map[string]any{"shardId": first.Keys["shard"].String(),
		"startSequenceNumber": first.SequenceNumber, "endSequenceNumber": first.SequenceNumber, "streamArn": p.streamARN, "batchSize": 1}})
	p.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(p.relayFailure), MessageBody: aws.String(string(dup))})

	// 5. The replay, queue by queue, as docs/deploy.md says.
	rp := &replay.Replayer{Queue: p.sqs, Streams: p.streams, Publisher: bus, Decode: dynamo.EventFromStream,
		DeliveryQueueURL: p.delivery, Logger: quietLog}
	reports := map[string]replay.Report{}
	for name, q := range map[string]string{"relay": p.relayFailure, "bus": p.busDLQ, "delivery": p.deliveryDLQ} {
		rep, err := rp.Replay(ctx, q)
		if err != nil {
			t.Fatalf("replay %s: %v", name, err)
		}
		reports[name] = rep
		t.Logf("replay of the %s failure queue: %+v", name, rep)
	}
	p.drain(t, ctx, deliver)

	want := map[string]int{}
	for _, e := range evts {
		want[e.ID] = 1
	}
	if got := hook.counts(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the replay the customer got %v, want every event once: %v", got, want)
	}
	if _, ok := want[late.ID]; !ok {
		t.Fatal("the late event is not among the written ones")
	}
	if errs := hook.Rejected(); len(errs) > 0 {
		t.Errorf("receiver rejected %v", errs)
	}
	if r := reports["relay"]; r.Messages != 3 || r.Undecodable != 1 || r.Kept != 1 || r.Published != 2 {
		t.Errorf("relay failure queue replay = %+v, want 3 messages: the poison kept, the late event and the duplicate published", r)
	}
	if r := reports["bus"]; r.Messages != 2 || r.BusEvents != 2 {
		t.Errorf("rule dead-letter queue replay = %+v, want 2 bus events", r)
	}
	if r := reports["delivery"]; r.Messages != 1 || r.Tasks != 1 {
		t.Errorf("delivery dead-letter queue replay = %+v, want 1 task", r)
	}
	// The poison record is not lost: its failure message stays for an operator.
	out, err := p.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(p.relayFailure),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		t.Fatal(err)
	}
	left := 0
	for _, v := range out.Attributes {
		n, _ := strconv.Atoi(v)
		left += n
	}
	if left != 1 {
		t.Errorf("relay failure queue holds %d messages after the replay, want the poison record's 1", left)
	}
}

// busMessage is the SQS body EventBridge gives the rule's target for evt.
func busMessage(t *testing.T, evt callevent.Event) string {
	t.Helper()
	detail, _ := json.Marshal(awsbus.Envelope{AccountID: evt.AccountID, Event: evt})
	b, _ := json.Marshal(map[string]any{"version": "0", "id": ident.New("eb"), "source": awsbus.Source,
		"detail-type": evt.Type, "detail": json.RawMessage(detail), "time": evt.CreatedAt})
	return string(b)
}
