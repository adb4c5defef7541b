package awsbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
)

// TaskKind marks a queue message that is one delivery's next attempt.
const TaskKind = "bridgeline.delivery"

// Task is a queue message for one delivery: attempt Attempt of the event to one endpoint,
// not before NotBefore. Redeliveries and retries are tasks; fresh events arrive from the
// bus and are fanned out into attempts.
type Task struct {
	Kind       string    `json:"kind"`
	Envelope   Envelope  `json:"envelope"`
	EndpointID string    `json:"endpoint_id"`
	Attempt    int       `json:"attempt"`
	NotBefore  time.Time `json:"not_before"`
	// Exhausted is set on tasks sent to the dead-letter queue: the schedule ran out.
	Exhausted *delivery.Attempt `json:"exhausted,omitempty"`
	// Replay marks a task a replay from a failure queue put back: it is skipped when the
	// event already reached the endpoint, so a replay never doubles a delivery.
	Replay bool `json:"replay,omitempty"`
}

// SQSAPI is the part of the SQS client the handler uses.
type SQSAPI interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// AttemptLog is where attempts are logged (the store's delivery.Log). The log is also how
// a duplicate of an event (EventBridge and the relay deliver at least once, a replay
// may repeat what went through) is told from a new one.
type AttemptLog interface {
	RecordDeliveryAttempt(ctx context.Context, a delivery.Attempt) error
	ListDeliveryAttempts(ctx context.Context, eventID string) ([]delivery.Attempt, error)
}

// MaxDelay is SQS's longest message delay.
const MaxDelay = 15 * time.Minute

// Handler is the webhook-deliver Lambda: it takes the messages of the delivery queue.
type Handler struct {
	Deliverer   *delivery.Deliverer
	Subscribers delivery.Subscribers
	Log         AttemptLog
	Queue       SQSAPI
	QueueURL    string
	// DeadLetterQueueURL receives deliveries whose schedule ran out; "" drops them (the
	// attempts stay logged either way).
	DeadLetterQueueURL string
	// MaxDelay bounds one message delay; 0 means MaxDelay (tests shorten it).
	MaxDelay time.Duration
	Now      func() time.Time
	Logger   *slog.Logger
}

