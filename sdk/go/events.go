package bridgeline

import (
	"encoding/json"
	"fmt"
	"time"
)

// WebhookEvent is one event, typed: a *CallIncomingEvent, *CallAnsweredEvent,
// *CallEndedEvent, *CallTranscriptEvent, *CallAnalyzedEvent or *RecordingReadyEvent, or an *UnknownEvent for a type newer than this SDK (types are added
// without a version change: acknowledge them). webhook.Parse reads a delivery into one,
// Event.Parse a listed event, and Client.Events yields them. Switch on it with pointer
// cases; a case without the * does not compile, as the value types are not events:
//
//	switch ev := ev.(type) {
//	case *bridgeline.CallIncomingEvent:
//		// ev.Data.Session is the room's session payload
//	case *bridgeline.CallEndedEvent:
//		// ev.Data.EndReason, ev.Data.DurationMs
//	case *bridgeline.UnknownEvent:
//		// acknowledge it
//	}
type WebhookEvent interface {
	// EventID is the event's id, the webhook-id of each of its deliveries: the same on
	// every retry and redelivery, so deduplicate on it.
	EventID() string
	// EventType is the event's type, e.g. "call.ended".
	EventType() string
	webhookEvent()
}

// UnknownEvent is an event of a type this SDK does not know yet, with its data as sent.
type UnknownEvent struct {
	Id        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// EventID is the event's id.
func (e *CallIncomingEvent) EventID() string { return e.Id }

// EventType is "call.incoming".
func (e *CallIncomingEvent) EventType() string { return string(e.Type) }
func (*CallIncomingEvent) webhookEvent()       {}

// EventID is the event's id.
func (e *CallAnsweredEvent) EventID() string { return e.Id }

// EventType is "call.answered".
func (e *CallAnsweredEvent) EventType() string { return string(e.Type) }
func (*CallAnsweredEvent) webhookEvent()       {}

// EventID is the event's id.
func (e *CallEndedEvent) EventID() string { return e.Id }

// EventType is "call.ended".
func (e *CallEndedEvent) EventType() string { return string(e.Type) }
func (*CallEndedEvent) webhookEvent()       {}

// EventID is the event's id.
func (e *CallTranscriptEvent) EventID() string { return e.Id }

// EventType is "call.transcript".
func (e *CallTranscriptEvent) EventType() string { return string(e.Type) }
func (*CallTranscriptEvent) webhookEvent()       {}

// EventID is the event's id.
func (e *CallAnalyzedEvent) EventID() string { return e.Id }

// EventType is "call.analyzed".
func (e *CallAnalyzedEvent) EventType() string { return string(e.Type) }
func (*CallAnalyzedEvent) webhookEvent()       {}

// EventID is the event's id.
func (e *RecordingReadyEvent) EventID() string { return e.Id }

// EventType is "recording.ready".
func (e *RecordingReadyEvent) EventType() string { return string(e.Type) }
func (*RecordingReadyEvent) webhookEvent()       {}

// EventID is the event's id.
func (e *UnknownEvent) EventID() string { return e.Id }

// EventType is the event's type.
func (e *UnknownEvent) EventType() string { return e.Type }
func (*UnknownEvent) webhookEvent()       {}

// Parse reads the event into its type's struct, as webhook.Parse reads a delivery.
func (e Event) Parse() (WebhookEvent, error) {
	t, err := e.Discriminator()
	if err != nil {
		return nil, fmt.Errorf("bridgeline: parse event: %w", err)
	}
	if t == "" {
		return nil, fmt.Errorf("bridgeline: parse event: no type")
	}
	var v WebhookEvent
	switch t {
	case string(EventTypeCallIncoming):
		v = &CallIncomingEvent{}
	case string(EventTypeCallAnswered):
		v = &CallAnsweredEvent{}
	case string(EventTypeCallEnded):
		v = &CallEndedEvent{}
	case string(EventTypeCallTranscript):
		v = &CallTranscriptEvent{}
	case string(EventTypeCallAnalyzed):
		v = &CallAnalyzedEvent{}
	case string(EventTypeRecordingReady):
		v = &RecordingReadyEvent{}
	default:
		v = &UnknownEvent{}
	}
	raw, err := e.MarshalJSON()
	if err == nil {
		err = json.Unmarshal(raw, v)
	}
	if err != nil {
		return nil, fmt.Errorf("bridgeline: parse %s event: %w", t, err)
	}
	return v, nil
}
