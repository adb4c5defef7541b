// Package dynamo is Bridgeline's DynamoDB store, used by the Lambda functions (and by
// `bridgeline dev --store dynamodb` against DynamoDB Local). It implements the same store
// interfaces as the SQLite store and passes the same conformance suite (storetest).
//
// One table per kind of record (see tables.go), each item holding its key and index
// attributes, the attributes its conditions test (revision, counters, status), and the
// record itself as JSON in `doc`, so both stores round-trip a record identically.
// Every write that must not be lost or doubled is a condition expression or a
// transaction; a failed condition is apierr.ErrConflict.
//
// A function is granted only the tables it uses: a Store whose Tables leave a table's
// name empty answers any use of that table with an error naming it, so a missing grant
// shows up in tests, not as AccessDenied in production.
package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/store"
)

// Config says where the tables are.
type Config struct {
	// Tables names each table; an empty name means this process may not use it.
	Tables Tables
	// Region defaults to the AWS SDK's (AWS_REGION); "us-east-1" when none is set.
	Region string
	// Endpoint overrides the DynamoDB endpoint (DynamoDB Local). Empty leaves the SDK's
	// own resolution, which honours AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_DYNAMODB
	// (SAM CLI, LocalStack).
	Endpoint string
	// LocalOutbox keeps the delivery queue of the local stack's webhook worker in the
	// store (webhook_deliveries); on AWS the events table's stream feeds EventBridge.
	LocalOutbox bool
}

// Every store is a whole store.Store: the assertion keeps it one.
var _ store.Store = (*Store)(nil)

// Store implements the domain store interfaces on DynamoDB.
type Store struct {
	db          *dynamodb.Client
	tables      Tables
	localOutbox bool
}

// Open builds a DynamoDB client from the standard AWS configuration chain (environment,
// shared config, the Lambda role) and returns a Store on cfg.Tables.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	var opts []func(*config.LoadOptions) error
	if cfg.Region != "" {
		opts = append(opts, config.WithRegion(cfg.Region))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("dynamo: aws config: %w", err)
	}
	if awsCfg.Region == "" {
		awsCfg.Region = "us-east-1"
	}
	var clientOpts []func(*dynamodb.Options)
	if cfg.Endpoint != "" {
		clientOpts = append(clientOpts, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(cfg.Endpoint) })
		if !envCredentials(awsCfg) {
			// DynamoDB Local accepts any credentials, and a developer machine may have
			// none: without this the SDK's chain would go asking the EC2 metadata
			// service.
			awsCfg.Credentials = credentials.NewStaticCredentialsProvider("local", "local", "")
		}
	}
	s := New(dynamodb.NewFromConfig(awsCfg, clientOpts...), cfg.Tables)
	s.localOutbox = cfg.LocalOutbox
	return s, nil
}

// envCredentials says whether the configuration chain found keys in the environment
// (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, as the SDK's environment source reads
// them): the chain loaded them, so this package reads no variable itself.
func envCredentials(cfg aws.Config) bool {
	for _, src := range cfg.ConfigSources {
		if env, ok := src.(config.EnvConfig); ok && env.Credentials.HasKeys() {
			return true
		}
	}
	return false
}

// New returns a Store on an existing client.
func New(db *dynamodb.Client, tables Tables) *Store {
	return &Store{db: db, tables: tables}
}

// Client is the underlying DynamoDB client.
func (s *Store) Client() *dynamodb.Client { return s.db }

// Tables returns the table names the store uses.
func (s *Store) Tables() Tables { return s.tables }

// table returns the configured name of a table, or an error saying it is not granted.
func (s *Store) table(t Table) (*string, error) {
	name := s.tables.Name(t)
	if name == "" {
		return nil, fmt.Errorf("dynamo: table %s is not configured for this process (%s unset)", t, t.EnvVar())
	}
	return aws.String(name), nil
}

// item is a record's attributes.
type item = map[string]types.AttributeValue

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func num[T int | int64](v T) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(int64(v), 10)}
}

// docItem returns an item holding v as JSON in `doc`, plus the given attributes.
func docItem(v any, attrs item) item {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("dynamo: marshal %T: %v", v, err))
	}
	attrs["doc"] = str(string(b))
	return attrs
}

// fromDoc decodes the JSON record in an item's `doc`.
func fromDoc[T any](it item) (T, error) {
	var v T
	d, ok := it["doc"].(*types.AttributeValueMemberS)
	if !ok {
		return v, errors.New("dynamo: item has no doc")
	}
	if err := json.Unmarshal([]byte(d.Value), &v); err != nil {
		return v, fmt.Errorf("dynamo: decode %T: %w", v, err)
	}
	return v, nil
}

func getS(it item, name string) string {
	if v, ok := it[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func getN(it item, name string) int64 {
	if v, ok := it[name].(*types.AttributeValueMemberN); ok {
		n, _ := strconv.ParseInt(v.Value, 10, 64)
		return n
	}
	return 0
}

// getDoc reads one item with a strongly consistent read and decodes its doc; no item is
// apierr.ErrNotFound.
func getDoc[T any](ctx context.Context, s *Store, t Table, key item) (T, error) {
	var zero T
	it, err := s.getItem(ctx, t, key)
	if err != nil {
		return zero, err
	}
	return fromDoc[T](it)
}

func (s *Store) getItem(ctx context.Context, t Table, key item) (item, error) {
	name, err := s.table(t)
	if err != nil {
		return nil, err
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: name, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", t, err)
	}
	if out.Item == nil {
		return nil, apierr.ErrNotFound
	}
	return out.Item, nil
}

// conflict turns a failed condition (alone or inside a transaction), or a transaction
// that collided with another on the same item, into apierr.ErrConflict; the services read
// again and retry on it.
func conflict(err error) error {
	if err == nil {
		return nil
	}
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return apierr.ErrConflict
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			switch aws.ToString(r.Code) {
			case "ConditionalCheckFailed", "TransactionConflict":
				return apierr.ErrConflict
			}
		}
	}
	var tcx *types.TransactionConflictException
	if errors.As(err, &tcx) {
		return apierr.ErrConflict
	}
	return err
}

// cancelReasons returns the cancellation codes of a cancelled transaction, one per
// action in order ("None" for actions that did not fail), or nil for other errors.
func cancelReasons(err error) []string {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return nil
	}
	out := make([]string, len(tce.CancellationReasons))
	for i, r := range tce.CancellationReasons {
		out[i] = aws.ToString(r.Code)
	}
	return out
}

// timeLayout sorts as text in time order (fixed width, always UTC).
const timeLayout = "2006-01-02T15:04:05.000000000Z"

func timeAttr(t time.Time) types.AttributeValue { return str(t.UTC().Format(timeLayout)) }
