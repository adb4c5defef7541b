// Package rtc is the control plane's vocabulary for LiveKit, without LiveKit: the room
// to create, the agent job to dispatch, the participant token to mint and the webhook
// event received, as plain types. The clients that speak LiveKit's API are
// shared/rtc/lkhttp (the Lambdas', with no LiveKit package) and shared/rtc/lkapi (the
// local stack's and the tools', lkhttp plus protobuf-typed calls); everything that only
// needs these types (shared/session, the HTTP layer) links no LiveKit package.
package rtc

import (
	"errors"
	"time"
)

// Token lifetimes: API.md fixes the default and the configurable range.
const (
	DefaultTokenTTL = 10 * time.Minute
	MinTokenTTL     = time.Minute
	MaxTokenTTL     = time.Hour
)

// MaxWebhookBytes bounds a LiveKit webhook body.
const MaxWebhookBytes = 1 << 20

// RoomSpec describes a room to create.
type RoomSpec struct {
	// Name is unique per call: the session id.
	Name string
	// EmptyTimeout closes the room if nobody joins in time; DepartureTimeout closes it
	// that long after the last participant left. Zero uses the server's setting.
	EmptyTimeout     time.Duration
	DepartureTimeout time.Duration
	MaxParticipants  int
	Metadata         string
	// Agent, when set, has LiveKit dispatch a job to a worker registered under
	// Agent.AgentName as soon as the room exists.
	Agent *AgentDispatch
}

// Room is a room as LiveKit created it.
type Room struct {
	SID              string
	Name             string
	EmptyTimeout     time.Duration
	DepartureTimeout time.Duration
	MaxParticipants  int
}

// AgentDispatch asks LiveKit for one agent job in the room.
type AgentDispatch struct {
	AgentName string
	// Metadata is the job's metadata (persona.Job as JSON).
	Metadata string
}

// Kind is a participant's kind, as LiveKit's token claim and webhooks name it.
type Kind string

// Kinds.
const (
	// KindStandard is a customer's client (the default).
	KindStandard Kind = "standard"
	// KindSIP is a party a calling platform bridges in.
	KindSIP Kind = "sip"
	// KindAgent is an agent worker's participant.
	KindAgent Kind = "agent"
)

// Grant is what one participant token allows.
type Grant struct {
	Room     string
	Identity string
	Name     string
	// TTL is the token lifetime; zero means the configured TokenTTL.
	TTL time.Duration
	// Kind marks the participant; empty means KindStandard.
	Kind Kind
	// SubscribeOnly mints a watcher's token: it may subscribe, but neither publish tracks
	// nor send data (canPublish and canPublishData false).
	SubscribeOnly bool
	// UpdateOwnMetadata lets the participant set its own metadata and attributes: a
	// platform's party only (LiveKit's SIP bridge publishes the call's status so).
	UpdateOwnMetadata bool
	// Sources, when set, are the only track sources the participant may publish
	// (LiveKit's names: SourceCamera, SourceMicrophone), and it may send no data: a web
	// call's caller publishes its camera and microphone and nothing else.
	Sources    []string
	Attributes map[string]string
	Metadata   string
}

// Track sources a Grant may allow, as LiveKit's canPublishSources names them.
const (
	SourceCamera     = "camera"
	SourceMicrophone = "microphone"
)

// Token is a minted participant token.
type Token struct {
	JWT       string
	Identity  string
	ExpiresAt time.Time // exactly the token's exp claim
}

// Webhook errors: every one means "reject with 401", except ErrWebhookMalformed (400).
var (
	ErrWebhookUnsigned  = errors.New("rtc: webhook has no Authorization")
	ErrWebhookSignature = errors.New("rtc: webhook signature or checksum invalid")
	ErrWebhookMalformed = errors.New("rtc: webhook body malformed")
)

// Webhook event names the control plane acts on.
const (
	EventParticipantJoined = "participant_joined"
	EventParticipantLeft   = "participant_left"
	EventRoomFinished      = "room_finished"
)

// ReceivedEvents are the only webhook events LiveKit is configured to post to the
// control plane (webhook.filter_params.include_events): every other event would cost a
// signed request to the receiver, and on AWS an invocation, only to be ignored.
var ReceivedEvents = []string{EventParticipantJoined, EventParticipantLeft, EventRoomFinished}

// DisconnectDuplicateIdentity is the disconnect reason of a participant replaced by a
// newer connection with the same identity.
const DisconnectDuplicateIdentity = "DUPLICATE_IDENTITY"

// WebhookEvent is what the control plane reads of a verified LiveKit webhook.
type WebhookEvent struct {
	// Event is LiveKit's event name (room_started, participant_left, room_finished, ...).
	Event string
	// Room is the room's name; empty when the event is about no room.
	Room string
	// Participant is set on participant events.
	Participant *Participant
}

// Participant is a webhook event's participant.
type Participant struct {
	Identity string
	Kind     Kind
	// DisconnectReason is LiveKit's reason name (CLIENT_INITIATED, DUPLICATE_IDENTITY,
	// ...); empty while connected.
	DisconnectReason string
	// CanPublish: the participant may publish tracks or data (its current permission).
	CanPublish bool
}
