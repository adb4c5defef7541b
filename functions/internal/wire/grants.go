package wire

import (
	"slices"

	"github.com/bridgeline/bridgeline/shared/store/dynamo"
)

// Access is what a function does to one of its tables, beyond reading it. template.yaml
// grants each function, per table in Tables, exactly Actions: no Scan (no code scans),
// no DeleteItem where nothing is deleted, no write where the function only reads. The
// statements in template.yaml are generated from here (go run ./functions/internal/grantgen),
// functions/template_test.go checks they match, and the runtime test checks each
// function's real DynamoDB requests against them.
type Access uint8

const (
	// Write: PutItem and UpdateItem (also inside transactions).
	Write Access = 1 << iota
	// Delete: DeleteItem (also inside transactions).
	Delete
	// Batch: BatchWriteItem, puts and deletes many at a time (an upload's recipients,
	// and what a failed upload left).
	Batch
)

// ReadActions are what every function may do to each of its tables: read items and query
// the table and its indexes, and check a condition inside a transaction (a campaign's
// claim checks that the campaign still runs). The store uses no batch or scan request:
// none is granted here (Batch grants BatchWriteItem where the store sends it).
var ReadActions = []string{"dynamodb:GetItem", "dynamodb:Query", "dynamodb:ConditionCheckItem"}

// WriteActions and DeleteActions are what Write and Delete add.
var (
	WriteActions  = []string{"dynamodb:PutItem", "dynamodb:UpdateItem"}
	DeleteActions = []string{"dynamodb:DeleteItem"}
	BatchActions  = []string{"dynamodb:BatchWriteItem"}
)

// idempotent is the access of a function that takes Idempotency-Key: it claims the key,
// stores the response, and deletes the claim when the request fails with a 5xx.
const idempotent = Write | Delete

