package dynamo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Table names one kind of record.
type Table string

// The tables. template.yaml declares the same ones (a test checks they agree).
const (
	Accounts    Table = "accounts"     // accounts by id
	APIKeys     Table = "api_keys"     // API key hashes -> account
	Assistants  Table = "assistants"   // assistants by id; by account, newest first
	Versions    Table = "versions"     // immutable versions by (assistant, number); by id
	Lines       Table = "lines"        // lines by id; by account, newest first
	LineHandles Table = "line_handles" // (platform, handle) -> line: keeps handles unique
	Idempotency Table = "idempotency"  // Idempotency-Key records by (account, key), TTL 24 h

	WebhookEndpoints Table = "webhook_endpoints" // by id; by account, newest first
	Events           Table = "events"            // the event log by id; by account (and type), newest first; streamed to EventBridge
	WebhookAttempts  Table = "webhook_attempts"  // delivery attempts by (event, attempt id)
	CallDecisions    Table = "call_decisions"    // customer_decides answers by call; the first one wins

	Sessions        Table = "sessions"          // by id; by account, newest first
	Calls           Table = "calls"             // call records by id; by account, line or session, newest first
	CallPlatformIDs Table = "call_platform_ids" // (platform, platform call id) -> call: keeps them unique

	RateLimits Table = "rate_limits" // request counters per account and window (RateLimiter), TTL a minute past the window

	SIPTrunks Table = "sip_trunks" // SIP trunks by id; by account, newest first; all of them, for the reconcile

	Campaigns          Table = "campaigns"           // campaigns by id; by account (and status), newest first; the active ones
	CampaignRecipients Table = "campaign_recipients" // recipients by (campaign, id); by campaign and status
	Avatars            Table = "avatars"             // accounts' own avatars by id; by account, newest first

	// WebhookDeliveries is the local stack's delivery queue (Config.LocalOutbox); on AWS
	// the queue is SQS, and template.yaml has no such table.
	WebhookDeliveries Table = "webhook_deliveries"
)

// Retention is how long the event log and its delivery attempts are kept (TTL).
const Retention = 30 * 24 * time.Hour

// AllTables lists every table in a stable order.
var AllTables = []Table{Accounts, APIKeys, Assistants, Versions, Lines, LineHandles, Idempotency,
	WebhookEndpoints, Events, WebhookAttempts, CallDecisions, Sessions, Calls, CallPlatformIDs, RateLimits, SIPTrunks,
	Campaigns, CampaignRecipients, Avatars, WebhookDeliveries}

// EnvVar is the environment variable that names the table in a function's configuration
// (TABLE_ASSISTANTS, ...).
func (t Table) EnvVar() string { return "TABLE_" + strings.ToUpper(string(t)) }

