// Package call holds call records: one per call on a calling platform, inbound or
// outbound, written when the call starts and completed when it ends, with who handled it,
// the decision of a customer_decides line, and an assistant call's transcript and
// metrics.
package call

import (
	"context"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/metadata"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/usage"
)

// Directions.
const (
	Inbound  = "inbound"
	Outbound = "outbound"
)

// Statuses: a call rings, is answered (active) and ends; or it fails to connect, or an
// inbound call is declined.
const (
	StatusRinging  = "ringing"
	StatusActive   = "active"
	StatusEnded    = "ended"
	StatusFailed   = "failed"
	StatusDeclined = "declined"
)

// Who handles a call.
const (
	HandledByAssistant = "assistant"
	HandledByCustomer  = "customer"
	HandledByNone      = "none"
)

// End reasons. The first seven are a session's too (API.md); the rest belong to inbound
// calls and to assistant calls.
const (
	ReasonDeleted         = "deleted"          // DELETE /v1/sessions/{id}
	ReasonRemoteHangup    = "remote_hangup"    // the platform party hung up
	ReasonParticipantLeft = "participant_left" // the customer's client left the room
	ReasonNoAnswer        = "no_answer"
	ReasonBusy            = "busy"
	ReasonPlatformError   = "platform_error"
	ReasonMaxDuration     = "max_duration"
	ReasonLineDisabled    = "line_disabled"    // inbound on a disabled line
	ReasonNoAssistant     = "no_assistant"     // inbound on an assistant line with none usable
	ReasonDeclined        = "declined"         // customer_decides: the customer declined
	ReasonDecisionTimeout = "decision_timeout" // customer_decides: no answer in time
	ReasonMediaFailed     = "media_failed"     // the persona worker could not verify media
	ReasonAssistantError  = "assistant_error"  // the persona worker failed or shut down
	ReasonRoomClosed      = "room_closed"      // LiveKit closed the room (everyone left)
	// ReasonAssistantHangup: the assistant finished the conversation and hung up.
	ReasonAssistantHangup = "assistant_hangup"
	// ReasonAssistantUnavailable: no persona worker took the call in time (none free).
	ReasonAssistantUnavailable = "assistant_unavailable"
	// ReasonConcurrentSessionLimit: an inbound call declined because its account had as
	// many live sessions as its limit allows.
	ReasonConcurrentSessionLimit = "concurrent_session_limit"
	// ReasonTransferred: the call was handed to another number or SIP URI (REFER); the
	// record's Transfer names it.
	ReasonTransferred = "transferred"
	// ReasonJoinTimeout: a web call whose client never joined its room in time.
	ReasonJoinTimeout = "join_timeout"
	// ReasonSilenceTimeout: the caller stayed silent for the version's
	// idle_timeout_seconds, was asked whether they were still there, and said nothing.
	ReasonSilenceTimeout = "silence_timeout"
)

// Transfer statuses.
const (
	TransferPending   = "pending"   // asked of the platform; the destination rings
	TransferCompleted = "completed" // the destination answered: the call left Bridgeline
	TransferFailed    = "failed"    // refused or unanswered: the call went on
)

// Transfer is the hand-over of a call to another party (POST /v1/calls/{id}/transfer or
// the assistant's transfer_call tool).
type Transfer struct {
	To          string    `json:"to"`
	Status      string    `json:"status"`
	RequestedAt time.Time `json:"requested_at"`
	// By is who asked: customer (the API) or assistant.
	By string `json:"by"`
	// Failure is why a failed transfer failed, for the record.
	Failure string `json:"failure,omitempty"`
	// ReportedError is the error the platform reported for a transfer that completed
	// anyway (platform.TransferReported): the party's leg left for the destination
	// after it, or the platform lost the far end's answer to the REFER. Empty for a
	// clean transfer.
	ReportedError string `json:"reported_error,omitempty"`
}