// Writes are, per function, the tables it writes and how; every other table of the
// function's Tables entry is read only.
var Writes = map[string]map[dynamo.Table]Access{
	// It records each key's last use (at most once a minute per key).
	"authorizer":      {dynamo.APIKeys: Write},
	"webhook-deliver": {dynamo.WebhookEndpoints: Write, dynamo.WebhookAttempts: Write},

	"assistants-list":               {dynamo.RateLimits: Write},
	"assistants-create":             {dynamo.Assistants: Write, dynamo.Idempotency: idempotent, dynamo.RateLimits: Write},
	"assistants-get":                {dynamo.RateLimits: Write},
	"assistants-versions-list":      {dynamo.RateLimits: Write},
	"assistants-quality":            {dynamo.RateLimits: Write},
	"assistants-update":             {dynamo.Assistants: Write, dynamo.RateLimits: Write},
	"assistants-publish":            {dynamo.Assistants: Write, dynamo.Idempotency: idempotent, dynamo.Versions: Write, dynamo.RateLimits: Write},
	"assistants-draft-restore":      {dynamo.Assistants: Write, dynamo.Idempotency: idempotent, dynamo.RateLimits: Write},
	"assistants-activate":           {dynamo.Assistants: Write, dynamo.Idempotency: idempotent, dynamo.RateLimits: Write},
	"assistants-duplicate":          {dynamo.Assistants: Write, dynamo.Idempotency: idempotent, dynamo.RateLimits: Write},
	"assistants-archive":            {dynamo.Assistants: Write, dynamo.Idempotency: idempotent, dynamo.RateLimits: Write},
	"assistants-rotate-tool-secret": {dynamo.Assistants: Write, dynamo.Idempotency: idempotent, dynamo.RateLimits: Write},
	"avatars-list":                  {dynamo.RateLimits: Write},
	"avatars-create":                {dynamo.Avatars: Write, dynamo.Idempotency: idempotent, dynamo.RateLimits: Write},
	"avatars-get":                   {dynamo.RateLimits: Write},
	"avatars-delete":                {dynamo.Avatars: Delete, dynamo.RateLimits: Write},
	"voices-list":                   {dynamo.RateLimits: Write},
	"models-list":                   {dynamo.RateLimits: Write},

	"api-keys-list":   {dynamo.RateLimits: Write},
	"api-keys-create": {dynamo.Accounts: Write, dynamo.APIKeys: Write, dynamo.Idempotency: idempotent, dynamo.RateLimits: Write},
	// A revoked key is marked, not deleted: the account's key count keeps the last one.
	"api-keys-delete": {dynamo.Accounts: Write, dynamo.APIKeys: Write, dynamo.RateLimits: Write},

	"lines-list": {dynamo.RateLimits: Write},
	"lines-get":  {dynamo.RateLimits: Write},
	// Assigning counts the assistant's lines on the assistant (an assigned one cannot be
	// archived).
	"lines-update": {dynamo.Assistants: Write, dynamo.Lines: Write, dynamo.RateLimits: Write},
	"lines-assign": {dynamo.Assistants: Write, dynamo.Idempotency: idempotent, dynamo.Lines: Write, dynamo.RateLimits: Write},

	"webhook-endpoints-list":          {dynamo.RateLimits: Write},
	"webhook-endpoints-create":        {dynamo.Idempotency: idempotent, dynamo.WebhookEndpoints: Write, dynamo.RateLimits: Write},
	"webhook-endpoints-get":           {dynamo.RateLimits: Write},
	"webhook-endpoints-update":        {dynamo.WebhookEndpoints: Write, dynamo.RateLimits: Write},
	"webhook-endpoints-delete":        {dynamo.WebhookEndpoints: Write | Delete, dynamo.RateLimits: Write}, // the account's endpoint count
	"webhook-endpoints-rotate-secret": {dynamo.Idempotency: idempotent, dynamo.WebhookEndpoints: Write, dynamo.RateLimits: Write},
	"events-list":                     {dynamo.RateLimits: Write},
	"events-get":                      {dynamo.RateLimits: Write},
	"events-redeliver":                {dynamo.Events: Write, dynamo.Idempotency: idempotent, dynamo.RateLimits: Write}, // the event counts its redeliveries

	// The ringing session is marked due for the sweeper (saved with its call).
	"calls-answer": {dynamo.CallDecisions: Write, dynamo.CallPlatformIDs: Write, dynamo.Calls: Write,
		dynamo.Idempotency: idempotent, dynamo.RateLimits: Write, dynamo.Sessions: Write},
	"calls-list":             {dynamo.RateLimits: Write},
	"calls-get":              {dynamo.RateLimits: Write},
	"calls-recording-get":    {dynamo.RateLimits: Write},
	"calls-recording-delete": {dynamo.CallPlatformIDs: Write, dynamo.Calls: Write, dynamo.RateLimits: Write},
	"calls-delete":           {dynamo.CallPlatformIDs: Write, dynamo.Calls: Write, dynamo.Sessions: Write, dynamo.RateLimits: Write},
	// GET /v1/usage reads the usage days, kept in the calls table (by key).
	"usage-get":   {dynamo.RateLimits: Write},
	"account-get": {dynamo.RateLimits: Write},
	// The doc, and the logo item beside it: put, or deleted when the logo is removed.
	"account-update": {dynamo.Accounts: Write | Delete, dynamo.RateLimits: Write},
	// A call's metadata: the call is saved whole, with the claim of its platform id.
	"calls-update": {dynamo.CallPlatformIDs: Write, dynamo.Calls: Write, dynamo.RateLimits: Write},

	// A create that fails before its dial discards the session and call it wrote.
	"sessions-create": {dynamo.CallPlatformIDs: Write, dynamo.Calls: Write | Delete, dynamo.Events: Write,
		dynamo.Idempotency: idempotent, dynamo.Sessions: Write | Delete, dynamo.RateLimits: Write},
	"campaigns-create":     {dynamo.Campaigns: Write, dynamo.CampaignRecipients: Write, dynamo.Idempotency: idempotent, dynamo.RateLimits: Write},
	"campaigns-list":       {dynamo.RateLimits: Write},
	"campaigns-get":        {dynamo.RateLimits: Write},
	"campaigns-recipients": {dynamo.RateLimits: Write},
	"campaigns-report":     {dynamo.RateLimits: Write},
	"campaigns-start":      {dynamo.Campaigns: Write, dynamo.CampaignRecipients: Batch, dynamo.Idempotency: idempotent, dynamo.RateLimits: Write},
	"campaigns-pause":      {dynamo.Campaigns: Write, dynamo.Idempotency: idempotent, dynamo.RateLimits: Write},
	"campaigns-resume":     {dynamo.Campaigns: Write, dynamo.Idempotency: idempotent, dynamo.RateLimits: Write},
	"campaigns-cancel":     {dynamo.Campaigns: Write, dynamo.CampaignRecipients: Write | Batch, dynamo.Idempotency: idempotent, dynamo.RateLimits: Write},
	// It writes the upload's recipients in batches past the list's end.
	"campaigns-recipients-add": {dynamo.Campaigns: Write, dynamo.CampaignRecipients: Batch, dynamo.Idempotency: idempotent, dynamo.RateLimits: Write},
	"campaign-runner": {dynamo.CallPlatformIDs: Write, dynamo.Calls: Write | Delete, dynamo.CampaignRecipients: Write, dynamo.Campaigns: Write,
		dynamo.Events: Write, dynamo.Sessions: Write | Delete},
	"sessions-list":   {dynamo.RateLimits: Write},
	"sessions-get":    {dynamo.RateLimits: Write},
	"sessions-delete": {dynamo.CallPlatformIDs: Write, dynamo.Calls: Write, dynamo.Events: Write, dynamo.Sessions: Write, dynamo.RateLimits: Write},
	"sessions-tokens": {dynamo.Idempotency: idempotent, dynamo.RateLimits: Write},
	// A session's metadata: the session is saved with its call (SaveSession).
	"sessions-update": {dynamo.CallPlatformIDs: Write, dynamo.Calls: Write, dynamo.Sessions: Write, dynamo.RateLimits: Write},

	"livekit-webhook": {dynamo.CallPlatformIDs: Write, dynamo.Calls: Write, dynamo.Events: Write, dynamo.Sessions: Write},
	// Idempotency: the notification ids it claims, and releases when handling fails.
	"platform-sim": {dynamo.CallDecisions: Write, dynamo.CallPlatformIDs: Write, dynamo.Calls: Write, dynamo.Events: Write,
		dynamo.Idempotency: idempotent, dynamo.Sessions: Write, dynamo.WebhookAttempts: Write, dynamo.WebhookEndpoints: Write},
	// As platform-sim: the SIP gateway's notifications are handled the same way.
	"platform-sip": {dynamo.CallDecisions: Write, dynamo.CallPlatformIDs: Write, dynamo.Calls: Write, dynamo.Events: Write,
		dynamo.Idempotency: idempotent, dynamo.Sessions: Write, dynamo.WebhookAttempts: Write, dynamo.WebhookEndpoints: Write},
	"persona-report":   {dynamo.CallPlatformIDs: Write, dynamo.Calls: Write, dynamo.Events: Write, dynamo.Sessions: Write},
	"persona-transfer": {dynamo.CallPlatformIDs: Write, dynamo.Calls: Write, dynamo.Events: Write, dynamo.Sessions: Write},
	// It carries out customer_decides decisions: the timeout recorded on a decision
	// nobody answered; and the accounts' call retention, which marks how far it got on
	// each account.
	"session-sweeper": {dynamo.Accounts: Write, dynamo.CallDecisions: Write, dynamo.CallPlatformIDs: Write, dynamo.Calls: Write,
		dynamo.Events: Write, dynamo.Sessions: Write},

	"sip-trunks-list":   {dynamo.RateLimits: Write},
	"sip-trunks-create": {dynamo.SIPTrunks: Write, dynamo.Idempotency: idempotent, dynamo.RateLimits: Write},
	"sip-trunks-get":    {dynamo.RateLimits: Write},
	"sip-trunks-update": {dynamo.SIPTrunks: Write, dynamo.RateLimits: Write},
	"sip-trunks-delete": {dynamo.SIPTrunks: Delete, dynamo.RateLimits: Write},
	// A line and its handle are written with its trunk (and its assistant's count) in one
	// transaction.
	"lines-create": {dynamo.Assistants: Write, dynamo.Idempotency: idempotent, dynamo.LineHandles: Write, dynamo.Lines: Write,
		dynamo.SIPTrunks: Write, dynamo.RateLimits: Write},
	"lines-delete": {dynamo.Assistants: Write, dynamo.LineHandles: Delete, dynamo.Lines: Delete, dynamo.SIPTrunks: Write, dynamo.RateLimits: Write},
	// A queued API transfer run to its outcome: the call, its session, call.ended.
	"call-transfers": {dynamo.CallPlatformIDs: Write, dynamo.Calls: Write, dynamo.Events: Write, dynamo.Sessions: Write},
	"calls-transfer": {dynamo.CallPlatformIDs: Write, dynamo.Calls: Write, dynamo.Events: Write, dynamo.Idempotency: idempotent,
		dynamo.Sessions: Write, dynamo.RateLimits: Write},
}

// Actions are the DynamoDB actions function is granted on table t: ReadActions, and what
// its Writes entry adds. Nil when the function does not use the table.
func Actions(function string, t dynamo.Table) []string {
	if !slices.Contains(Tables[function], t) {
		return nil
	}
	out := slices.Clone(ReadActions)
	a := Writes[function][t]
	if a&Write != 0 {
		out = append(out, WriteActions...)
	}
	if a&Delete != 0 {
		out = append(out, DeleteActions...)
	}
	if a&Batch != 0 {
		out = append(out, BatchActions...)
	}
	return out
}
