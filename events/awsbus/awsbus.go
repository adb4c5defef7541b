// Package awsbus is the AWS shape of event delivery: a Publisher puts outbox events on an
// EventBridge bus, a rule routes them to an SQS queue, and Handler (the webhook-deliver
// Lambda) fans each one out to the account's endpoints with the same delivery.Deliverer
// the local worker uses. Retries wait in the queue as delayed messages; SQS delays at most
// 15 minutes, so a longer wait is a chain of delayed re-sends. A delivery whose schedule
// runs out goes to the dead-letter queue, beside messages SQS itself gives up on.
package awsbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/bridgeline/bridgeline/events/callevent"
)

// Source is the EventBridge source of Bridgeline's events; the rule matches on it.
const Source = "bridgeline.events"

// RulePattern is the event pattern of the rule that routes events to the delivery queue,
// as template.yaml declares it.
const RulePattern = `{"source":["` + Source + `"]}`

// Envelope is how an event travels on the bus and in the queue: the customer's envelope
// plus the account it belongs to.
type Envelope struct {
	AccountID string          `json:"account_id"`
	Event     callevent.Event `json:"event"`
}

// Open returns the event with its account filled in.
func (e Envelope) Open() callevent.Event {
	evt := e.Event
	evt.AccountID = e.AccountID
	return evt
}

// EventBridgeAPI is the part of the EventBridge client a Publisher uses.
type EventBridgeAPI interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// Publisher puts events on the bus. On AWS the outbox relay (the events table's stream)
// calls it; an error means some events were not put and the batch must be retried.
type Publisher struct {
	Client  EventBridgeAPI
	BusName string
}

// putEventsMax is PutEvents' entry limit per call.
const putEventsMax = 10

// Publish puts every event on the bus. call.incoming never goes through the bus.
func (p *Publisher) Publish(ctx context.Context, evts []callevent.Event) error {
	var entries []ebtypes.PutEventsRequestEntry
	for _, evt := range evts {
		if evt.Type == callevent.TypeCallIncoming {
			continue
		}
		detail, err := json.Marshal(Envelope{AccountID: evt.AccountID, Event: evt})
		if err != nil {
			return fmt.Errorf("encode %s: %w", evt.ID, err)
		}
		entries = append(entries, ebtypes.PutEventsRequestEntry{
			EventBusName: aws.String(p.BusName), Source: aws.String(Source),
			DetailType: aws.String(evt.Type), Detail: aws.String(string(detail)),
			Time: aws.Time(evt.CreatedAt), Resources: []string{},
		})
	}
	var failed []error
	for len(entries) > 0 {
		batch := entries[:min(putEventsMax, len(entries))]
		entries = entries[len(batch):]
		out, err := p.Client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: batch})
		if err != nil {
			return fmt.Errorf("put events: %w", err)
		}
		if out.FailedEntryCount > 0 {
			for i, r := range out.Entries {
				if r.ErrorCode != nil {
					failed = append(failed, fmt.Errorf("put %s: %s", *batch[i].DetailType, aws.ToString(r.ErrorCode)))
				}
			}
		}
	}
	return errors.Join(failed...)
}

// ParseBusMessage reads the body of an SQS message the rule routed: an EventBridge event
// whose detail is an Envelope.
func ParseBusMessage(body string) (callevent.Event, bool, error) {
	var msg struct {
		Source     string          `json:"source"`
		DetailType string          `json:"detail-type"`
		Detail     json.RawMessage `json:"detail"`
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil || msg.Source != Source {
		return callevent.Event{}, false, err
	}
	var env Envelope
	if err := json.Unmarshal(msg.Detail, &env); err != nil {
		return callevent.Event{}, true, fmt.Errorf("decode detail: %w", err)
	}
	return env.Open(), true, nil
}