// LogicalID is the table's resource name in template.yaml (AssistantsTable, ...).
func (t Table) LogicalID() string {
	var b strings.Builder
	for _, part := range strings.Split(string(t), "_") {
		switch part {
		case "api":
			b.WriteString("API")
		case "ids":
			b.WriteString("IDs")
		case "sip":
			b.WriteString("SIP")
		default:
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String() + "Table"
}

// Tables maps each table to its name in DynamoDB.
type Tables map[Table]string

// Name returns t's name, or "" when it is not configured.
func (ts Tables) Name(t Table) string { return ts[t] }

// TablesWithPrefix names every table prefix+name (for DynamoDB Local and tests).
func TablesWithPrefix(prefix string) Tables {
	ts := Tables{}
	for _, t := range AllTables {
		ts[t] = prefix + string(t)
	}
	return ts
}

// TablesFromEnv reads the TABLE_* variables a function is given through getenv
// (os.Getenv in main); tables it was not given stay unconfigured.
func TablesFromEnv(getenv func(string) string) Tables {
	ts := Tables{}
	for _, t := range AllTables {
		if v := getenv(t.EnvVar()); v != "" {
			ts[t] = v
		}
	}
	return ts
}

// Attribute is a key attribute: its name and scalar type (S or N).
type Attribute struct {
	Name string
	Type types.ScalarAttributeType
}

// Index is a global secondary index; every index projects all attributes.
type Index struct {
	Name      string
	Partition Attribute
	Sort      *Attribute
}

// Definition is a table's shape: what CreateTables makes and template.yaml declares.
type Definition struct {
	Table     Table
	Partition Attribute
	Sort      *Attribute
	Indexes   []Index
	// TTLAttribute, when set, holds the epoch second after which DynamoDB may delete the item.
	TTLAttribute string
	// Stream turns on the table's stream (new images): the events table's stream feeds
	// the relay that puts events on EventBridge.
	Stream bool
	// LocalOnly tables serve only the local stack; template.yaml does not declare them.
	LocalOnly bool
}

var idAttr = Attribute{"id", types.ScalarAttributeTypeS}

func strAttr(name string) Attribute { return Attribute{name, types.ScalarAttributeTypeS} }

// Definitions are the tables' shapes.
var Definitions = []Definition{
	{Table: Accounts, Partition: idAttr, Indexes: []Index{
		// Sparse: the accounts whose call retention is set (retention.go).
		{Name: "with_retention", Partition: strAttr("retention"), Sort: &idAttr},
	}},
	{Table: APIKeys, Partition: strAttr("hash"), Indexes: []Index{
		// An account's keys, oldest first (ids sort by creation time).
		{Name: "by_account", Partition: strAttr("account_id"), Sort: &idAttr},
	}},
	{Table: Assistants, Partition: idAttr, Indexes: []Index{
		// Newest first: ids sort by creation time, queried with ScanIndexForward false.
		{Name: "by_account", Partition: strAttr("account_id"), Sort: &idAttr},
		{Name: "by_account_status", Partition: strAttr("account_status"), Sort: &idAttr},
	}},
	{Table: Versions, Partition: strAttr("assistant_id"), Sort: &Attribute{"number", types.ScalarAttributeTypeN}, Indexes: []Index{
		{Name: "by_id", Partition: idAttr},
	}},
	{Table: Lines, Partition: idAttr, Indexes: []Index{
		{Name: "by_account", Partition: strAttr("account_id"), Sort: &idAttr},
	}},
	{Table: LineHandles, Partition: strAttr("platform_handle")},
	{Table: Idempotency, Partition: strAttr("account_id"), Sort: &Attribute{"key", types.ScalarAttributeTypeS}, TTLAttribute: "ttl"},
	{Table: WebhookEndpoints, Partition: idAttr, Indexes: []Index{
		{Name: "by_account", Partition: strAttr("account_id"), Sort: &idAttr},
	}},
	{Table: Events, Partition: idAttr, Stream: true, TTLAttribute: "ttl", Indexes: []Index{
		{Name: "by_account", Partition: strAttr("account_id"), Sort: &idAttr},
		{Name: "by_account_type", Partition: strAttr("account_type"), Sort: &idAttr},
		// Sparse: events the local delivery worker has not fanned out (LocalOutbox).
		{Name: "undispatched", Partition: strAttr("undispatched"), Sort: &idAttr},
	}},
	{Table: WebhookAttempts, Partition: strAttr("event_id"), Sort: &idAttr, TTLAttribute: "ttl"},
	{Table: CallDecisions, Partition: strAttr("call_id"), TTLAttribute: "ttl"},
	{Table: Sessions, Partition: idAttr, Indexes: []Index{
		{Name: "by_account", Partition: strAttr("account_id"), Sort: &idAttr},
		// Sparse, sharded: the sessions the sweeper still has work on, by due time
		// ("<time>#<id>"), so a sweep reads only what is due (session.SweepIndex).
		{Name: "due", Partition: strAttr("live_shard"), Sort: &Attribute{"sweep_due", types.ScalarAttributeTypeS}},
		// GET /v1/sessions?status= (account#status).
		{Name: "by_account_status", Partition: strAttr("account_status"), Sort: &idAttr},
	}},
	{Table: Calls, Partition: idAttr, Indexes: []Index{
		{Name: "by_account", Partition: strAttr("account_id"), Sort: &idAttr},
		{Name: "by_account_line", Partition: strAttr("account_line"), Sort: &idAttr},
		{Name: "by_account_session", Partition: strAttr("account_session"), Sort: &idAttr},
		// The filters of GET /v1/calls (listfilters.go): by assistant, and by status and
		// direction within each scope (account#[line#][assistant#]status#direction).
		// Sparse: a call without a line or an assistant is not in that scope's indexes.
		{Name: "by_account_assistant", Partition: strAttr("account_assistant"), Sort: &idAttr},
		{Name: "by_account_state", Partition: strAttr("account_state"), Sort: &idAttr},
		{Name: "by_account_line_state", Partition: strAttr("account_line_state"), Sort: &idAttr},
		{Name: "by_account_assistant_state", Partition: strAttr("account_assistant_state"), Sort: &idAttr},
		{Name: "by_account_line_assistant_state", Partition: strAttr("account_line_assistant_state"), Sort: &idAttr},
	}},
	{Table: CallPlatformIDs, Partition: strAttr("platform_call")},
	{Table: RateLimits, Partition: strAttr("bucket"), TTLAttribute: "ttl"},
	{Table: SIPTrunks, Partition: idAttr, Indexes: []Index{
		{Name: "by_account", Partition: strAttr("account_id"), Sort: &idAttr},
		// Every trunk, in one partition: the reconcile pages through them.
		{Name: "all", Partition: strAttr("all"), Sort: &idAttr},
	}},
	{Table: Campaigns, Partition: idAttr, Indexes: []Index{
		{Name: "by_account", Partition: strAttr("account_id"), Sort: &idAttr},
		{Name: "by_account_status", Partition: strAttr("account_status"), Sort: &idAttr},
		// Sparse: the campaigns the runner has work on (running, paused, canceled with
		// calls under way), in one partition.
		{Name: "active", Partition: strAttr("active"), Sort: &idAttr},
	}},
	{Table: CampaignRecipients, Partition: strAttr("campaign_id"), Sort: &idAttr, Indexes: []Index{
		// campaign#status: the runner's due and calling recipients, the counts, and
		// GET /v1/campaigns/{id}/recipients?status=.
		{Name: "by_campaign_status", Partition: strAttr("campaign_status"), Sort: &idAttr},
	}},
	{Table: Avatars, Partition: idAttr, Indexes: []Index{
		{Name: "by_account", Partition: strAttr("account_id"), Sort: &idAttr},
	}},
	{Table: WebhookDeliveries, Partition: idAttr, LocalOnly: true, Indexes: []Index{
		// Sparse: pending deliveries nobody is attempting, by due time; and the ones
		// in flight, by claim time.
		{Name: "due", Partition: strAttr("due"), Sort: &Attribute{"next_at", types.ScalarAttributeTypeS}},
		{Name: "claimed", Partition: strAttr("claimed"), Sort: &Attribute{"claimed_at", types.ScalarAttributeTypeS}},
	}},
}

// DefinitionOf returns a table's definition.
func DefinitionOf(t Table) (Definition, bool) {
	for _, d := range Definitions {
		if d.Table == t {
			return d, true
		}
	}
	return Definition{}, false
}

// CreateTableInput is the CreateTable request for d under the given name (on-demand
// billing, as template.yaml declares).
func (d Definition) CreateTableInput(name string) *dynamodb.CreateTableInput {
	attrs := map[string]types.ScalarAttributeType{}
	keySchema := func(pk Attribute, sk *Attribute) []types.KeySchemaElement {
		attrs[pk.Name] = pk.Type
		ks := []types.KeySchemaElement{{AttributeName: aws.String(pk.Name), KeyType: types.KeyTypeHash}}
		if sk != nil {
			attrs[sk.Name] = sk.Type
			ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(sk.Name), KeyType: types.KeyTypeRange})
		}
		return ks
	}
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		KeySchema:   keySchema(d.Partition, d.Sort),
	}
	if d.Stream {
		in.StreamSpecification = &types.StreamSpecification{
			StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage,
		}
	}
	for _, ix := range d.Indexes {
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName:  aws.String(ix.Name),
			KeySchema:  keySchema(ix.Partition, ix.Sort),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		})
	}
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{
			AttributeName: aws.String(name), AttributeType: attrs[name],
		})
	}
	return in
}

