// Package session holds hosted sessions: a LiveKit room that Bridgeline creates for one
// call, the call bridged into it, and the participant tokens a customer's client joins
// with. The Service runs their whole life: creating (room, token, dial), the platform's
// and LiveKit's notifications, inbound calls on lines, assistant dispatch and ending,
// exactly once, with call.ended written in the same transaction.
package session

import (
	"context"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/metadata"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Modes.
const (
	ModeHuman     = "human"
	ModeAssistant = "assistant"
)

// Statuses: ringing -> active -> ended, or failed when the call never connected.
const (
	StatusRinging = "ringing"
	StatusActive  = "active"
	StatusEnded   = "ended"
	StatusFailed  = "failed"
)

// Statuses are every status a session can have.
var Statuses = []string{StatusRinging, StatusActive, StatusEnded, StatusFailed}

// ListQuery filters a list of sessions: Status, when set, must match.
type ListQuery struct {
	listing.Query
	Status string
}

// Session is the stored record. Its id is also its LiveKit room's name.
type Session struct {
	ID             string     `json:"id"`
	AccountID      string     `json:"account_id"`
	CallID         string     `json:"call_id"`
	LineID         string     `json:"line_id"`
	Mode           string     `json:"mode"`
	Media          string     `json:"media"`
	PlatformHandle string     `json:"platform_handle"` // the remote party
	AssistantID    string     `json:"assistant_id"`
	VersionID      string     `json:"version_id"`
	Status         string     `json:"status"`
	EndReason      string     `json:"end_reason"`
	CreatedAt      time.Time  `json:"created_at"`
	AnsweredAt     *time.Time `json:"answered_at"`
	EndedAt        *time.Time `json:"ended_at"`
	// AssistantSeenAt is when the first report of a persona worker about the call arrived:
	// proof that LiveKit handed the dispatch to a worker (Sweep's dispatch watchdog).
	AssistantSeenAt *time.Time `json:"assistant_seen_at,omitempty"`
	// ReportDueAt is set on an assistant session that ended before its worker's final
	// report came: call.ended is held until the report comes (HandleReport) or this time
	// passes (Sweep), so that a customer who reads the record on call.ended finds the
	// whole transcript. The session stays in the sweep index while it is set.
	ReportDueAt *time.Time `json:"report_due_at,omitempty"`
	// AnalysisDueAt is set on an ended session whose call's analysis is pending: Sweep
	// fails the analysis once it passes (analysis.go). The session stays in the sweep
	// index while it is set.
	AnalysisDueAt *time.Time `json:"analysis_due_at,omitempty"`
	// RoomPending is set on an ended session whose room LiveKit did not confirm deleted;
	// Sweep deletes it again until it is gone. The session stays in the sweep index while
	// it is set.
	RoomPending bool `json:"room_pending,omitempty"`
	// DecideBy is set on a ringing customer_decides session whose decision is carried out
	// by the sweeper (decide.go): the call's answer_by at first, then the time the
	// decision was recorded through the API (due at once), or the end of a claim while
	// one process carries it out (decisionLease). Sweep acts on it once it passes.
	DecideBy *time.Time `json:"decide_by,omitempty"`
	// SweepAt is when Sweep next has something to check on the session: the earliest of
	// the limits it can still reach (ring timeout, dispatch timeout, maximum duration),
	// its held call.ended's ReportDueAt, or its end while its room is still to be
	// deleted. The Service sets it at every write from the session as written and its
	// own settings (sweepAt), so a session keeps the limits in force when it was last
	// written. Stores index it while the session is Live (Due).
	SweepAt *time.Time `json:"sweep_at,omitempty"`
	// Slot is set while the session holds one of its account's concurrent-session slots
	// (limits.go): CreateSession sets it, and the store clears it, giving the slot back,
	// in the write that ends the session.
	Slot     bool  `json:"slot,omitempty"`
	Revision int64 `json:"revision"`
	// Metadata is the customer's key-value pairs (shared/metadata); an outbound
	// session's call starts with a copy.
	Metadata metadata.Metadata `json:"metadata,omitempty"`
	// Caller is set on a web call (webcall.go): the LiveKit identity of the client that
	// is the caller, the one the token POST /v1/sessions returned names. Its joining
	// answers the call and its leaving hangs up.
	Caller string `json:"caller,omitempty"`
	// Recording is the recording asked for on POST /v1/sessions (off or audio), which
	// overrides the version's; empty: the version's.
	Recording string `json:"recording,omitempty"`
	// AMD is set on an outbound assistant session that asked for answering-machine
	// detection: what its worker is given (the voicemail message rendered at create).
	AMD *persona.AMD `json:"amd,omitempty"`
}

// RecordingOf is the recording mode of the session's call of version v: the session's
// own, else the version's; off or audio.
func (s Session) RecordingOf(v assistant.Version) string {
	if s.Recording != "" {
		return s.Recording
	}
	return assistant.RecordingOrOff(v.Recording)
}

// WebCall reports whether the session is a web call: its caller is a client that joins
// with a token, and no platform leg is dialled.
func (s Session) WebCall() bool { return s.Caller != "" }

// Live reports whether the sweeper still has work on the session: it has not ended, its
// call.ended is held, its room is still to be deleted, or its call's analysis is
// awaited. Stores keep the sweep index
// (SweepIndex) by it.
func (s Session) Live() bool {
	return !s.Over() || s.Held() || s.RoomPending || s.AnalysisDueAt != nil
}

// DueKey is a session's place in the sweep index: its due time, then its id.
type DueKey struct {
	At time.Time
	ID string
}

// Due is the session's key in the sweep index, and false when it has no place there
// (not Live). A Live session without SweepAt (written before the index existed, or by a
// writer that does not set it) is due at once, at the zero time: the sweeper then looks
// at it and writes its SweepAt.
func (s Session) Due() (DueKey, bool) {
	if !s.Live() {
		return DueKey{}, false
	}
	if s.SweepAt == nil {
		return DueKey{ID: s.ID}, true
	}
	return DueKey{At: s.SweepAt.UTC(), ID: s.ID}, true
}

// Before orders keys by time, then id.
func (k DueKey) Before(o DueKey) bool {
	if !k.At.Equal(o.At) {
		return k.At.Before(o.At)
	}
	return k.ID < o.ID
}

// Held reports whether the session's call.ended waits for its worker's final report.
func (s Session) Held() bool { return s.ReportDueAt != nil }

// HoldsSlot reports whether the session, as it is to be written, still holds a
// concurrent-session slot: it took one and has not ended.
func (s Session) HoldsSlot() bool { return s.Slot && !s.Over() }

// Over reports whether the session ended or failed.
func (s Session) Over() bool { return s.Status == StatusEnded || s.Status == StatusFailed }

// Store keeps sessions, always written together with their call.
//
// Errors: GetSession returns apierr.ErrNotFound. SaveSession writes s and c in one
// transaction; each is inserted when its Revision is 0 (apierr.ErrConflict if the id
// exists) and otherwise updated only if its stored revision is still Revision
// (apierr.ErrConflict if not), and becomes Revision+1. evts go to the event outbox in the
// same transaction, so they exist exactly when the change committed.
type Store interface {
	SaveSession(ctx context.Context, s Session, c call.Call, evts []callevent.Event) error
	// DiscardSession deletes a session and its call that no write has changed since
	// their first save (both at revision 1), in one transaction: what a create that
	// failed after its save leaves. Anything else is apierr.ErrConflict.
	DiscardSession(ctx context.Context, sessionID, callID string) error
	GetSession(ctx context.Context, id string) (Session, error)
	// ListSessions returns up to Limit+1 sessions of the account, newest first, of
	// q.Status when set.
	ListSessions(ctx context.Context, accountID string, q ListQuery) ([]Session, error)
	// CreateSession inserts a new session (Revision 0, Slot set) and its call as
	// SaveSession does, and takes one of the account's concurrent-session slots in the
	// same transaction: ErrConcurrentLimit, with nothing written, when the account's
	// sessions that hold one (HoldsSlot) are already as many as its limit (its
	// MaxConcurrentSessions, else defaultLimit). The SaveSession that writes the session
	// over gives the slot back, once: a second write of it over gives nothing back; so
	// does DiscardSession of it.
	CreateSession(ctx context.Context, s Session, c call.Call, evts []callevent.Event, defaultLimit int) error
}

// SweepIndex finds the sessions whose sweep time has come, across accounts, for Sweep, so
// that a tick reads what is due and not every live session. It is separate from Store so
// that a store can keep sessions before it keeps this index.
//
// DueSessions returns up to limit Live sessions whose Due key is at or before now and
// after the key after (the zero DueKey: from the start), in key order. A write that
// changes a session's Due key, or takes it out of Live, moves it in the index in the same
// write; the index may lag a write by the store's own index delay (DynamoDB's global
// secondary indexes), so the sweeper checks each session again as it writes.
type SweepIndex interface {
	DueSessions(ctx context.Context, now time.Time, after DueKey, limit int) ([]Session, error)
}