// Who ended a call.
const (
	EndedByCustomer  = "customer"  // the API (DELETE) or the customer's client leaving
	EndedByRemote    = "remote"    // the platform party: hang-up, no answer, busy
	EndedByAssistant = "assistant" // the persona worker
	EndedBySystem    = "system"    // Bridgeline: line rules, timeouts, failures
)

// What became of an assistant call's final worker report (Call.AssistantReport). The
// record of a call no assistant handled has none.
const (
	// ReportPending: the call is live, or it ended and call.ended waits for the report.
	// Stored as "".
	ReportPending = "pending"
	// ReportReceived: the worker's final (ended) report is in: the transcript and the
	// metrics are complete.
	ReportReceived = "received"
	// ReportMissing: call.ended went out without the report: no worker took the call, or
	// its report did not come within the wait after the end. A report that comes later
	// still fills in the record and makes it received.
	ReportMissing = "missing"
)

// Call is the stored call record.
type Call struct {
	ID        string `json:"id"`
	AccountID string `json:"account_id"`
	Direction string `json:"direction"`
	LineID    string `json:"line_id"`
	From      string `json:"from"`
	To        string `json:"to"`
	Media     string `json:"media"`
	Status    string `json:"status"`
	HandledBy string `json:"handled_by"`

	AssistantID string `json:"assistant_id"`
	VersionID   string `json:"version_id"`
	SessionID   string `json:"session_id"`

	// CampaignID and RecipientID name the campaign (shared/campaign) and the recipient
	// the call dialled; empty for any other call.
	CampaignID  string `json:"campaign_id,omitempty"`
	RecipientID string `json:"recipient_id,omitempty"`

	// Platform and PlatformCallID name the call on its calling platform.
	Platform       string `json:"platform"`
	PlatformCallID string `json:"platform_call_id"`
	// OnNetwork: the call was dialled on a real telephone network (an outbound call on a
	// platform that is not the sim), so its length counts against the account's daily
	// outbound minutes (usage.Counts.OutboundDurationMS). Internal: not in the API's object.
	OnNetwork bool `json:"on_network,omitempty"`

	StartedAt  time.Time  `json:"started_at"`
	AnsweredAt *time.Time `json:"answered_at"`
	EndedAt    *time.Time `json:"ended_at"`
	DurationMS *int64     `json:"duration_ms"`
	EndReason  string     `json:"end_reason"`
	EndedBy    string     `json:"ended_by"`

	Decision       string `json:"decision"`
	DecisionSource string `json:"decision_source"`

	Transcript []persona.Turn   `json:"transcript"`
	Metrics    *persona.Metrics `json:"metrics"`
	// AssistantReport is ReportReceived or ReportMissing once known; "" is pending.
	AssistantReport string `json:"assistant_report,omitempty"`

	// AMD is the answering-machine detection's decision on an outbound assistant call
	// that asked for it (persona.ReportAMD); nil for any other call, or before it.
	AMD *persona.AMDResult `json:"amd,omitempty"`

	// Transfer is the call's latest transfer, if it had one.
	Transfer *Transfer `json:"transfer,omitempty"`

	// Recording is set when the call's assistant records it (recording.go).
	Recording *Recording `json:"recording,omitempty"`

	// Usage is set when the call ends (usage.go); the worker's counts come with its
	// ended report, which may come after.
	Usage *Usage `json:"usage,omitempty"`
	// UsageCounted is what the account's daily usage (shared/usage) holds of this call;
	// nil before the first write that counted it. Internal: not in the API's object.
	UsageCounted *usage.Counts `json:"usage_counted,omitempty"`
	// ResponseSamplesMS are the replies' response times of the worker's final report
	// (persona.Report.ResponseSamplesMS), kept until the version's quality aggregate
	// counts them; QualityCounted says it has counted the call (quality.go). Internal:
	// not in the API's object.
	ResponseSamplesMS []int64 `json:"response_samples_ms,omitempty"`
	QualityCounted    bool    `json:"quality_counted,omitempty"`

	// Analysis is the post-call analysis of an assistant call whose version asks for one
	// (analysis.go); nil for any other call.
	Analysis *Analysis `json:"analysis,omitempty"`

	// Metadata is the customer's key-value pairs (shared/metadata): a copy of its
	// session's for an outbound call, none at first for an inbound one.
	Metadata metadata.Metadata `json:"metadata,omitempty"`

	// Revision increases on every write; writes are conditional on the revision read.
	Revision int64 `json:"revision"`

	// Variables are the values an assistant call's greeting and system prompt were
	// rendered with: for each placeholder name the version uses, the call's own value (a
	// session's or a call.incoming answer's) or else the line's default; names with
	// neither are absent (their placeholders rendered their defaults).
	Variables map[string]string `json:"variables,omitempty"`

	// RedactedAt is when the call's data was deleted (Redact): DELETE /v1/calls/{id} or
	// the account's retention. Nil while the record keeps it.
	RedactedAt *time.Time `json:"redacted_at,omitempty"`
}