// CreateTables creates every configured table that does not exist yet, waits until each
// is active and turns on TTL where the definition has it. It is for DynamoDB Local and
// tests; on AWS, template.yaml creates the tables.
func (s *Store) CreateTables(ctx context.Context) error {
	for _, d := range Definitions {
		name := s.tables.Name(d.Table)
		if name == "" {
			continue
		}
		_, err := s.db.CreateTable(ctx, d.CreateTableInput(name))
		var inUse *types.ResourceInUseException
		if err != nil && !errors.As(err, &inUse) {
			return fmt.Errorf("create table %s: %w", name, err)
		}
		w := dynamodb.NewTableExistsWaiter(s.db, func(o *dynamodb.TableExistsWaiterOptions) {
			o.MinDelay = 50 * time.Millisecond
			o.MaxDelay = time.Second
		})
		if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 2*time.Minute); err != nil {
			return fmt.Errorf("wait for table %s: %w", name, err)
		}
		if inUse != nil {
			// An existing table: give it the indexes added since it was made.
			if err := s.addMissingIndexes(ctx, d, name); err != nil {
				return err
			}
		}
		if d.TTLAttribute != "" {
			_, err := s.db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
				TableName: aws.String(name),
				TimeToLiveSpecification: &types.TimeToLiveSpecification{
					AttributeName: aws.String(d.TTLAttribute), Enabled: aws.Bool(true),
				},
			})
			// Turning TTL on twice is refused; the first time is what counts.
			if err != nil && !strings.Contains(err.Error(), "TimeToLive is already enabled") {
				return fmt.Errorf("enable ttl on %s: %w", name, err)
			}
		}
	}
	return nil
}

// DeleteTables deletes every configured table (tests clean up with it).
func (s *Store) DeleteTables(ctx context.Context) error {
	var errs []error
	for _, d := range Definitions {
		name := s.tables.Name(d.Table)
		if name == "" {
			continue
		}
		_, err := s.db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		var nf *types.ResourceNotFoundException
		if err != nil && !errors.As(err, &nf) {
			errs = append(errs, fmt.Errorf("delete table %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
