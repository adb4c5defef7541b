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
	TypeCallIncoming = "call.incoming" // posted synchronously; the customer's answer decides the call
	TypeCallAnswered = "call.answered"
	TypeCallEnded    = "call.ended"
	// TypeCallTranscript is one final turn of an assistant call, either side, as it
	// happens; written only while an enabled endpoint of the account subscribes to it.
	TypeCallTranscript = "call.transcript"
	// TypeCallAnalyzed is an assistant call's post-call analysis, final, after its
	// call.ended; only for calls whose assistant version asks for an analysis.
	TypeCallAnalyzed = "call.analyzed"
	// TypeRecordingReady is a recorded call's file, stored: GET /v1/calls/{id}/recording
	// hands out its URL from then on. Once per call, whenever the file is stored.
	TypeRecordingReady = "recording.ready"
	// TypeCampaignCompleted is a campaign all of whose recipients reached a final
	// status, with the counts per status (shared/campaign).
	TypeCampaignCompleted = "campaign.completed"
)

// Types are every event type, the ones a webhook endpoint may subscribe to.
var Types = []string{TypeCallIncoming, TypeCallAnswered, TypeCallEnded, TypeCallTranscript, TypeCallAnalyzed,
	TypeRecordingReady, TypeCampaignCompleted}

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
	// Decision and DecisionSource are set for inbound calls on customer_decides lines.
	Decision       string `json:"decision,omitempty"`
	DecisionSource string `json:"decision_source,omitempty"`
	// Metadata is the call's metadata as the call ended ({} for none).
	Metadata map[string]string `json:"metadata"`
	// SessionMetadata is its session's metadata ({} for none); absent, like session_id,
	// for a call that never had a session.
	SessionMetadata map[string]string `json:"session_metadata,omitempty"`
	// CampaignID and RecipientID name the campaign and recipient a campaign's call
	// dialled; absent for any other call.
	CampaignID  string `json:"campaign_id,omitempty"`
	RecipientID string `json:"recipient_id,omitempty"`
	// AMD is the answering-machine detection's decision, on an outbound assistant call
	// that asked for it and got one before it ended; absent otherwise.
	AMD *AMD `json:"amd,omitempty"`
}

// AMD is what answered an outbound call, as the answering-machine detection decided:
// result human, voicemail, screening, silence or unknown; when, and how long after the
// answer; and whether the voicemail message was left.
type AMD struct {
	Result      string    `json:"result"`
	DecidedAt   time.Time `json:"decided_at"`
	DecisionMS  int64     `json:"decision_ms"`
	MessageLeft bool      `json:"message_left"`
}

// CampaignCompleted is the data of campaign.completed: every recipient of the campaign
// reached a final status. Counts has every recipient status (pending and calling are 0).
type CampaignCompleted struct {
	CampaignID  string            `json:"campaign_id"`
	Name        string            `json:"name"`
	AssistantID string            `json:"assistant_id"`
	VersionID   string            `json:"version_id"`
	LineID      string            `json:"line_id"`
	Recipients  int               `json:"recipients"`
	Counts      map[string]int    `json:"counts"`
	StartedAt   time.Time         `json:"started_at"`
	CompletedAt time.Time         `json:"completed_at"`
	Metadata    map[string]string `json:"metadata"`
}

// Session is the session payload: what a client needs to join the call's room.
type Session struct {
	SessionID        string `json:"session_id"`
	CallID           string `json:"call_id"`
	RTCURL           string `json:"rtc_url"`
	ParticipantToken string `json:"participant_token"`
	// ParticipantIdentity is the token's LiveKit identity (customer-...), its own.
	ParticipantIdentity string    `json:"participant_identity,omitempty"`
	ExpiresAt           time.Time `json:"expires_at"`
}

// CallIncoming is the data of call.incoming, sent for an inbound call on a
// customer_decides line. Session is valid at once (the room exists while the call rings);
// the caller joins it only once the call is accepted.
type CallIncoming struct {
	CallID   string    `json:"call_id"`
	LineID   string    `json:"line_id"`
	From     string    `json:"from"`
	To       string    `json:"to"`
	Media    string    `json:"media"`
	AnswerBy time.Time `json:"answer_by"`
	Session  Session   `json:"session"`
	// Metadata is the call's metadata ({} for none: an inbound call has none until the
	// customer sets some); LineMetadata is the line's, as the call arrived.
	Metadata     map[string]string `json:"metadata"`
	LineMetadata map[string]string `json:"line_metadata"`
}

