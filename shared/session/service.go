package session

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/decision"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

// Records is where sessions and calls are kept: one store implements both.
type Records interface {
	Store
	call.Store
}

// Rooms is what the service needs of LiveKit: *lkapi.Client.
type Rooms interface {
	CreateRoom(ctx context.Context, spec rtc.RoomSpec) (rtc.Room, error)
	DeleteRoom(ctx context.Context, name string) error
	Dispatch(ctx context.Context, room string, d rtc.AgentDispatch) error
	ParticipantToken(g rtc.Grant) (rtc.Token, error)
	// Participants lists who is in a room (nobody when it does not exist).
	Participants(ctx context.Context, room string) ([]rtc.Participant, error)
	// SubscribeOnly takes a participant's right to publish away (nothing when absent).
	SubscribeOnly(ctx context.Context, room, identity string) error
	PublicURL() string
}

// Decider asks the customer about an inbound call on a customer_decides line:
// *decision.Asker.
type Decider interface {
	Ask(ctx context.Context, in decision.Incoming) (decision.Record, error)
}

// Room settings every session room gets.
const (
	// RoomEmptyTimeout closes a room nobody ever joined.
	RoomEmptyTimeout = 60 * time.Second
	// RoomDepartureTimeout closes a room after its last participant left.
	RoomDepartureTimeout = 10 * time.Second
	// RoomMaxParticipants: the remote party, an assistant, and up to four customer
	// clients (each token joins as its own participant).
	RoomMaxParticipants = 6
)

// Service runs sessions and calls. Build it once with every dependency.
type Service struct {
	Records    Records
	Lines      line.Store
	Assistants assistant.Store
	Accounts   account.Store
	Rooms      Rooms
	// Platforms are the calling platforms this process reaches (a line's Platform names
	// one).
	Platforms platform.Registry
	// Decider runs customer_decides; nil declines those calls at once as timed out.
	Decider Decider
	// DecisionReserve is the time an inbound request needs after the customer's decision
	// (bridging or ending the call). When the request has a deadline (a Lambda behind API
	// Gateway's 30 s), the wait for the decision ends that long before it, so the request
	// still answers; a line's longer decision_timeout_seconds is cut short there. Zero
	// waits the line's whole timeout.
	DecisionReserve time.Duration
	// Notify, when set, is called after a write that queued events (wakes the local
	// delivery worker).
	Notify func()
	// MaxDuration is the longest a session lives, from its creation; Sweep ends longer
	// ones with max_duration. Zero means DefaultMaxDuration.
	MaxDuration time.Duration
	// DispatchTimeout bounds the time from an assistant call's answer to the first report
	// of a persona worker; Sweep fails calls past it with assistant_unavailable
	// (livekit-server drops a dispatch silently when no worker is free). Zero means
	// DefaultDispatchTimeout.
	DispatchTimeout time.Duration
	// ReportWait is how long call.ended of an assistant call that ended before its
	// worker's final report waits for that report; then Sweep sends it without (the record
	// reads assistant_report: missing). Zero means DefaultReportWait.
	ReportWait time.Duration
	// RingTimeout is how long a session may ring; Sweep fails one ringing longer (its
	// platform's no_answer never came, or a create or an inbound call crashed half way).
	// Zero means DefaultRingTimeout.
	RingTimeout time.Duration
	// CreateTimeout bounds Create (LiveKit, the store and the dial together), so that a
	// slow dependency answers 502 well before a Lambda's 10 s timeout. Zero means
	// DefaultCreateTimeout.
	CreateTimeout time.Duration
	Log           *slog.Logger
	Now           func() time.Time
	// MaxConcurrentSessions is an account's limit of live sessions unless the account
	// has its own (limits.go). Zero means DefaultMaxConcurrentSessions.
	MaxConcurrentSessions int
}

// Defaults of the service's limits.
const (
	DefaultMaxDuration     = 60 * time.Minute
	DefaultDispatchTimeout = 15 * time.Second
	// DefaultReportWait: a worker's ended report comes about a second after the hang-up.
	// With the local stack's 1 s sweep, call.ended goes out at most 4 s after the end
	// without it; with the AWS sweeper's 2 s tick, at most 5 s.
	DefaultReportWait = 3 * time.Second
	// DefaultRingTimeout is past a platform's own no-answer time (about 60 s) and the
	// longest customer_decides wait.
	DefaultRingTimeout   = 90 * time.Second
	DefaultCreateTimeout = 6 * time.Second
)

// orDefault is a Service setting, or its default when the setting is left zero.
func orDefault[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

func (s *Service) ringTimeout() time.Duration { return orDefault(s.RingTimeout, DefaultRingTimeout) }

func (s *Service) createTimeout() time.Duration {
	return orDefault(s.CreateTimeout, DefaultCreateTimeout)
}

func (s *Service) notify(evts []callevent.Event) {
	if len(evts) > 0 && s.Notify != nil {
		s.Notify()
	}
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC().Truncate(time.Millisecond)
	}
	return time.Now().UTC().Truncate(time.Millisecond)
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

func newEventID() string { return ident.New("evt") }

func upstream(msg string, err error) error {
	return fmt.Errorf("%w: %v", apierr.New(apierr.CodeUpstreamUnavailable, msg), err)
}

func backoff(attempt int) {
	time.Sleep(time.Duration(rand.IntN(1+min(attempt, 10))) * time.Millisecond)
}
