package wire

import "github.com/bridgeline/bridgeline/shared/store/dynamo"

// Tables are the store tables each function uses: template.yaml grants a function exactly
// these, and names each in its TABLE_* variables (functions/template_test.go checks both;
// the runtime test checks that each function uses no other table, and all of them).
// This map is the one place that says so: the HTTP layer's routes name no table.
var Tables = map[string][]dynamo.Table{
	"authorizer":      {dynamo.Accounts, dynamo.APIKeys},
	"event-relay":     {},
	"webhook-deliver": {dynamo.WebhookEndpoints, dynamo.WebhookAttempts},

	"assistants-list":          {dynamo.Assistants, dynamo.Versions},
	"assistants-create":        {dynamo.Assistants, dynamo.Idempotency},
	"assistants-get":           {dynamo.Assistants, dynamo.Versions},
	"assistants-versions-list": {dynamo.Assistants, dynamo.Versions},
	"assistants-update":        {dynamo.Assistants, dynamo.Versions},
	"assistants-publish":       {dynamo.Assistants, dynamo.Idempotency, dynamo.Versions},
	"assistants-activate":      {dynamo.Assistants, dynamo.Idempotency, dynamo.Versions},
	"assistants-duplicate":     {dynamo.Assistants, dynamo.Idempotency, dynamo.Versions},
	"assistants-archive":       {dynamo.Assistants, dynamo.Idempotency, dynamo.Versions},
	"avatars-list":             {},
	"voices-list":              {},

	"lines-list":   {dynamo.Lines},
	"lines-get":    {dynamo.Lines},
	"lines-update": {dynamo.Assistants, dynamo.Lines, dynamo.Versions},
	"lines-assign": {dynamo.Assistants, dynamo.Idempotency, dynamo.Lines, dynamo.Versions},

	"webhook-endpoints-list":          {dynamo.WebhookEndpoints},
	"webhook-endpoints-create":        {dynamo.Idempotency, dynamo.WebhookEndpoints},
	"webhook-endpoints-get":           {dynamo.WebhookEndpoints},
	"webhook-endpoints-update":        {dynamo.WebhookEndpoints},
	"webhook-endpoints-delete":        {dynamo.WebhookEndpoints},
	"webhook-endpoints-rotate-secret": {dynamo.Idempotency, dynamo.WebhookEndpoints},
	"events-list":                     {dynamo.Events},
	"events-get":                      {dynamo.Events, dynamo.WebhookAttempts},
	"events-redeliver":                {dynamo.Events, dynamo.Idempotency, dynamo.WebhookAttempts, dynamo.WebhookEndpoints},

	// A decline answers the call object, read from the calls table.
	"calls-answer": {dynamo.CallDecisions, dynamo.Calls, dynamo.Idempotency},
	"calls-list":   {dynamo.Calls},
	"calls-get":    {dynamo.Calls},

	"sessions-create": {dynamo.Accounts, dynamo.Assistants, dynamo.CallPlatformIDs, dynamo.Calls, dynamo.Events,
		dynamo.Idempotency, dynamo.Lines, dynamo.Sessions, dynamo.Versions},
	"sessions-list":   {dynamo.Sessions},
	"sessions-get":    {dynamo.Sessions},
	"sessions-delete": {dynamo.CallPlatformIDs, dynamo.Calls, dynamo.Events, dynamo.Sessions},
	"sessions-tokens": {dynamo.Idempotency, dynamo.Sessions},

	"livekit-webhook": {dynamo.CallPlatformIDs, dynamo.Calls, dynamo.Events, dynamo.Sessions},
	"platform-sim": {dynamo.Accounts, dynamo.Assistants, dynamo.CallDecisions, dynamo.CallPlatformIDs, dynamo.Calls,
		dynamo.Events, dynamo.LineHandles, dynamo.Lines, dynamo.Sessions, dynamo.Versions, dynamo.WebhookAttempts,
		dynamo.WebhookEndpoints},
	"persona-report":  {dynamo.CallPlatformIDs, dynamo.Calls, dynamo.Events, dynamo.Sessions},
	"session-sweeper": {dynamo.CallPlatformIDs, dynamo.Calls, dynamo.Events, dynamo.Sessions},
}
