package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/bridgeline/bridgeline/events/awsbus"
	"github.com/bridgeline/bridgeline/events/awsbus/replay"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/events/eventtest"
)

// `bridgeline admin events replay` moves a dead-letter queue's messages to the delivery
// queue on a real (moto) SQS: bus events as they are, exhausted deliveries as fresh
// attempts marked as replays.
func TestAdminEventsReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("starts moto_server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	moto := eventtest.StartMoto(t)
	t.Setenv("AWS_ENDPOINT_URL", moto)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	c := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(moto),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	queue := func(name string) string {
		out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		return *out.QueueUrl
	}
	dlq, deliveryQ := queue("dlq"), queue("delivery")

	evt := callevent.Event{ID: "evt_1", AccountID: "acct_1", Type: callevent.TypeCallEnded,
		CreatedAt: time.Now().UTC().Truncate(time.Second), Data: json.RawMessage(`{}`)}
	detail, _ := json.Marshal(awsbus.Envelope{AccountID: evt.AccountID, Event: evt})
	busBody, _ := json.Marshal(map[string]any{"source": awsbus.Source, "detail-type": evt.Type, "detail": json.RawMessage(detail)})
	task, _ := json.Marshal(awsbus.Task{Kind: awsbus.TaskKind, Envelope: awsbus.Envelope{AccountID: evt.AccountID, Event: evt},
		EndpointID: "we_1", Attempt: 7, Exhausted: &delivery.Attempt{Number: 7, Outcome: delivery.OutcomeFailed}})
	for _, b := range []string{string(busBody), string(task)} {
		if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(dlq), MessageBody: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}

	var out bytes.Buffer
	if err := adminTo(ctx, []string{"events", "replay", "--queue", dlq, "--to", deliveryQ}, &out); err != nil {
		t.Fatalf("replay: %v\n%s", err, out.String())
	}
	var rep replay.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.Messages != 2 || rep.BusEvents != 1 || rep.Tasks != 1 {
		t.Fatalf("replay printed %s (%v), want 2 messages: 1 bus event, 1 task", out.String(), err)
	}

	got, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(deliveryQ), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
	if err != nil {
		t.Fatal(err)
	}
	var sawBus, sawTask bool
	for _, m := range got.Messages {
		var tk awsbus.Task
		json.Unmarshal([]byte(*m.Body), &tk)
		switch {
		case *m.Body == string(busBody):
			sawBus = true
		case tk.Kind == awsbus.TaskKind:
			sawTask = true
			if tk.Attempt != 1 || !tk.Replay || tk.Exhausted != nil || tk.EndpointID != "we_1" {
				t.Errorf("replayed task = %+v, want a fresh first attempt to we_1 marked as a replay", tk)
			}
		}
	}
	if !sawBus || !sawTask {
		t.Errorf("delivery queue got %d messages (bus event %v, task %v), want both", len(got.Messages), sawBus, sawTask)
	}
	left, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(dlq), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
	if err != nil || len(left.Messages) != 0 {
		t.Errorf("dead-letter queue still holds %d messages (%v), want none", len(left.Messages), err)
	}
}
