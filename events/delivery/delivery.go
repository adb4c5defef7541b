// Package delivery sends events to customers' webhook endpoints: signed, at least once,
// with a 15 s timeout per attempt and the retry schedule of API.md (immediately, 5 s,
// 5 min, 30 min, 2 h, 5 h, 10 h, then give up), jittered, honouring Retry-After, and
// disabling an endpoint that answers 410 Gone. Every attempt is logged.
//
// The same Deliverer makes attempts on both paths: locally a Worker reads the persistent
// outbox (events written in the same transaction as the state change that caused them);
// on AWS the webhook-deliver Lambda gets them from EventBridge through SQS (see
// events/awsbus). Each message carries the event id as webhook-id on every attempt, so
// receivers can deduplicate.
package delivery

import (
	"context"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/listing"
)

// Attempt outcomes.
const (
	OutcomeSucceeded = "succeeded" // 2xx
	OutcomeFailed    = "failed"    // anything else; retried while the schedule lasts
	OutcomeGone      = "gone"      // 410: the endpoint is disabled, no retry
)

// Attempt is one logged POST of an event to an endpoint.
type Attempt struct {
	ID            string     `json:"id"` // watt_...
	EventID       string     `json:"event_id"`
	AccountID     string     `json:"account_id"`
	EndpointID    string     `json:"endpoint_id"`
	URL           string     `json:"url"`
	Number        int        `json:"number"` // 1 for the first attempt of a delivery
	StartedAt     time.Time  `json:"started_at"`
	DurationMS    int64      `json:"duration_ms"`
	StatusCode    int        `json:"status_code"` // 0 when no response came
	Outcome       string     `json:"outcome"`
	Error         string     `json:"error"`           // client-safe: "timeout", "connection refused", "HTTP 500"
	NextAttemptAt *time.Time `json:"next_attempt_at"` // nil when this was the last attempt
}

// Delivery states.
const (
	StatePending   = "pending"   // waiting for its next attempt
	StateSucceeded = "succeeded" // a 2xx arrived
	StateFailed    = "failed"    // the schedule ran out
	StateCanceled  = "canceled"  // the endpoint went away, was disabled or answered 410
)

// Delivery is one event on its way to one endpoint. Attempts counts the attempts made.
type Delivery struct {
	ID            string    `json:"id"` // dlv_...
	EventID       string    `json:"event_id"`
	AccountID     string    `json:"account_id"`
	EndpointID    string    `json:"endpoint_id"`
	State         string    `json:"state"`
	Attempts      int       `json:"attempts"`
	NextAttemptAt time.Time `json:"next_attempt_at"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// Log is the event log as customers see it: events and their delivery attempts.
//
// Errors: GetEvent returns apierr.ErrNotFound.
type Log interface {
	GetEvent(ctx context.Context, id string) (callevent.Event, error)
	// ListEvents returns up to q.Limit+1 of the account's events, newest first, only of
	// type typ when typ is not "". call.incoming is not in the outbox and is not listed.
	ListEvents(ctx context.Context, accountID string, typ string, q listing.Query) ([]callevent.Event, error)
	// ListDeliveryAttempts returns the event's attempts, oldest first.
	ListDeliveryAttempts(ctx context.Context, eventID string) ([]Attempt, error)
	// DeliveryAttemptsPage returns up to limit of the event's attempts after the attempt
	// startingAfter ("" from the first), oldest first, and whether more follow.
	DeliveryAttemptsPage(ctx context.Context, eventID, startingAfter string, limit int) ([]Attempt, bool, error)
	// RecordDeliveryAttempt logs an attempt made outside an Outbox (the AWS path).
	RecordDeliveryAttempt(ctx context.Context, a Attempt) error
	// CountRedelivery counts one redelivery of the event against max, atomically: it
	// returns apierr.ErrConflict, counting nothing, when the event has been redelivered
	// max times already (concurrent requests cannot pass max together).
	CountRedelivery(ctx context.Context, eventID string, max int) error
}

// MaxRedeliveries is how many times one event may be redelivered (each time to one
// endpoint or to every subscribed one, at most 16): with it an event's attempts are
// bounded, and POST /v1/events/{id}/redeliver is no amplifier of signed POSTs.
const MaxRedeliveries = 10

// ClaimLimits bound one claim of due deliveries. The worker passes what it already has
// in flight, so one endpoint, or one account's endpoints, cannot take every slot: a
// stalled receiver holds at most its share while it times out, and other accounts'
// events go out meanwhile.
type ClaimLimits struct {
	Limit       int // deliveries in all
	PerEndpoint int // in flight to one endpoint, counting Busy
	// PerAccount bounds the attempts in flight to one account's endpoints, counting
	// BusyAccounts; 0 means no bound.
	PerAccount   int
	Busy         map[string]int // endpoint id -> attempts in flight
	BusyAccounts map[string]int // account id -> attempts in flight
}

// Room is how many more deliveries to endpoint of account a claim may take, given what
// it took already (takenEndpoint, takenAccount).
func (l ClaimLimits) Room(endpoint, account string, takenEndpoint, takenAccount int) int {
	room := l.PerEndpoint - l.Busy[endpoint] - takenEndpoint
	if l.PerAccount > 0 {
		room = min(room, l.PerAccount-l.BusyAccounts[account]-takenAccount)
	}
	return room
}

// Outbox is the local, persistent delivery queue on top of the events table.
//
// Errors: AddDeliveries returns apierr.ErrConflict when the event was already fanned out.
type Outbox interface {
	// UndispatchedEvents returns up to limit events not yet fanned out, oldest first.
	UndispatchedEvents(ctx context.Context, limit int) ([]callevent.Event, error)
	// AddDeliveries stores the event's deliveries and marks it fanned out, atomically. ds
	// may be empty (no endpoint wanted the event).
	AddDeliveries(ctx context.Context, eventID string, ds []Delivery) error
	// AddRedeliveries adds deliveries for an event already fanned out (POST .../redeliver).
	AddRedeliveries(ctx context.Context, ds []Delivery) error
	// ClaimDueDeliveries marks pending deliveries due at now as in flight and returns
	// them, within lim (in all, per endpoint and per account), favouring the endpoints
	// whose deliveries have waited longest.
	ClaimDueDeliveries(ctx context.Context, now time.Time, lim ClaimLimits) ([]Delivery, error)
	// FinishDelivery stores the delivery's new state, releases its claim and logs the attempt
	// (nil when none was made), atomically.
	FinishDelivery(ctx context.Context, d Delivery, a *Attempt) error
	// ReleaseDeliveryClaims makes every in-flight delivery claimed before the given time due
	// again; at start with the current time, it resumes what a killed process was sending.
	ReleaseDeliveryClaims(ctx context.Context, before time.Time) (int, error)
	// NextDeliveryDue is the earliest next attempt time of a pending, unclaimed delivery, and
	// false when there is none.
	NextDeliveryDue(ctx context.Context) (time.Time, bool, error)
}
