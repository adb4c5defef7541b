package awsbus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/bridgeline/bridgeline/events/awsbus"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/events/webhook"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

type awsClients struct {
	eb  *eventbridge.Client
	sqs *sqs.Client
}

func newClients(endpoint string) awsClients {
	creds := credentials.NewStaticCredentialsProvider("test", "test", "")
	return awsClients{
		eb:  eventbridge.New(eventbridge.Options{Region: "us-east-1", Credentials: creds, BaseEndpoint: aws.String(endpoint)}),
		sqs: sqs.New(sqs.Options{Region: "us-east-1", Credentials: creds, BaseEndpoint: aws.String(endpoint)}),
	}
}

// infra is what template.yaml declares for delivery: the bus, the rule with its event
// pattern, the queue as its target and the dead-letter queue behind it.
type infra struct {
	bus, queueURL, dlqURL string
}

func createInfra(t *testing.T, ctx context.Context, c awsClients) infra {
	t.Helper()
	tpl := readDeliveryTemplate(t)
	dlq, err := c.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("bridgeline-webhook-dlq"),
		Attributes: map[string]string{"MessageRetentionPeriod": tpl.DLQRetentionPeriod}})
	if err != nil {
		t.Fatal(err)
	}
	dlqARN := queueARN(t, ctx, c, *dlq.QueueUrl)
	redrive, _ := json.Marshal(map[string]any{"deadLetterTargetArn": dlqARN, "maxReceiveCount": tpl.MaxReceiveCount})
	q, err := c.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("bridgeline-webhook-deliver"),
		Attributes: map[string]string{"VisibilityTimeout": tpl.VisibilityTimeout, "MessageRetentionPeriod": tpl.RetentionPeriod,
			"RedrivePolicy": string(redrive)}})
	if err != nil {
		t.Fatal(err)
	}
	bus := "bridgeline"
	if _, err := c.eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String(bus)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("bridgeline-webhook-deliver"),
		EventBusName: aws.String(bus), EventPattern: aws.String(tpl.RulePattern), State: ebtypes.RuleStateEnabled}); err != nil {
		t.Fatal(err)
	}
	out, err := c.eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("bridgeline-webhook-deliver"),
		EventBusName: aws.String(bus),
		Targets:      []ebtypes.Target{{Id: aws.String("deliver-queue"), Arn: aws.String(queueARN(t, ctx, c, *q.QueueUrl))}}})
	if err != nil || out.FailedEntryCount > 0 {
		t.Fatalf("PutTargets: %v, %d failed", err, out.FailedEntryCount)
	}
	return infra{bus: bus, queueURL: *q.QueueUrl, dlqURL: *dlq.QueueUrl}
}

func queueARN(t *testing.T, ctx context.Context, c awsClients, url string) string {
	t.Helper()
	out, err := c.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
}

// poll is the Lambda event source mapping: receive a batch, hand it to the handler as an
// SQSEvent, delete what it did not report failed.
func poll(t *testing.T, ctx context.Context, c awsClients, url string, h *awsbus.Handler) int {
	t.Helper()
	out, err := c.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url),
		MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
	if err != nil {
		t.Fatal(err)
	}
	var evt events.SQSEvent
	for _, m := range out.Messages {
		evt.Records = append(evt.Records, events.SQSMessage{MessageId: *m.MessageId, ReceiptHandle: *m.ReceiptHandle,
			Body: *m.Body, EventSource: "aws:sqs"})
	}
	if len(evt.Records) == 0 {
		return 0
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
			t.Errorf("handler reported message %s failed", *m.MessageId)
			continue
		}
		if _, err := c.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
	}
	return len(evt.Records)
}

// hook is a customer endpoint answering by a per-request rule.
type hook struct {
	srv     *httptest.Server
	mu      sync.Mutex
	ids     []string
	okIDs   map[string]bool
	errs    []error
	secret  string
	respond func(n int) int
	// bodies and headers are every request's, in order.
	bodies  [][]byte
	headers []http.Header
}