// Over reports whether the call reached a final status.
func (c Call) Over() bool {
	switch c.Status {
	case StatusEnded, StatusFailed, StatusDeclined:
		return true
	}
	return false
}

// Answer marks the call answered at t.
func (c *Call) Answer(t time.Time) {
	c.Status = StatusActive
	c.AnsweredAt = &t
}

// End completes the call with a final status, once. It reports whether it changed the
// call, and returns the call.ended event to write with the change.
func (c *Call) End(status, reason, by string, t time.Time, newEventID func() string) (callevent.Event, bool) {
	if c.Over() {
		return callevent.Event{}, false
	}
	c.Status, c.EndReason, c.EndedBy, c.EndedAt = status, reason, by, &t
	var d int64
	if c.AnsweredAt != nil {
		d = max(0, t.Sub(*c.AnsweredAt).Milliseconds())
	}
	c.DurationMS = &d
	c.setUsageDuration()
	c.recordingEnded()
	return c.EndedEvent(newEventID(), t), true
}

// EndedEvent is the call.ended event of an ended call, created at: at End, or later when
// the event was held for an assistant's final report. A call in a session takes
// SessionEndedEvent instead, which echoes the session's metadata too.
func (c Call) EndedEvent(eventID string, at time.Time) callevent.Event {
	return c.SessionEndedEvent(eventID, at, nil)
}

// SessionEndedEvent is EndedEvent for a call in a session whose metadata is
// sessionMetadata.
func (c Call) SessionEndedEvent(eventID string, at time.Time, sessionMetadata metadata.Metadata) callevent.Event {
	var endedAt time.Time
	if c.EndedAt != nil {
		endedAt = *c.EndedAt
	}
	var d int64
	if c.DurationMS != nil {
		d = *c.DurationMS
	}
	return c.event(callevent.TypeCallEnded, eventID, at, callevent.CallEnded{
		CallID: c.ID, SessionID: c.SessionID, LineID: c.LineID, Direction: c.Direction, From: c.From, To: c.To,
		Media: c.Media, HandledBy: c.HandledBy, StartedAt: c.StartedAt, AnsweredAt: c.AnsweredAt, EndedAt: endedAt,
		DurationMS: d, EndReason: c.EndReason, EndedBy: c.EndedBy, Decision: c.Decision, DecisionSource: c.DecisionSource,
		Metadata: c.Metadata, SessionMetadata: sessionMetadata, CampaignID: c.CampaignID, RecipientID: c.RecipientID,
		AMD: c.amdEvent(),
	})
}

func (c Call) amdEvent() *callevent.AMD {
	if c.AMD == nil {
		return nil
	}
	return &callevent.AMD{Result: c.AMD.Result, DecidedAt: c.AMD.DecidedAt, DecisionMS: c.AMD.DecisionMS, MessageLeft: c.AMD.MessageLeft}
}

