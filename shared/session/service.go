package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	"github.com/bridgeline/bridgeline/shared/usage"
)

// Records is where sessions and calls are kept: one store implements both.
type Records interface {
	Store
	call.Store
}

// Rooms is what the service needs of LiveKit: *lkhttp.Client (the Lambdas), *lkapi.Client
// (the local stack, which adds protobuf-typed calls), NoRooms where there is none.
type Rooms interface {
	CreateRoom(ctx context.Context, spec rtc.RoomSpec) (rtc.Room, error)
	DeleteRoom(ctx context.Context, name string) error
	Dispatch(ctx context.Context, room string, d rtc.AgentDispatch) error
	ParticipantToken(g rtc.Grant) (rtc.Token, error)
	// Participants lists who is in a room (nobody when it does not exist).
	Participants(ctx context.Context, room string) ([]rtc.Participant, error)
	// SubscribeOnly takes a participant's right to publish away (nothing when absent).
	SubscribeOnly(ctx context.Context, room, identity string) error
	// SendData sends a reliable data packet on topic to everyone in a room, from the
	// server (it names no participant).
	SendData(ctx context.Context, room, topic string, data []byte) error
	PublicURL() string
}

// Decider asks the customer about an inbound call on a customer_decides line:
// *decision.Asker.
type Decider interface {
	// Post posts call.incoming, waits at most wait for the POSTs, and returns the
	// decision as it stands (pending: Decision "").
	Post(ctx context.Context, in decision.Incoming, wait time.Duration) (decision.Record, error)
	// Get reads a call's decision; Expire records Timeout unless an answer came first.
	Get(ctx context.Context, callID string) (decision.Record, error)
	Expire(ctx context.Context, callID string) (decision.Record, error)
}

// Subscriptions says whether an account listens to an event type at all:
// *webhookendpoint.Service. An event produced once per turn (call.transcript) is made
// only for accounts that do.
type Subscriptions interface {
	Wants(ctx context.Context, accountID, typ string) (bool, error)
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

// Stores are what the service reads and writes: one store (store.Store) is all of them.
type Stores interface {
	Records
	line.Store
	assistant.Store
	account.Store
	usage.Store
}

// Service runs sessions and calls. New builds it.
type Service struct {
	records    Records
	lines      line.Store
	assistants assistant.Store
	accounts   account.Store
	usage      usage.Store
	rooms      Rooms
	set        Settings
}

// Settings are the service's optional parts and limits: what an Option sets, from
// defaults(), every default in one place.
type Settings struct {
	// CallEnded is told of each session's call as it ends (WithCallEnded); nil: nobody.
	CallEnded func(context.Context, call.Call)
	// Platforms are the calling platforms this process reaches (a line's Platform names
	// one); none by default: a create on any line answers upstream_unavailable.
	Platforms platform.Registry
	// Decider runs customer_decides; nil declines those calls at once as timed out.
	Decider Decider
	// DecisionReserve is the time an inbound request needs after a decision in
	// call.incoming's response body (bridging or ending the call). When the request has
	// a deadline (a Lambda behind API Gateway's 30 s), the wait for the POSTs
	// (IncomingWait) ends that long before it, so the request still answers. Zero: no
	// cut.
	DecisionReserve time.Duration
	// IncomingWait bounds the POSTs of call.incoming made while an inbound notification
	// is handled: a response body that answers within it is carried out at once; later,
	// the receiver's answer is not waited for (the customer answers through POST
	// /v1/calls/{id}/answer) and the sweeper carries the decision out (decide.go).
	// Default DefaultIncomingWait; zero: until the call's answer_by.
	IncomingWait time.Duration
	// OnWrite, when set, is called after a write that queued events (wakes the local
	// delivery worker).
	OnWrite func()
	// MaxDuration is the longest a session lives, from its creation; Sweep ends longer
	// ones with max_duration.
	MaxDuration time.Duration
	// DispatchTimeout bounds the time from an assistant call's answer to the first
	// report of a persona worker; Sweep fails calls past it with assistant_unavailable
	// (livekit-server drops a dispatch silently when no worker is free).
	DispatchTimeout time.Duration
	// ReportWait is how long call.ended of an assistant call that ended before its
	// worker's final report waits for that report; then Sweep sends it without (the
	// record reads assistant_report: missing).
	ReportWait time.Duration
	// AnalysisWait is how long an ended call's analysis may stay pending; then Sweep
	// fails it (analysis.go).
	AnalysisWait time.Duration
	// RingTimeout is how long a session may ring; Sweep fails one ringing longer (its
	// platform's no_answer never came, or a create or an inbound call crashed half way).
	RingTimeout time.Duration
	// CreateTimeout bounds Create (LiveKit, the store and the dial together), so that a
	// slow dependency answers 502 well before a Lambda's 10 s timeout.
	CreateTimeout time.Duration
	// JoinTimeout is how long a web call waits for its caller's client to join; Sweep
	// fails one whose caller has not joined by then with join_timeout (webcall.go).
	JoinTimeout time.Duration
	// MaxConcurrentSessions is an account's limit of live sessions unless the account
	// has its own (limits.go).
	MaxConcurrentSessions int
	// DailyOutboundMinutes caps an account's outbound minutes on real networks per UTC
	// day unless the account has its own cap (outbound.go).
	DailyOutboundMinutes int
	// Subscriptions decides, when an assistant call is dispatched, whether its worker
	// reports turns for call.transcript; nil: never.
	Subscriptions Subscriptions
	// Later runs work that goes on after a request answered (an API transfer, which
	// waits for the destination to answer); nil runs it in a goroutine of its own. A
	// process that stops when it answers (a Lambda) runs it in place: the request then
	// answers once the work is done.
	Later func(task func())
	// TransferQueue takes API transfers for another process to run (RunTransfer): on
	// AWS, where the API's function may not wait for a transfer's outcome. Nil: Later
	// runs them.
	TransferQueue TransferQueue
	// Log receives the service's logs; Now is its clock.
	Log *slog.Logger
	Now func() time.Time
}

// Defaults of the service's settings.
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
	// DefaultIncomingWait is how long a call.incoming response body may take to count as
	// the answer; a slower receiver acknowledges and answers through the API. It bounds
	// what an inbound notification holds (on AWS a platform-sim execution) per call.
	DefaultIncomingWait = 5 * time.Second
)