// CallAnswered is the data of call.answered: the remote party is in the room (outbound)
// or the call was accepted (inbound).
type CallAnswered struct {
	CallID         string    `json:"call_id"`
	SessionID      string    `json:"session_id,omitempty"`
	LineID         string    `json:"line_id,omitempty"`
	Direction      string    `json:"direction"`
	HandledBy      string    `json:"handled_by"`
	AnsweredAt     time.Time `json:"answered_at"`
	Decision       string    `json:"decision,omitempty"`
	DecisionSource string    `json:"decision_source,omitempty"`
	// Metadata is the call's metadata ({} for none).
	Metadata map[string]string `json:"metadata"`
}

// CallTranscript is the data of call.transcript: one final turn of an assistant call,
// the caller's or the assistant's, sent as the turn ends. Sequence numbers a call's
// turns in the order they became final (1, 2, ...): deliveries may arrive out of order,
// and start_ms orders them as spoken. The greeting is the assistant's first turn.
type CallTranscript struct {
	CallID    string `json:"call_id"`
	SessionID string `json:"session_id,omitempty"`
	LineID    string `json:"line_id,omitempty"`
	Direction string `json:"direction"`
	Sequence  int    `json:"sequence"`
	Speaker   string `json:"speaker"` // caller | assistant
	// Text is what was said; an interrupted assistant turn holds only what the caller heard.
	Text        string `json:"text"`
	StartMS     int64  `json:"start_ms"` // offsets from answer
	EndMS       int64  `json:"end_ms"`
	Interrupted bool   `json:"interrupted"`
	// Backchannel marks caller words over the assistant that did not take the floor.
	Backchannel bool `json:"backchannel,omitempty"`
	// Metadata is the call's metadata ({} for none).
	Metadata map[string]string `json:"metadata"`
}

// CallAnalyzed is the data of call.analyzed: the analysis the assistant version asked
// for, final. Status completed carries what was asked (summary, structured_data matching
// the version's schema, success against its criteria); failed and skipped carry error,
// the reason, and no result.
type CallAnalyzed struct {
	CallID      string `json:"call_id"`
	SessionID   string `json:"session_id,omitempty"`
	LineID      string `json:"line_id,omitempty"`
	Direction   string `json:"direction"`
	AssistantID string `json:"assistant_id"`
	VersionID   string `json:"version_id"`
	Status      string `json:"status"` // completed | failed | skipped
	// Summary, StructuredData and Success are null when not asked for or not completed.
	Summary        *string         `json:"summary"`
	StructuredData json.RawMessage `json:"structured_data"`
	Success        *bool           `json:"success"`
	Error          *string         `json:"error"`
	// Metadata is the call's metadata ({} for none).
	Metadata map[string]string `json:"metadata"`
}

// RecordingReady is the data of recording.ready: a recorded call's file is stored. It
// carries what the file holds, not where it is: GET /v1/calls/{id}/recording hands out a
// URL of at most 15 minutes, for as long as the recording is kept.
type RecordingReady struct {
	CallID     string `json:"call_id"`
	SessionID  string `json:"session_id,omitempty"`
	LineID     string `json:"line_id,omitempty"`
	Direction  string `json:"direction"`
	DurationMS int64  `json:"duration_ms"`
	SizeBytes  int64  `json:"size_bytes"`
	Format     string `json:"format"`
	// Metadata is the call's metadata ({} for none).
	Metadata map[string]string `json:"metadata"`
}

// Answer is the customer's decision on a call.incoming, in the webhook response body or
// in POST /v1/calls/{id}/answer.
type Answer struct {
	Action string `json:"action"` // accept | decline | assistant
	// Variables are the call's values for the assistant's {{name}} placeholders, with
	// action assistant only.
	Variables map[string]string `json:"variables,omitempty"`
}

// Answer actions.
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	// ActionAssistant hands the call to the line's assistant.
	ActionAssistant = "assistant"
)
