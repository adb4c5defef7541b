// Package wire builds what one Bridgeline Lambda serves, from its environment: the
// configuration (config.FromEnv, the same as the local stack's), the DynamoDB store on the
// tables the function was granted (TABLE_* variables, Tables), the calling platforms, the
// delivery queue, and then the control plane every process assembles
// (controlplane.New), of which it serves the route of the function named. Every
// functions/<name>/main.go calls it once, at start-up, outside the handler, so clients
// are made once per execution environment.
//
// It imports no LiveKit package: the functions that talk to LiveKit pass a LiveKit
// (functions/internal/lkwire) to Handler or Sweeper, and the others pass nil, so that
// they link none of LiveKit's SDK (functions/deps_test.go).
package wire

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/bridgeline/bridgeline/events/awsbus"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/config"
	"github.com/bridgeline/bridgeline/shared/controlplane"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/simclient"
	"github.com/bridgeline/bridgeline/shared/platform/simhook"
	"github.com/bridgeline/bridgeline/shared/redact"
	"github.com/bridgeline/bridgeline/shared/secretbox"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/store/dynamo"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

// The functions' outbound calls are bounded so that a function answers (a 502 when a
// dependency is down) and cleans up before its own timeout; functions/timeouts_test.go
// checks each function's Timeout in template.yaml against these.
const (
	// LiveKitTimeout bounds one LiveKit server API call (CreateRoom, DeleteRoom, dispatch).
	LiveKitTimeout = 3 * time.Second
	// PlatformTimeout bounds one call to the calling platform's gateway (dial, answer,
	// reject, hang up).
	PlatformTimeout = 3 * time.Second
	// AWSAllowance is what a request's DynamoDB, SQS and EventBridge calls are allowed in
	// all (the SDK's own retries bound them; in-region they take milliseconds).
	AWSAllowance = 3 * time.Second
	// AnswerMargin is kept to write the answer once everything else is done.
	AnswerMargin = time.Second
	// DecisionReserve is what an inbound call needs after the customer's decision: at
	// worst a dispatch and a room deletion on LiveKit, an answer and a rejection on the
	// platform, the store, and the answer (session.Service.DecisionReserve).
	DecisionReserve = 2*LiveKitTimeout + 2*PlatformTimeout + AWSAllowance + AnswerMargin
)

// Store opens the DynamoDB store on the tables named by the function's TABLE_*
// variables (a function granted none, like avatars-list, gets a store it never uses).
// The endpoint is the SDK's: AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_DYNAMODB) points it
// at DynamoDB Local, SAM CLI or LocalStack.
func Store(ctx context.Context) (*dynamo.Store, error) {
	return dynamo.Open(ctx, dynamo.Config{Tables: dynamo.TablesFromEnv(os.Getenv)})
}