func defaults() Settings {
	return Settings{
		MaxDuration:           DefaultMaxDuration,
		DispatchTimeout:       DefaultDispatchTimeout,
		ReportWait:            DefaultReportWait,
		AnalysisWait:          DefaultAnalysisWait,
		RingTimeout:           DefaultRingTimeout,
		CreateTimeout:         DefaultCreateTimeout,
		IncomingWait:          DefaultIncomingWait,
		JoinTimeout:           DefaultJoinTimeout,
		MaxConcurrentSessions: DefaultMaxConcurrentSessions,
		DailyOutboundMinutes:  DefaultDailyOutboundMinutes,
		Log:                   slog.Default(),
		Now:                   time.Now,
	}
}

// Option sets one of the service's settings; the ones not given keep their defaults.
type Option func(*Settings) error

// WithPlatforms are the calling platforms the service dials through and takes calls
// from.
func WithPlatforms(r platform.Registry) Option {
	return func(s *Settings) error { s.Platforms = r; return nil }
}

// WithDecider runs customer_decides (*decision.Asker); without one those calls are
// declined at once as timed out.
func WithDecider(d Decider) Option {
	return func(s *Settings) error { s.Decider = d; return nil }
}

// WithDecisionReserve keeps d of an inbound request's deadline for after the customer's
// decision (Lambdas, whose requests have one). Without it the wait is the line's whole
// timeout.
func WithDecisionReserve(d time.Duration) Option {
	return func(s *Settings) error { return nonNegative("decision reserve", d, &s.DecisionReserve) }
}

// WithIncomingWait bounds the call.incoming POSTs an inbound notification waits for
// (Settings.IncomingWait, default DefaultIncomingWait; 0: until answer_by).
func WithIncomingWait(d time.Duration) Option {
	return func(s *Settings) error { return nonNegative("incoming wait", d, &s.IncomingWait) }
}

// WithWriteNotify calls f after each write that queued events (the local delivery
// worker's wake-up).
func WithWriteNotify(f func()) Option {
	return func(s *Settings) error { s.OnWrite = f; return nil }
}

// WithMaxDuration is the longest a session lives (default DefaultMaxDuration).
func WithMaxDuration(d time.Duration) Option {
	return func(s *Settings) error { return positive("max duration", d, &s.MaxDuration) }
}

// WithDispatchTimeout bounds an assistant call's wait for its persona worker (default
// DefaultDispatchTimeout).
func WithDispatchTimeout(d time.Duration) Option {
	return func(s *Settings) error { return positive("dispatch timeout", d, &s.DispatchTimeout) }
}

// WithReportWait is how long call.ended waits for an ended assistant call's final report
// (default DefaultReportWait).
func WithReportWait(d time.Duration) Option {
	return func(s *Settings) error { return positive("report wait", d, &s.ReportWait) }
}

// WithRingTimeout is how long a session may ring (default DefaultRingTimeout).
func WithRingTimeout(d time.Duration) Option {
	return func(s *Settings) error { return positive("ring timeout", d, &s.RingTimeout) }
}

