// Package store declares what a Bridgeline store is: one type that keeps every domain's
// records. Both implementations (store/sqlite for the local stack, store/dynamo for AWS
// and DynamoDB Local) assert it at compile time, and the control plane
// (shared/controlplane) is assembled over it. The conformance suite that both pass is
// store/storetest, which only tests link.
package store

import (
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/avatars"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/campaign"
	"github.com/bridgeline/bridgeline/shared/decision"
	"github.com/bridgeline/bridgeline/shared/idempotency"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/quality"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/siptrunk"
	"github.com/bridgeline/bridgeline/shared/usage"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

// Store is every domain store in one: accounts and keys, assistants, lines, idempotency
// records, webhook endpoints, the event log with its delivery attempts and outbox,
// customer_decides decisions, sessions (with the sweep index) and calls, SIP trunks and
// the SIP lines on them, the accounts' daily usage, the versions' quality aggregates,
// campaigns with their recipients, and the accounts' own avatars.
type Store interface {
	account.Store
	assistant.Store
	line.Store
	idempotency.Store
	webhookendpoint.Store
	delivery.Log
	delivery.Outbox
	decision.Store
	decision.EventLog
	session.Store
	session.SweepIndex
	call.Store
	siptrunk.Store
	siptrunk.LineStore
	usage.Store
	quality.Store
	campaign.Store
	avatars.Store
}
