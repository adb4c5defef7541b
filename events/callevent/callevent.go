// Package callevent is Bridgeline's event contract: the envelope every event travels in
// and the Go types of each event's data. State changes that cause an event hand it to the
// store, which writes it in the same transaction (the outbox); delivery reads it from there.
package callevent

import (
	"encoding/json"
	"time"
)

// Event types.
const (
	TypeCallIncoming = "call.incoming"
	TypeCallEnded    = "call.ended"
)

// Event is the envelope: {"id", "type", "created_at", "data"}. AccountID routes it to the
// account's webhook endpoints and is not part of the JSON a customer receives.
type Event struct {
	ID        string          `json:"id"` // evt_...
	AccountID string          `json:"-"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// CallEnded is the data of call.ended.
type CallEnded struct {
	CallID     string     `json:"call_id"`
	SessionID  string     `json:"session_id,omitempty"`
	LineID     string     `json:"line_id,omitempty"`
	Direction  string     `json:"direction"`
	From       string     `json:"from"`
	To         string     `json:"to"`
	Media      string     `json:"media"`
	HandledBy  string     `json:"handled_by"`
	StartedAt  time.Time  `json:"started_at"`
	AnsweredAt *time.Time `json:"answered_at"`
	EndedAt    time.Time  `json:"ended_at"`
	DurationMS int64      `json:"duration_ms"`
	EndReason  string     `json:"end_reason"`
	EndedBy    string     `json:"ended_by"`
}