// Voicemail reports whether the detection found a voicemail box on the call.
func (c Call) Voicemail() bool { return c.AMD != nil && c.AMD.Result == persona.AnsweredVoicemail }

// AnsweredEvent is the call.answered event for a call just answered.
func (c Call) AnsweredEvent(eventID string) callevent.Event {
	return c.event(callevent.TypeCallAnswered, eventID, *c.AnsweredAt, callevent.CallAnswered{
		CallID: c.ID, SessionID: c.SessionID, LineID: c.LineID, Direction: c.Direction, HandledBy: c.HandledBy,
		AnsweredAt: *c.AnsweredAt, Decision: c.Decision, DecisionSource: c.DecisionSource, Metadata: c.Metadata,
	})
}

// TranscriptEvent is the call.transcript event of one final turn of the call, the
// sequence-th the worker reported.
func (c Call) TranscriptEvent(eventID string, at time.Time, sequence int, t persona.Turn) callevent.Event {
	return c.event(callevent.TypeCallTranscript, eventID, at, callevent.CallTranscript{
		CallID: c.ID, SessionID: c.SessionID, LineID: c.LineID, Direction: c.Direction, Sequence: sequence,
		Speaker: t.Speaker, Text: t.Text, StartMS: t.StartMS, EndMS: t.EndMS, Interrupted: t.Interrupted, Backchannel: t.Backchannel, Metadata: c.Metadata,
	})
}

func (c Call) event(typ, id string, at time.Time, data any) callevent.Event {
	return callevent.Event{ID: id, AccountID: c.AccountID, Type: typ, CreatedAt: at, Data: mustJSON(data)}
}

// ListQuery filters a list of calls: every filter that is set must match ("" matches
// all).
type ListQuery struct {
	listing.Query
	LineID      string
	SessionID   string
	AssistantID string
	Status      string // one of Statuses
	Direction   string // Inbound or Outbound
}

// Statuses are every status a call can have, in the order a call moves through them.
var Statuses = []string{StatusRinging, StatusActive, StatusEnded, StatusFailed, StatusDeclined}

// Directions are both directions.
var Directions = []string{Inbound, Outbound}

// Matches reports whether c passes q's filters (not its page bounds).
func (q ListQuery) Matches(c Call) bool {
	return (q.LineID == "" || c.LineID == q.LineID) && (q.SessionID == "" || c.SessionID == q.SessionID) &&
		(q.AssistantID == "" || c.AssistantID == q.AssistantID) && (q.Status == "" || c.Status == q.Status) &&
		(q.Direction == "" || c.Direction == q.Direction)
}

// Store keeps call records.
//
// Errors: GetCall and CallByPlatformID return apierr.ErrNotFound. SaveCall inserts c when
// c.Revision is 0 (apierr.ErrConflict if its id or platform call id exists) and otherwise
// updates it only if the stored revision is still c.Revision (apierr.ErrConflict if not);
// the stored revision becomes c.Revision+1. evts are written to the event outbox in the
// same transaction, and so is what the call's usage adds to its account's day
// (TakeUsageDue: a SaveCall, and a SaveSession with the call, apply it to the call they
// write), so that a call is counted once however often its writes are retried.
// QueueEvent returns apierr.ErrConflict for an event id it has.
type Store interface {
	SaveCall(ctx context.Context, c Call, evts []callevent.Event) error
	// QueueEvent writes an event that goes with no change of a record (call.transcript)
	// to the event outbox, once: apierr.ErrConflict when its id is there already.
	QueueEvent(ctx context.Context, evt callevent.Event) error
	GetCall(ctx context.Context, id string) (Call, error)
	CallByPlatformID(ctx context.Context, platform, platformCallID string) (Call, error)
	// ListCalls returns up to Limit+1 calls of the account, newest first.
	ListCalls(ctx context.Context, accountID string, q ListQuery) ([]Call, error)
}