// Logger is the functions' logger: JSON lines to stderr, which Lambda sends to CloudWatch.
func Logger() *slog.Logger {
	return slog.New(redact.Handler(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
}

// Config is the control plane's configuration as a Lambda reads it: config.FromEnv, as
// on the local stack, with what a Lambda does not run turned off (no in-process persona
// workers) and the secrets read from Secrets Manager (the LiveKit key and secret, the
// persona report secret), then validated, so that Validate's checks across secrets
// (the report secret is not the LiveKit secret) compare the values in use.
// RATE_LIMIT_RPS and RATE_LIMIT_BURST mean what they mean locally, but New counts them
// in the table every instance shares (RateLimiter) instead of in-process, where an
// instance would see a sliver of the traffic. A malformed or out-of-range variable is an
// error naming it, and the function refuses to start.
func Config() (config.Config, error) {
	cfg, err := config.FromEnv()
	if err != nil {
		return cfg, err
	}
	cfg.Store, cfg.PersonaWorkers = "dynamodb", 0
	ctx := context.Background()
	if cfg.PersonaReportSecret, err = reportSecret(ctx); err != nil {
		return cfg, err
	}
	if err := liveKitCredentials(ctx, &cfg); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// LiveKitCredentialsFromSecrets reports whether the function's LiveKit key and secret
// come from Secrets Manager (LIVEKIT_CREDENTIALS_ARN, as template.yaml gives them to the
// functions that call LiveKit or check its signatures); the others have none.
func LiveKitCredentialsFromSecrets() bool { return os.Getenv("LIVEKIT_CREDENTIALS_ARN") != "" }

// liveKitCredentials puts the LiveKit key and secret of the Secrets Manager secret
// LIVEKIT_CREDENTIALS_ARN names (fields api_key and api_secret) into cfg.
func liveKitCredentials(ctx context.Context, cfg *config.Config) error {
	arn := os.Getenv("LIVEKIT_CREDENTIALS_ARN")
	if arn == "" {
		return nil
	}
	secret, err := Secret(ctx, arn)
	if err != nil {
		return fmt.Errorf("read LiveKit credentials: %w", err)
	}
	var creds struct {
		APIKey    string `json:"api_key"`
		APISecret string `json:"api_secret"`
	}
	if err := json.Unmarshal([]byte(secret), &creds); err != nil {
		return fmt.Errorf("LiveKit credentials secret: %w", err)
	}
	cfg.LiveKitAPIKey, cfg.LiveKitSecret = creds.APIKey, creds.APISecret
	return nil
}

// reportSecret is the persona workers' report secret: the string of the Secrets Manager
// secret PERSONA_REPORT_SECRET_ARN names (persona-report's), or PERSONA_REPORT_SECRET
// where there is no Secrets Manager. A function given neither gets a random secret that
// verifies no report: never the local stack's development default.
func reportSecret(ctx context.Context) (string, error) {
	if arn := os.Getenv("PERSONA_REPORT_SECRET_ARN"); arn != "" {
		v, err := Secret(ctx, arn)
		if err != nil {
			return "", fmt.Errorf("read the persona report secret: %w", err)
		}
		return v, nil
	}
	if v := os.Getenv("PERSONA_REPORT_SECRET"); v != "" {
		return v, nil
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// LiveKitParts are a function's LiveKit client: Rooms for the session service, and the
// verifier of LiveKit's and the workers' signatures.
type LiveKitParts struct {
	Rooms    session.Rooms
	Verifier httpapi.LiveKitVerifier
	// SIP is LiveKit's SIP API, for the functions that keep LiveKit's SIP trunks and
	// dispatch rules in step or transfer calls (lkwire.WithSIP); nil for the others.
	SIP controlplane.SIPLiveKit
}

// LiveKit builds a function's LiveKit client from its configuration: lkwire.FromEnv, which
// only the functions that talk to LiveKit import. Nil: the function has none.
type LiveKit func(ctx context.Context, cfg config.Config) (LiveKitParts, error)

// New assembles the control plane a function serves: its configuration, its store, the
// calling platforms (PlatformsFromEnv), LiveKit (lk; nil for none) and the delivery queue
// (DELIVERY_QUEUE_URL, given to events-redeliver only).
func New(ctx context.Context, function string, lk LiveKit, opts ...func(*controlplane.Deps)) (*controlplane.ControlPlane, error) {
	cfg, err := Config()
	if err != nil {
		return nil, err
	}
	s, err := Store(ctx)
	if err != nil {
		return nil, err
	}
	log := Logger().With("function", function)
	// A Lambda stops when it answers: work that goes on after the answer elsewhere runs
	// in place, before it. An API transfer, which waits longer than API Gateway does, goes
	// to the transfer queue instead where there is one (TRANSFER_QUEUE_URL, transfers.go).
	deps := controlplane.Deps{Store: s, DecisionReserve: DecisionReserve, Secrets: SecretsFromEnv(), Log: log,
		Later: func(task func()) { task() }}
	if url := os.Getenv("DELIVERY_QUEUE_URL"); url != "" {
		q, err := SQS(ctx)
		if err != nil {
			return nil, err
		}
		deps.Redeliver = &awsbus.Handler{Queue: q, QueueURL: url, Logger: log}
	}
	if deps.Platforms, deps.SimSecret, err = PlatformsFromEnv(ctx); err != nil {
		return nil, err
	}
	if deps.SIPSecret, err = SIPSecretFromEnv(ctx); err != nil {
		return nil, err
	}
	if deps.TransferQueue, err = transferQueueFromEnv(ctx); err != nil {
		return nil, err
	}
	if s.Tables().Name(dynamo.Idempotency) != "" {
		// Notification ids are claimed with a conditional put that every instance shares.
		deps.NotificationReplays = simhook.StoreReplays{Store: s}
	}
	if lk != nil {
		parts, err := lk(ctx, cfg)
		if err != nil {
			return nil, err
		}
		deps.Rooms, deps.LiveKit = parts.Rooms, parts.Verifier
		if parts.SIP != nil {
			deps.SIP = parts.SIP
		}
	}
	deps.RateLimiter = RateLimiter(s, cfg)
	for _, o := range opts {
		o(&deps)
	}
	return controlplane.New(cfg, deps)
}

// PageHandler is the join-page function's handler: the hosted join page's route
// (shared/joinpage), serving files (shared/joinpage/assets.FS, which only that
// function's main imports).
func PageHandler(ctx context.Context, files fs.FS) (http.Handler, error) {
	cp, err := New(ctx, "join-page", nil, func(d *controlplane.Deps) { d.JoinPage = files })
	if err != nil {
		return nil, err
	}
	return cp.FunctionHandler("join-page")
}

// RateLimiter is the per-account limit every instance of every /v1 function shares, in
// the rate_limits table (dynamo.RateLimiter): cfg.RateLimit a second (RATE_LIMIT_RPS; 0
// turns it off), cfg.RateBurst at once (RATE_LIMIT_BURST). A function not given the table
// (an internal receiver) has none.
func RateLimiter(s *dynamo.Store, cfg config.Config) httpapi.RateLimiter {
	if s.Tables().Name(dynamo.RateLimits) == "" || cfg.RateLimit == 0 {
		return httpapi.Unlimited
	}
	return &dynamo.RateLimiter{Store: s, Rate: cfg.RateLimit, Burst: cfg.RateBurst}
}

// Handler is the net/http handler of one /v1 function: its route only, authenticated by
// the API Gateway authorizer's context (internal receivers check their senders'
// signatures instead).
func Handler(ctx context.Context, function string, lk LiveKit) (http.Handler, error) {
	cp, err := New(ctx, function, lk)
	if err != nil {
		return nil, err
	}
	return cp.FunctionHandler(function)
}

// RouteTable is the whole route table as the functions serve it (for the template tests:
// no store or LiveKit is reached).
func RouteTable() ([]httpapi.Route, error) {
	cfg := config.Defaults()
	cfg.PersonaReportSecret = "route-table-verifies-no-report-0123456789" // no request reaches it
	cp, err := controlplane.New(cfg, controlplane.Deps{Store: dynamo.New(nil, nil), SimSecret: "route-table",
		SIPSecret: "route-table"})
	if err != nil {
		return nil, err
	}
	return cp.API.Routes(), nil
}

// Sweeper is the session-sweeper function's handler: each scheduled invocation sweeps
// every sweepTick for SWEEP_WINDOW_SECONDS (default 60: the one-minute schedule's
// invocations follow each other with no gap; an overlap is harmless, as every end and
// every release of a held call.ended is a conditional write).
//
// The tick bounds how late an assistant call's held call.ended goes out when its worker's
// final report never comes: session.DefaultReportWait (3 s) after the end, plus at most
// one tick, is 5 s.
//
// Each invocation also runs the accounts' call retention once, deleting recordings from
// the store openFiles opens (recwire.FromEnv, in the function's main: only it links the
// S3 client), once the configuration has passed, so that a malformed setting is what a
// function that cannot start names first.
func Sweeper(ctx context.Context, lk LiveKit, openFiles func(context.Context) (call.RecordingFiles, error)) (func(context.Context) error, error) {
	var filesErr error
	cp, err := New(ctx, "session-sweeper", lk, func(d *controlplane.Deps) { d.Recordings, filesErr = openFiles(ctx) })
	if err == nil {
		err = filesErr
	}
	if err != nil {
		return nil, err
	}
	return cp.SweepHandler(sweepTick), nil
}

// CampaignRunner is the campaign-runner function's handler: each scheduled invocation
// works the active campaigns every campaignTick for CAMPAIGN_WINDOW_SECONDS (default 60).
// Its one reserved execution keeps invocations from overlapping; should two overlap
// anyway, the campaigns' leases and the conditional claims keep each recipient's attempt
// to one dial.
func CampaignRunner(ctx context.Context, lk LiveKit) (func(context.Context) error, error) {
	cp, err := New(ctx, "campaign-runner", lk)
	if err != nil {
		return nil, err
	}
	window := 60 * time.Second
	if v, err := strconv.Atoi(os.Getenv("CAMPAIGN_WINDOW_SECONDS")); err == nil && v > 0 {
		window = time.Duration(v) * time.Second
	}
	return cp.CampaignRunner.Handler(window-campaignTick, campaignTick), nil
}

// campaignTick is how often the AWS runner works the campaigns.
const campaignTick = 2 * time.Second

// sweepTick is how often the AWS sweeper sweeps: one query per shard of the sessions'
// due index each tick, returning only the sessions due.
const sweepTick = 2 * time.Second

// Secret reads a Secrets Manager secret's string (once, at start).
func Secret(ctx context.Context, arn string) (string, error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return "", fmt.Errorf("aws config: %w", err)
	}
	out, err := secretsmanager.NewFromConfig(cfg).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.SecretString), nil
}

// PlatformsFromEnv reads the calling platforms' settings: SIM_SECRET_ARN, the Secrets
// Manager secret whose string is the sim's shared secret (read once at start; SIM_SECRET
// holds it directly where there is no Secrets Manager), and PLATFORM_GATEWAY_URL, the sim
// gateway (cmd/platform-gateway) the sim adapter drives. Without a gateway there is no
// adapter, and creating a session answers upstream_error.
func PlatformsFromEnv(ctx context.Context) ([]platform.Platform, string, error) {
	secret := os.Getenv("SIM_SECRET")
	if arn := os.Getenv("SIM_SECRET_ARN"); arn != "" {
		var err error
		if secret, err = Secret(ctx, arn); err != nil {
			return nil, "", fmt.Errorf("read the sim secret: %w", err)
		}
	}
	var platforms []platform.Platform
	if url := os.Getenv("PLATFORM_GATEWAY_URL"); url != "" {
		if secret == "" {
			return nil, "", errors.New("PLATFORM_GATEWAY_URL is set but neither SIM_SECRET_ARN nor SIM_SECRET")
		}
		c, err := simclient.New(simclient.Config{URL: url, Secret: secret, HTTPClient: &http.Client{Timeout: PlatformTimeout}})
		if err != nil {
			return nil, "", err
		}
		platforms = append(platforms, c)
	}
	return platforms, secret, nil
}

// SIPSecretFromEnv reads the secret the SIP gateway (cmd/sip-gateway, beside livekit-sip
// on the SIP fleet) signs its notifications with: the string of the Secrets Manager
// secret SIP_SECRET_ARN names (read once at start), or SIP_SECRET where there is no
// Secrets Manager. Only platform-sip is given it: empty leaves the SIP receiver out.
func SIPSecretFromEnv(ctx context.Context) (string, error) {
	if arn := os.Getenv("SIP_SECRET_ARN"); arn != "" {
		v, err := Secret(ctx, arn)
		if err != nil {
			return "", fmt.Errorf("read the SIP gateway secret: %w", err)
		}
		return v, nil
	}
	return os.Getenv("SIP_SECRET"), nil
}

// SQS is an SQS client from the standard AWS configuration.
func SQS(ctx context.Context) (*sqs.Client, error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("aws config: %w", err)
	}
	return sqs.NewFromConfig(cfg), nil
}

// EventBridge is an EventBridge client from the standard AWS configuration.
func EventBridge(ctx context.Context) (*eventbridge.Client, error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("aws config: %w", err)
	}
	return eventbridge.NewFromConfig(cfg), nil
}

// Deliverer is the webhook-deliver function's handler: awsbus.Handler over the control
// plane's endpoints and deliverer, the store's attempt log and the delivery queues.
func Deliverer(ctx context.Context) (*awsbus.Handler, error) {
	url := os.Getenv("DELIVERY_QUEUE_URL")
	if url == "" {
		return nil, errors.New("DELIVERY_QUEUE_URL is not set")
	}
	cp, err := New(ctx, "webhook-deliver", nil)
	if err != nil {
		return nil, err
	}
	q, err := SQS(ctx)
	if err != nil {
		return nil, err
	}
	return &awsbus.Handler{
		Deliverer:          cp.Deliverer,
		Subscribers:        cp.Endpoints,
		Log:                cp.Store,
		Queue:              q,
		QueueURL:           url,
		DeadLetterQueueURL: os.Getenv("DEAD_LETTER_QUEUE_URL"),
		Logger:             Logger().With("function", "webhook-deliver"),
	}, nil
}

// SecretsFromEnv seals webhook signing secrets with the KMS key WEBHOOK_SECRETS_KEY_ID
// names (envelope encryption, secretbox.KMS). template.yaml sets it on the functions that
// seal a secret (create, rotate: kms:GenerateDataKey) and those that sign with one
// (webhook-deliver, platform-sim: kms:Decrypt); the others read endpoints without
// touching their secrets and get nil. The AWS configuration loads at the first seal or
// open, so a function that never uses the key makes no call for it.
func SecretsFromEnv() webhookendpoint.Sealer {
	id := os.Getenv("WEBHOOK_SECRETS_KEY_ID")
	if id == "" {
		return nil
	}
	return &lazyKMS{keyID: id}
}

// lazyKMS is a secretbox.KMS whose client is built at first use.
type lazyKMS struct {
	keyID string
	once  sync.Once
	box   *secretbox.KMS
	err   error
}

func (l *lazyKMS) get(ctx context.Context) (*secretbox.KMS, error) {
	l.once.Do(func() {
		cfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			l.err = fmt.Errorf("aws config: %w", err)
			return
		}
		l.box = &secretbox.KMS{Client: kms.NewFromConfig(cfg), KeyID: l.keyID}
	})
	return l.box, l.err
}

func (l *lazyKMS) Seal(ctx context.Context, plain string) (string, error) {
	b, err := l.get(ctx)
	if err != nil {
		return "", err
	}
	return b.Seal(ctx, plain)
}

func (l *lazyKMS) Open(ctx context.Context, sealed string) (string, error) {
	b, err := l.get(ctx)
	if err != nil {
		return "", err
	}
	return b.Open(ctx, sealed)
}