// Handle processes a batch. Messages are handled concurrently; one that fails (a store or
// queue error, not a failed webhook) is reported in BatchItemFailures so SQS offers it
// again and, after the queue's maxReceiveCount, moves it to the dead-letter queue.
func (h *Handler) Handle(ctx context.Context, e events.SQSEvent) (events.SQSEventResponse, error) {
	var mu sync.Mutex
	var resp events.SQSEventResponse
	var wg sync.WaitGroup
	for _, m := range e.Records {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := h.handleMessage(ctx, m.Body); err != nil {
				h.logger().Error("delivery message failed", "message_id", m.MessageId, "err", err)
				mu.Lock()
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return resp, nil
}

func (h *Handler) handleMessage(ctx context.Context, body string) error {
	var probe struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal([]byte(body), &probe); err != nil {
		return fmt.Errorf("decode message: %w", err)
	}
	if probe.Kind == TaskKind {
		var t Task
		if err := json.Unmarshal([]byte(body), &t); err != nil {
			return fmt.Errorf("decode task: %w", err)
		}
		return h.runTask(ctx, t)
	}
	evt, ok, err := ParseBusMessage(body)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("message is neither a bus event nor a delivery task")
	}
	return h.fanOut(ctx, evt)
}

// fanOut makes the first attempt of evt to every subscribed endpoint, concurrently. An
// endpoint the event was already sent to (the attempt log has an attempt) is skipped:
// this is a second copy of the event, and its delivery is under way or done.
func (h *Handler) fanOut(ctx context.Context, evt callevent.Event) error {
	ds, err := delivery.Plan(ctx, h.Subscribers, evt, h.now())
	if err != nil {
		return err
	}
	if len(ds) > 0 {
		seen, err := h.attempted(ctx, evt.ID, false)
		if err != nil {
			return err
		}
		ds = slices.DeleteFunc(ds, func(d delivery.Delivery) bool { return seen[d.EndpointID] })
	}
	errs := make([]error, len(ds))
	var wg sync.WaitGroup
	for i, d := range ds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = h.runTask(ctx, Task{Kind: TaskKind, Envelope: Envelope{AccountID: evt.AccountID, Event: evt},
				EndpointID: d.EndpointID, Attempt: 1, NotBefore: d.NextAttemptAt})
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// attempted returns the endpoints the event has an attempt to (only succeeded ones when
// succeededOnly).
func (h *Handler) attempted(ctx context.Context, eventID string, succeededOnly bool) (map[string]bool, error) {
	as, err := h.Log.ListDeliveryAttempts(ctx, eventID)
	if err != nil {
		return nil, fmt.Errorf("attempts of %s: %w", eventID, err)
	}
	seen := map[string]bool{}
	for _, a := range as {
		if !succeededOnly || a.Outcome == delivery.OutcomeSucceeded {
			seen[a.EndpointID] = true
		}
	}
	return seen, nil
}

// runTask makes the task's attempt when it is due, or puts it back to wait.
func (h *Handler) runTask(ctx context.Context, t Task) error {
	if wait := t.NotBefore.Sub(h.now()); wait >= time.Second {
		return h.enqueue(ctx, t, wait)
	}
	evt := t.Envelope.Open()
	if t.Replay {
		done, err := h.attempted(ctx, evt.ID, true)
		if err != nil {
			return err
		}
		if done[t.EndpointID] {
			h.logger().Info("replay skipped: already delivered", "event_id", evt.ID, "endpoint_id", t.EndpointID)
			return nil
		}
	}
	a, found, err := h.Deliverer.Attempt(ctx, evt, t.EndpointID, t.Attempt)
	if err != nil && a.ID == "" {
		return err
	}
	if !found {
		return nil // endpoint deleted or disabled: the delivery ends here
	}
	h.logger().Info("webhook attempt", "event_id", a.EventID, "endpoint_id", a.EndpointID,
		"attempt", a.Number, "outcome", a.Outcome, "status", a.StatusCode, "error", a.Error, "duration_ms", a.DurationMS)
	if err := h.Log.RecordDeliveryAttempt(ctx, a); err != nil {
		return fmt.Errorf("log attempt: %w", err)
	}
	if err != nil {
		return err
	}
	switch {
	case a.NextAttemptAt != nil:
		next := t
		next.Attempt, next.NotBefore = t.Attempt+1, *a.NextAttemptAt
		return h.enqueue(ctx, next, a.NextAttemptAt.Sub(h.now()))
	case a.Outcome == delivery.OutcomeFailed && h.DeadLetterQueueURL != "":
		dead := t
		dead.Exhausted = &a
		return h.send(ctx, h.DeadLetterQueueURL, dead, 0)
	}
	return nil
}

// enqueue sends the task back to the queue, delayed by wait, or by MaxDelay when the wait
// is longer: the task then comes back early and is re-sent until it is due.
func (h *Handler) enqueue(ctx context.Context, t Task, wait time.Duration) error {
	limit := h.MaxDelay
	if limit <= 0 {
		limit = MaxDelay
	}
	return h.send(ctx, h.QueueURL, t, min(max(wait, 0), limit))
}

func (h *Handler) send(ctx context.Context, url string, t Task, delay time.Duration) error {
	body, err := json.Marshal(t)
	if err != nil {
		return err
	}
	_, err = h.Queue.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl: aws.String(url), MessageBody: aws.String(string(body)),
		DelaySeconds: int32((delay + time.Second - 1) / time.Second),
	})
	if err != nil {
		return fmt.Errorf("send task of %s: %w", t.Envelope.Event.ID, err)
	}
	return nil
}

// Redeliver queues a fresh delivery of evt to each endpoint, due now (the API's
// POST /v1/events/{id}/redeliver on AWS).
func (h *Handler) Redeliver(ctx context.Context, evt callevent.Event, endpointIDs []string) error {
	var errs []error
	for _, id := range endpointIDs {
		errs = append(errs, h.send(ctx, h.QueueURL, Task{Kind: TaskKind,
			Envelope: Envelope{AccountID: evt.AccountID, Event: evt}, EndpointID: id, Attempt: 1, NotBefore: h.now()}, 0))
	}
	return errors.Join(errs...)
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now().UTC()
	}
	return time.Now().UTC()
}

func (h *Handler) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}