// WithCreateTimeout bounds Create (default DefaultCreateTimeout).
func WithCreateTimeout(d time.Duration) Option {
	return func(s *Settings) error { return positive("create timeout", d, &s.CreateTimeout) }
}

// WithJoinTimeout is how long a web call waits for its caller (default
// DefaultJoinTimeout).
func WithJoinTimeout(d time.Duration) Option {
	return func(s *Settings) error { return positive("join timeout", d, &s.JoinTimeout) }
}

// WithDailyOutboundMinutes is an account's cap of outbound minutes per UTC day unless
// the account has its own (default DefaultDailyOutboundMinutes; 0 allows none).
func WithDailyOutboundMinutes(n int) Option {
	return func(s *Settings) error {
		if n < 0 {
			return fmt.Errorf("session: daily outbound minutes %d, want at least 0", n)
		}
		s.DailyOutboundMinutes = n
		return nil
	}
}

// WithMaxConcurrentSessions is an account's limit of live sessions unless the account
// has its own (default DefaultMaxConcurrentSessions).
func WithMaxConcurrentSessions(n int) Option {
	return func(s *Settings) error {
		if n <= 0 {
			return fmt.Errorf("session: max concurrent sessions %d, want at least 1", n)
		}
		s.MaxConcurrentSessions = n
		return nil
	}
}

// WithSubscriptions lets assistant calls of accounts subscribed to call.transcript
// report their turns as they happen (default: no call.transcript at all).
func WithSubscriptions(sub Subscriptions) Option {
	return func(s *Settings) error { s.Subscriptions = sub; return nil }
}

// WithCallEnded has f told of every session's call as the write that ends it commits
// (shared/campaign settles its recipients with it). f runs on the ending request's path:
// it must be quick, and its errors are its own.
func WithCallEnded(f func(context.Context, call.Call)) Option {
	return func(s *Settings) error { s.CallEnded = f; return nil }
}

// WithTransferQueue hands API transfers to q, for another process to run (RunTransfer),
// instead of running them after the answer (default: none).
func WithTransferQueue(q TransferQueue) Option {
	return func(s *Settings) error { s.TransferQueue = q; return nil }
}

// WithLater runs the work that goes on after a request answered (default: a goroutine).
func WithLater(later func(task func())) Option {
	return func(s *Settings) error { s.Later = later; return nil }
}

// WithLog receives the service's logs (default slog.Default()).
func WithLog(l *slog.Logger) Option {
	return func(s *Settings) error {
		if l != nil {
			s.Log = l
		}
		return nil
	}
}

// WithClock is the service's clock (default time.Now).
func WithClock(now func() time.Time) Option {
	return func(s *Settings) error {
		if now != nil {
			s.Now = now
		}
		return nil
	}
}

func positive(what string, d time.Duration, to *time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("session: %s %v, want more than zero", what, d)
	}
	*to = d
	return nil
}

func nonNegative(what string, d time.Duration, to *time.Duration) error {
	if d < 0 {
		return fmt.Errorf("session: %s %v, want zero or more", what, d)
	}
	*to = d
	return nil
}

// New builds the service over its stores and LiveKit (rooms; NoRooms in a process that
// never talks to LiveKit). Every other part is an Option with its default in defaults().
func New(stores Stores, rooms Rooms, opts ...Option) (*Service, error) {
	if stores == nil || rooms == nil {
		return nil, errors.New("session: New needs the stores and the rooms")
	}
	s := &Service{records: stores, lines: stores, assistants: stores, accounts: stores, usage: stores, rooms: rooms, set: defaults()}
	for _, o := range opts {
		if err := o(&s.set); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// PublicURL is LiveKit's address as clients reach it (rtc_url).
func (s *Service) PublicURL() string { return s.rooms.PublicURL() }

// Calls reads the account's call records.
func (s *Service) Calls() call.Reader { return call.Reader{Store: s.records} }

// Settings are what the service runs with.
func (s *Service) Settings() Settings { return s.set }

func (s *Service) notify(evts []callevent.Event) {
	if len(evts) > 0 && s.set.OnWrite != nil {
		s.set.OnWrite()
	}
}

func (s *Service) now() time.Time { return s.set.Now().UTC().Truncate(time.Millisecond) }

func (s *Service) log() *slog.Logger { return s.set.Log }

// later runs task after the request answers (Settings.Later).
func (s *Service) later(task func()) {
	if s.set.Later != nil {
		s.set.Later(task)
		return
	}
	go task()
}

func newEventID() string { return ident.New("evt") }

func upstream(msg string, err error) error {
	return fmt.Errorf("%w: %v", apierr.New(apierr.CodeUpstreamUnavailable, msg), err)
}
