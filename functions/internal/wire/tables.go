package wire

import "github.com/bridgeline/bridgeline/shared/store/dynamo"

// Tables are the store tables each function uses: template.yaml grants a function exactly
// these, and names each in its TABLE_* variables (functions/template_test.go checks both;
// the runtime test checks that each function uses no other table, and all of them).
// This map is the one place that says so: the HTTP layer's routes name no table. Every
// /v1 function counts its account's requests in rate_limits (RateLimiter).
var Tables = map[string][]dynamo.Table{
	"authorizer":      {dynamo.Accounts, dynamo.APIKeys},
	"event-relay":     {},
	"webhook-deliver": {dynamo.WebhookEndpoints, dynamo.WebhookAttempts},

	"assistants-list":          {dynamo.Assistants, dynamo.Versions, dynamo.RateLimits},
	"assistants-create":        {dynamo.Assistants, dynamo.Avatars, dynamo.Idempotency, dynamo.RateLimits},
	"assistants-get":           {dynamo.Assistants, dynamo.Versions, dynamo.RateLimits},
	"assistants-versions-list": {dynamo.Assistants, dynamo.Versions, dynamo.RateLimits},
	// The page of versions, and their quality aggregates (in the calls table, by key).
	"assistants-quality":       {dynamo.Assistants, dynamo.Calls, dynamo.Versions, dynamo.RateLimits},
	"assistants-update":        {dynamo.Assistants, dynamo.Avatars, dynamo.Versions, dynamo.RateLimits},
	"assistants-publish":       {dynamo.Assistants, dynamo.Avatars, dynamo.Idempotency, dynamo.Versions, dynamo.RateLimits},
	"assistants-activate":      {dynamo.Assistants, dynamo.Idempotency, dynamo.Versions, dynamo.RateLimits},
	"assistants-draft-restore": {dynamo.Assistants, dynamo.Idempotency, dynamo.Versions, dynamo.RateLimits},
	"assistants-duplicate":     {dynamo.Assistants, dynamo.Idempotency, dynamo.Versions, dynamo.RateLimits},
	"assistants-archive":       {dynamo.Assistants, dynamo.Idempotency, dynamo.Versions, dynamo.RateLimits},
	// It seals the new tool secret (KMS) and writes it; the assistant is read with its versions.
	"assistants-rotate-tool-secret": {dynamo.Assistants, dynamo.Idempotency, dynamo.Versions, dynamo.RateLimits},
	"avatars-list":                  {dynamo.Avatars, dynamo.RateLimits},
	// An own avatar's files are in S3 (avawire); its record in avatars. The delete reads
	// the account's assistants and versions: a published version keeps its avatar.
	"avatars-create": {dynamo.Avatars, dynamo.Idempotency, dynamo.RateLimits},
	"avatars-get":    {dynamo.Avatars, dynamo.RateLimits},
	"avatars-delete": {dynamo.Assistants, dynamo.Avatars, dynamo.Versions, dynamo.RateLimits},
	"voices-list":    {dynamo.RateLimits},
	"models-list":    {dynamo.RateLimits},

	"api-keys-list":   {dynamo.APIKeys, dynamo.RateLimits},
	"api-keys-create": {dynamo.Accounts, dynamo.APIKeys, dynamo.Idempotency, dynamo.RateLimits},
	"api-keys-delete": {dynamo.Accounts, dynamo.APIKeys, dynamo.RateLimits},

	"lines-list":   {dynamo.Lines, dynamo.RateLimits},
	"lines-get":    {dynamo.Lines, dynamo.RateLimits},
	"lines-update": {dynamo.Assistants, dynamo.Lines, dynamo.Versions, dynamo.RateLimits},
	"lines-assign": {dynamo.Assistants, dynamo.Idempotency, dynamo.Lines, dynamo.Versions, dynamo.RateLimits},

	"webhook-endpoints-list":          {dynamo.WebhookEndpoints, dynamo.RateLimits},
	"webhook-endpoints-create":        {dynamo.Idempotency, dynamo.WebhookEndpoints, dynamo.RateLimits},
	"webhook-endpoints-get":           {dynamo.WebhookEndpoints, dynamo.RateLimits},
	"webhook-endpoints-update":        {dynamo.WebhookEndpoints, dynamo.RateLimits},
	"webhook-endpoints-delete":        {dynamo.WebhookEndpoints, dynamo.RateLimits},
	"webhook-endpoints-rotate-secret": {dynamo.Idempotency, dynamo.WebhookEndpoints, dynamo.RateLimits},
	"events-list":                     {dynamo.Events, dynamo.RateLimits},
	"events-get":                      {dynamo.Events, dynamo.WebhookAttempts, dynamo.RateLimits},
	"events-redeliver":                {dynamo.Events, dynamo.Idempotency, dynamo.WebhookAttempts, dynamo.WebhookEndpoints, dynamo.RateLimits},

	// A decline answers the call object, read from the calls table; the ringing session
	// is marked due for the sweeper, which carries the decision out.
	"calls-answer": {dynamo.CallDecisions, dynamo.CallPlatformIDs, dynamo.Calls, dynamo.Idempotency, dynamo.RateLimits,
		dynamo.Sessions},
	"calls-list": {dynamo.Calls, dynamo.RateLimits},
	"calls-get":  {dynamo.Calls, dynamo.RateLimits},
	// The recording routes read the call record; DELETE writes it (recording deleted).
	"calls-recording-get":    {dynamo.Calls, dynamo.RateLimits},
	"calls-recording-delete": {dynamo.CallPlatformIDs, dynamo.Calls, dynamo.RateLimits},
	// DELETE /v1/calls/{id} writes the call redacted, with its session (its number).
	"calls-delete": {dynamo.CallPlatformIDs, dynamo.Calls, dynamo.Sessions, dynamo.RateLimits},
	"usage-get":    {dynamo.Calls, dynamo.RateLimits},
	// The account's doc; PATCH writes it with its logo item (same table).
	"account-get":    {dynamo.Accounts, dynamo.RateLimits},
	"account-update": {dynamo.Accounts, dynamo.RateLimits},
	// A call's metadata: the call is saved whole, with the claim of its platform id.
	"calls-update": {dynamo.CallPlatformIDs, dynamo.Calls, dynamo.RateLimits},

	// A SIP line dials through its trunk: the trunk read (has it an outbound side), the
	// line found by its number for LiveKit's outbound trunk.
	"sessions-create": {dynamo.Accounts, dynamo.Assistants, dynamo.CallPlatformIDs, dynamo.Calls, dynamo.Events, dynamo.Idempotency,
		dynamo.LineHandles, dynamo.Lines, dynamo.Sessions, dynamo.SIPTrunks, dynamo.Versions, dynamo.RateLimits},
	"sessions-list":   {dynamo.Sessions, dynamo.RateLimits},
	"sessions-get":    {dynamo.Sessions, dynamo.RateLimits},
	"sessions-delete": {dynamo.CallPlatformIDs, dynamo.Calls, dynamo.Events, dynamo.Sessions, dynamo.RateLimits},
	"sessions-tokens": {dynamo.Calls, dynamo.Idempotency, dynamo.Sessions, dynamo.RateLimits},
	// A session's metadata: the session is saved with its call (SaveSession).
	"sessions-update": {dynamo.CallPlatformIDs, dynamo.Calls, dynamo.Sessions, dynamo.RateLimits},

	// The hosted join page reads and writes nothing.
	"join-page": {},
	// The join page's info: the token's session, its account and the account's logo.
	"join-info":       {dynamo.Accounts, dynamo.Sessions},
	"livekit-webhook": {dynamo.CallPlatformIDs, dynamo.Calls, dynamo.Events, dynamo.Sessions},
	// Idempotency: the ids of the notifications received (simhook.StoreReplays).
	"platform-sim": {dynamo.Accounts, dynamo.Assistants, dynamo.CallDecisions, dynamo.CallPlatformIDs, dynamo.Calls,
		dynamo.Events, dynamo.Idempotency, dynamo.LineHandles, dynamo.Lines, dynamo.Sessions, dynamo.Versions, dynamo.WebhookAttempts,
		dynamo.WebhookEndpoints},
	// As platform-sim: an inbound call is routed by its line the same way.
	"platform-sip": {dynamo.Accounts, dynamo.Assistants, dynamo.CallDecisions, dynamo.CallPlatformIDs, dynamo.Calls,
		dynamo.Events, dynamo.Idempotency, dynamo.LineHandles, dynamo.Lines, dynamo.Sessions, dynamo.Versions, dynamo.WebhookAttempts,
		dynamo.WebhookEndpoints},
	"persona-report": {dynamo.CallPlatformIDs, dynamo.Calls, dynamo.Events, dynamo.Sessions},
	// A worker's LiveKit registration token: signed with the fleet's key, nothing stored.
	"persona-agent-token": {},
	// An own avatar's sheet, and the account's logo (kept beside the account) for the
	// connecting screen.
	"persona-avatar": {dynamo.Accounts, dynamo.Avatars},
	// It reads the call, its session and version, and the assistant's sealed tool secret;
	// it writes nothing.
	"persona-tool": {dynamo.Assistants, dynamo.Calls, dynamo.Sessions, dynamo.Versions},
	// The assistant's transfer_call: the call, its session, the version's destinations;
	// the destination policy (shared/destination): the call's line, its account, the
	// day's usage and live calls (in the calls table).
	"persona-transfer": {dynamo.Accounts, dynamo.CallPlatformIDs, dynamo.Calls, dynamo.Events, dynamo.Lines, dynamo.Sessions, dynamo.Versions},
	// The sweeper reads the version of a call whose worker's report never came: its
	// analysis, if the version asks for one, fails with call.ended. It carries out
	// customer_decides decisions: the decision, the line, and for a call handed to the
	// assistant its account, assistant and version, and whether the account subscribes to
	// call.transcript.
	"session-sweeper": {dynamo.Accounts, dynamo.Assistants, dynamo.CallDecisions, dynamo.CallPlatformIDs, dynamo.Calls,
		dynamo.Events, dynamo.Lines, dynamo.Sessions, dynamo.SIPTrunks, dynamo.Versions, dynamo.WebhookEndpoints},

	"campaigns-create":         {dynamo.Accounts, dynamo.Assistants, dynamo.Campaigns, dynamo.CampaignRecipients, dynamo.Idempotency, dynamo.Lines, dynamo.Versions, dynamo.RateLimits},
	"campaigns-list":           {dynamo.Campaigns, dynamo.RateLimits},
	"campaigns-get":            {dynamo.Campaigns, dynamo.CampaignRecipients, dynamo.RateLimits},
	"campaigns-recipients":     {dynamo.Campaigns, dynamo.CampaignRecipients, dynamo.RateLimits},
	"campaigns-report":         {dynamo.Campaigns, dynamo.CampaignRecipients, dynamo.RateLimits},
	"campaigns-recipients-add": {dynamo.Campaigns, dynamo.CampaignRecipients, dynamo.Idempotency, dynamo.RateLimits},
	"campaigns-start":          {dynamo.Assistants, dynamo.Campaigns, dynamo.CampaignRecipients, dynamo.Idempotency, dynamo.Versions, dynamo.RateLimits},
	"campaigns-pause":          {dynamo.Campaigns, dynamo.CampaignRecipients, dynamo.Idempotency, dynamo.RateLimits},
	"campaigns-resume":         {dynamo.Campaigns, dynamo.CampaignRecipients, dynamo.Idempotency, dynamo.RateLimits},
	"campaigns-cancel":         {dynamo.Campaigns, dynamo.CampaignRecipients, dynamo.Idempotency, dynamo.RateLimits},
	// The runner places sessions as sessions-create does, and settles and completes campaigns.
	"campaign-runner": {dynamo.Accounts, dynamo.Assistants, dynamo.CallPlatformIDs, dynamo.Calls, dynamo.CampaignRecipients, dynamo.Campaigns,
		dynamo.Events, dynamo.LineHandles, dynamo.Lines, dynamo.Sessions, dynamo.SIPTrunks, dynamo.Versions},

	"sip-trunks-list":   {dynamo.SIPTrunks, dynamo.RateLimits},
	"sip-trunks-create": {dynamo.SIPTrunks, dynamo.Idempotency, dynamo.RateLimits},
	"sip-trunks-get":    {dynamo.SIPTrunks, dynamo.RateLimits},
	"sip-trunks-update": {dynamo.SIPTrunks, dynamo.RateLimits},
	"sip-trunks-delete": {dynamo.SIPTrunks, dynamo.RateLimits},
	"lines-create":      {dynamo.Assistants, dynamo.Idempotency, dynamo.LineHandles, dynamo.Lines, dynamo.SIPTrunks, dynamo.Versions, dynamo.RateLimits},
	"lines-delete":      {dynamo.Assistants, dynamo.Calls, dynamo.LineHandles, dynamo.Lines, dynamo.SIPTrunks, dynamo.RateLimits},
	"call-transfers":    {dynamo.CallPlatformIDs, dynamo.Calls, dynamo.Events, dynamo.Sessions},
	// The destination policy reads the call's line and its account (shared/destination).
	"calls-transfer": {dynamo.Accounts, dynamo.CallPlatformIDs, dynamo.Calls, dynamo.Events, dynamo.Idempotency, dynamo.Lines,
		dynamo.Sessions, dynamo.RateLimits},
}