func newHook(t *testing.T, respond func(n int) int) *hook {
	h := &hook{okIDs: map[string]bool{}, respond: respond}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		if err := webhook.Verify(h.secret, r.Header, body); err != nil {
			h.errs = append(h.errs, err)
		}
		id := r.Header.Get(webhook.HeaderID)
		h.ids = append(h.ids, id)
		h.bodies, h.headers = append(h.bodies, body), append(h.headers, r.Header.Clone())
		status := h.respond(len(h.ids))
		if status < 300 {
			h.okIDs[id] = true
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// Events put on a real (moto) EventBridge bus reach the queue through the rule, and the
// webhook-deliver handler delivers them: first tries, retries as delayed messages
// (including waits longer than one message delay), and exhausted deliveries to the DLQ.
func TestEventBridgeRuleSQSDeliver(t *testing.T) {
	if testing.Short() {
		t.Skip("starts moto_server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := newClients(eventtest.StartMoto(t))
	inf := createInfra(t, ctx, c)

	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eps := &webhookendpoint.Service{Store: st, Destinations: egress.Policy{AllowLoopback: true}}
	acct := ident.New("acct")
	ok := newHook(t, func(int) int { return 200 })
	flaky := newHook(t, func(n int) int { // first request of each event fails
		if n <= 2 {
			return 500
		}
		return 200
	})
	down := newHook(t, func(int) int { return 503 })
	endpoints := map[*hook]webhookendpoint.Endpoint{}
	for _, h := range []*hook{ok, flaky, down} {
		url := h.srv.URL
		ep, err := eps.Create(ctx, acct, webhookendpoint.Input{URL: &url})
		if err != nil {
			t.Fatal(err)
		}
		h.secret, endpoints[h] = ep.Secret, ep
	}
	h := &awsbus.Handler{
		// A short schedule: the second attempt after 1 s, the third after 3 s, which is
		// longer than MaxDelay and so takes a chain of re-sent messages.
		Deliverer:   &delivery.Deliverer{Endpoints: eps, Client: delivery.NewClient(egress.Policy{AllowLoopback: true}), Schedule: delivery.Schedule{0, time.Second, 3 * time.Second}},
		Subscribers: eps, Log: st, Queue: c.sqs, QueueURL: inf.queueURL, DeadLetterQueueURL: inf.dlqURL,
		MaxDelay: time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}

	now := time.Now().UTC().Truncate(time.Millisecond)
	var want []callevent.Event
	for i, typ := range []string{callevent.TypeCallEnded, callevent.TypeCallAnswered} {
		data, _ := json.Marshal(map[string]any{"call_id": fmt.Sprintf("call_%d", i)})
		want = append(want, callevent.Event{ID: ident.New("evt"), AccountID: acct, Type: typ, CreatedAt: now, Data: data})
	}
	incoming := callevent.Event{ID: ident.New("evt"), AccountID: acct, Type: callevent.TypeCallIncoming, CreatedAt: now, Data: json.RawMessage(`{}`)}
	pub := &awsbus.Publisher{Client: c.eb, BusName: inf.bus}
	if err := pub.Publish(ctx, append(want, incoming)); err != nil {
		t.Fatal(err)
	}

	downAttempts := func() int {
		n := 0
		for _, e := range want {
			as, _ := st.ListDeliveryAttempts(ctx, e.ID)
			for _, a := range as {
				if a.EndpointID == endpoints[down].ID {
					n++
				}
			}
		}
		return n
	}
	done := func() bool {
		ok.mu.Lock()
		flaky.mu.Lock()
		defer ok.mu.Unlock()
		defer flaky.mu.Unlock()
		return len(ok.okIDs) == 2 && len(flaky.okIDs) == 2 && downAttempts() == 6
	}
	for deadline := time.Now().Add(60 * time.Second); !done(); {
		if time.Now().After(deadline) {
			t.Fatalf("not delivered in time: ok %v, flaky %v, down attempts %d", ok.ids, flaky.ids, downAttempts())
		}
		poll(t, ctx, c, inf.queueURL, h)
	}

	for _, hk := range []*hook{ok, flaky, down} {
		hk.mu.Lock()
		for _, err := range hk.errs {
			t.Errorf("receiver Verify: %v", err)
		}
		for _, id := range hk.ids {
			if id != want[0].ID && id != want[1].ID {
				t.Errorf("webhook-id %q is not one of the events put (call.incoming must not travel the bus)", id)
			}
		}
		hk.mu.Unlock()
	}
	if len(ok.ids) != 2 {
		t.Errorf("healthy endpoint got %d requests, want 2", len(ok.ids))
	}
	if len(flaky.ids) != 4 {
		t.Errorf("flaky endpoint got %d requests, want 4 (a failure and a retry per event)", len(flaky.ids))
	}
	for _, e := range want {
		as, err := st.ListDeliveryAttempts(ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		byEndpoint := map[string][]int{}
		for _, a := range as {
			byEndpoint[a.EndpointID] = append(byEndpoint[a.EndpointID], a.Number)
		}
		if got := byEndpoint[endpoints[down].ID]; fmt.Sprint(got) != "[1 2 3]" {
			t.Errorf("attempts of %s to the failing endpoint = %v, want [1 2 3]", e.ID, got)
		}
		if got := byEndpoint[endpoints[flaky].ID]; fmt.Sprint(got) != "[1 2]" {
			t.Errorf("attempts of %s to the flaky endpoint = %v, want [1 2]", e.ID, got)
		}
	}

	// The exhausted deliveries wait in the dead-letter queue, one per event.
	dead := map[string]bool{}
	for deadline := time.Now().Add(10 * time.Second); len(dead) < 2 && time.Now().Before(deadline); {
		out, err := c.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(inf.dlqURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			var task awsbus.Task
			if err := json.Unmarshal([]byte(*m.Body), &task); err != nil {
				t.Fatal(err)
			}
			if task.Exhausted == nil || task.Exhausted.Number != 3 || task.EndpointID != endpoints[down].ID {
				t.Errorf("dead letter = %s, want the failing endpoint's exhausted third attempt", *m.Body)
			}
			dead[task.Envelope.Event.ID] = true
		}
	}
	if len(dead) != 2 {
		t.Errorf("dead-letter queue holds %d events, want 2", len(dead))
	}

	// POST /v1/events/{id}/redeliver on AWS: a task on the queue, delivered with the same id.
	if err := h.Redeliver(ctx, want[0], []string{endpoints[ok].ID}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		ok.mu.Lock()
		n := len(ok.ids)
		last := ok.ids[n-1]
		ok.mu.Unlock()
		if n == 3 {
			if last != want[0].ID {
				t.Errorf("redelivery webhook-id = %q, want %q", last, want[0].ID)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("redelivery never arrived")
		}
		poll(t, ctx, c, inf.queueURL, h)
	}
}
