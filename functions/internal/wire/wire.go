// Package wire builds what one Bridgeline Lambda serves, from its environment: the
// DynamoDB store on the tables the function was granted (TABLE_* variables), the same
// services and handlers the local stack uses, and the route of the function named.
// Every functions/<name>/main.go calls it once, at start-up, outside the handler, so
// clients are made once per execution environment.
package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/bridgeline/bridgeline/events/awsbus"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/decision"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/simclient"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/rtc/lkapi"
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
	return dynamo.Open(ctx, dynamo.Config{Tables: dynamo.TablesFromEnv()})
}

// Logger is the functions' logger: JSON lines to stderr, which Lambda sends to CloudWatch.
func Logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// Media is how functions reach LiveKit and the calling platforms: Rooms for the session
// service, and RTC (nil without credentials) for the receivers that verify LiveKit's and
// the workers' signatures; Platforms are the calling-platform adapters by name (the sim
// gateway's, PlatformsFromEnv), and SimSecret verifies the sim's notifications (empty
// leaves the platform-sim route out).
type Media struct {
	Rooms     session.Rooms
	RTC       *lkapi.Client
	Platforms map[string]platform.Platform
	SimSecret string
	// HostedVoices are the fleet's hosted speech API voices a draft may name (TTS_VOICES).
	HostedVoices []string
}

// API wires the services over s, as the local stack does. There is no in-process rate
// limiter: a Lambda instance sees a sliver of the traffic, so API Gateway's route
// throttling (template.yaml) limits rates instead. Calling platforms are reached over
// HTTP (media.Platforms): the sim runs as a platform gateway beside the media fleet.
func API(s *dynamo.Store, media Media, redeliver httpapi.Redeliverer, log *slog.Logger) *httpapi.API {
	hooks := &httpapi.Webhooks{
		Endpoints: &webhookendpoint.Service{Store: s, Secrets: SecretsFromEnv(), Destinations: egress.PolicyFromEnv()},
		Events:    s,
		Redeliver: redeliver,
	}
	answers := &httpapi.CallAnswers{Decisions: s, Now: time.Now}
	sessions := Sessions(s, media, log)
	return &httpapi.API{
		Accounts:    s,
		Assistants:  &assistant.Service{Store: s, HostedVoices: media.HostedVoices, Now: time.Now},
		Lines:       &line.Service{Store: s, Assistants: s, Now: time.Now},
		Idempotency: s,
		Log:         log,
		Now:         time.Now,
		Extra: slices.Concat(hooks.Routes(), answers.Routes(),
			(&httpapi.Sessions{Service: sessions}).Routes(),
			(&httpapi.Receivers{Sessions: sessions, RTC: media.RTC, SimSecret: media.SimSecret}).Routes()),
	}
}

// Sessions is the session service over s. MAX_SESSION_MINUTES bounds a session's life
// (the sweeper ends longer ones). Its Decider (Asker) runs customer_decides for the
// inbound calls platform-sim routes; other functions never reach it.
func Sessions(s *dynamo.Store, media Media, log *slog.Logger) *session.Service {
	var maxDur time.Duration
	if v, err := strconv.ParseFloat(os.Getenv("MAX_SESSION_MINUTES"), 64); err == nil && v > 0 {
		maxDur = time.Duration(v * float64(time.Minute))
	}
	platforms := media.Platforms
	if platforms == nil {
		platforms = map[string]platform.Platform{}
	}
	return &session.Service{Records: s, Lines: s, Assistants: s, Accounts: s, Rooms: media.Rooms,
		Platforms: platforms, Decider: Asker(s, log), DecisionReserve: DecisionReserve,
		MaxDuration: maxDur, Log: log, Now: time.Now}
}

// Asker asks the customer about an inbound call on a customer_decides line, as the local
// stack does: call.incoming is logged and posted to the subscribed endpoints, and the
// first answer (a response body or POST /v1/calls/{id}/answer) or the line's decision
// timeout decides. It uses the call decisions, events, webhook endpoints and webhook
// attempts tables.
func Asker(s *dynamo.Store, log *slog.Logger) *decision.Asker {
	dest := egress.PolicyFromEnv()
	eps := &webhookendpoint.Service{Store: s, Secrets: SecretsFromEnv(), Destinations: dest}
	client := delivery.NewClient(dest)
	client.Timeout = 0 // call.incoming is bounded by the line's decision timeout instead
	return &decision.Asker{Store: s, Events: s, Subscribers: eps, Logger: log,
		Deliverer: &delivery.Deliverer{Endpoints: eps, Client: client}}
}

// Sweeper is the session-sweeper function's handler: each scheduled invocation sweeps
// every sweepTick for SWEEP_WINDOW_SECONDS (default 60: the one-minute schedule's
// invocations follow each other with no gap; an overlap is harmless, as every end and
// every release of a held call.ended is a conditional write).
//
// The tick bounds how late an assistant call's held call.ended goes out when its worker's
// final report never comes: session.DefaultReportWait (3 s) after the end, plus at most
// one tick, is 5 s.
func Sweeper(ctx context.Context) (func(context.Context) error, error) {
	s, err := Store(ctx)
	if err != nil {
		return nil, err
	}
	media, err := MediaFromEnv(ctx)
	if err != nil {
		return nil, err
	}
	window := 60 * time.Second
	if v, err := strconv.Atoi(os.Getenv("SWEEP_WINDOW_SECONDS")); err == nil && v > 0 {
		window = time.Duration(v) * time.Second
	}
	return Sessions(s, media, Logger().With("function", "session-sweeper")).SweepHandler(window, sweepTick), nil
}

// sweepTick is how often the AWS sweeper sweeps: one query per shard of the live index
// each tick.
const sweepTick = 2 * time.Second

// Handler is the net/http handler of one /v1 function: its route only, authenticated by
// the API Gateway authorizer's context (internal receivers check their senders'
// signatures instead).
func Handler(ctx context.Context, function string) (http.Handler, error) {
	s, err := Store(ctx)
	if err != nil {
		return nil, err
	}
	log := Logger().With("function", function)
	var redeliver httpapi.Redeliverer = noQueue{}
	if url := os.Getenv("DELIVERY_QUEUE_URL"); url != "" {
		q, err := SQS(ctx)
		if err != nil {
			return nil, err
		}
		redeliver = &awsbus.Handler{Queue: q, QueueURL: url, Logger: log}
	}
	media, err := MediaFromEnv(ctx)
	if err != nil {
		return nil, err
	}
	api := API(s, media, redeliver, log)
	h, err := api.FunctionHandler(function, api.LambdaAuth)
	if err != nil {
		return nil, err
	}
	return h, nil
}

// MediaFromEnv reads LiveKit's settings (liveKitFromEnv), the calling platforms'
// (PlatformsFromEnv) and the hosted voices the fleet offers (TTS_VOICES, comma-separated).
func MediaFromEnv(ctx context.Context) (Media, error) {
	m, err := liveKitFromEnv(ctx)
	if err != nil {
		return Media{}, err
	}
	if m.HostedVoices, err = persona.ParseHostedVoices(os.Getenv("TTS_VOICES")); err != nil {
		return Media{}, err
	}
	m.Platforms, m.SimSecret, err = PlatformsFromEnv(ctx)
	return m, err
}

// PlatformsFromEnv reads the calling platforms' settings: SIM_SECRET_ARN, the Secrets
// Manager secret whose string is the sim's shared secret (read once at start; SIM_SECRET
// holds it directly where there is no Secrets Manager), and PLATFORM_GATEWAY_URL, the sim
// gateway (cmd/platform-gateway) the sim adapter drives. Without a gateway there is no
// adapter, and creating a session answers upstream_error.
func PlatformsFromEnv(ctx context.Context) (map[string]platform.Platform, string, error) {
	secret := os.Getenv("SIM_SECRET")
	if arn := os.Getenv("SIM_SECRET_ARN"); arn != "" {
		cfg, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, "", fmt.Errorf("aws config: %w", err)
		}
		out, err := secretsmanager.NewFromConfig(cfg).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
		if err != nil {
			return nil, "", fmt.Errorf("read the sim secret: %w", err)
		}
		secret = aws.ToString(out.SecretString)
	}
	platforms := map[string]platform.Platform{}
	if url := os.Getenv("PLATFORM_GATEWAY_URL"); url != "" {
		if secret == "" {
			return nil, "", errors.New("PLATFORM_GATEWAY_URL is set but neither SIM_SECRET_ARN nor SIM_SECRET")
		}
		c, err := simclient.New(simclient.Config{URL: url, Secret: secret, HTTPClient: &http.Client{Timeout: PlatformTimeout}})
		if err != nil {
			return nil, "", err
		}
		platforms[c.Name()] = c
	}
	return platforms, secret, nil
}

// liveKitFromEnv reads LiveKit's settings: LIVEKIT_PUBLIC_URL (the rtc_url clients get),
// and for functions that call LiveKit or check its signatures, LIVEKIT_URL and
// LIVEKIT_CREDENTIALS_ARN, the Secrets Manager secret holding api_key and api_secret,
// read once at start. TOKEN_TTL_MINUTES sets participant tokens' lifetime.
func liveKitFromEnv(ctx context.Context) (Media, error) {
	public := os.Getenv("LIVEKIT_PUBLIC_URL")
	arn := os.Getenv("LIVEKIT_CREDENTIALS_ARN")
	if arn == "" {
		return Media{Rooms: noLiveKit{public: public}}, nil
	}
	var ttl time.Duration
	if v := os.Getenv("TOKEN_TTL_MINUTES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return Media{}, fmt.Errorf("TOKEN_TTL_MINUTES: not an integer: %q", v)
		}
		ttl = time.Duration(n) * time.Minute
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return Media{}, fmt.Errorf("aws config: %w", err)
	}
	out, err := secretsmanager.NewFromConfig(cfg).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
	if err != nil {
		return Media{}, fmt.Errorf("read LiveKit credentials: %w", err)
	}
	var creds struct {
		APIKey    string `json:"api_key"`
		APISecret string `json:"api_secret"`
	}
	if err := json.Unmarshal([]byte(aws.ToString(out.SecretString)), &creds); err != nil {
		return Media{}, fmt.Errorf("LiveKit credentials secret: %w", err)
	}
	c, err := lkapi.New(lkapi.Config{URL: os.Getenv("LIVEKIT_URL"), PublicURL: public,
		APIKey: creds.APIKey, APISecret: creds.APISecret, TokenTTL: ttl,
		HTTPClient: &http.Client{Timeout: LiveKitTimeout}})
	if err != nil {
		return Media{}, err
	}
	return Media{Rooms: c, RTC: c}, nil
}

// noLiveKit is the Rooms of functions given no LiveKit credentials: they only show
// rtc_url, and anything else is a configuration error.
type noLiveKit struct{ public string }

var errNoLiveKit = errors.New("this function has no LIVEKIT_CREDENTIALS_ARN")

func (n noLiveKit) PublicURL() string { return n.public }

func (noLiveKit) CreateRoom(context.Context, rtc.RoomSpec) (rtc.Room, error) {
	return rtc.Room{}, errNoLiveKit
}
func (noLiveKit) DeleteRoom(context.Context, string) error                  { return errNoLiveKit }
func (noLiveKit) Dispatch(context.Context, string, rtc.AgentDispatch) error { return errNoLiveKit }
func (noLiveKit) ParticipantToken(rtc.Grant) (rtc.Token, error)             { return rtc.Token{}, errNoLiveKit }

// SecretsFromEnv seals webhook signing secrets with the KMS key WEBHOOK_SECRETS_KEY_ID
// names (envelope encryption, secretbox.KMS). template.yaml sets it on the functions that
// seal a secret (create, rotate: kms:GenerateDataKey) and those that sign with one
// (webhook-deliver, platform-sim: kms:Decrypt); the others read endpoints without
// touching their secrets and get nil. The AWS configuration loads once, at the first
// seal or open, so a function that never uses the key makes no call for it.
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
		cfg, err := config.LoadDefaultConfig(ctx)
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

// SQS is an SQS client from the standard AWS configuration.
func SQS(ctx context.Context) (*sqs.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("aws config: %w", err)
	}
	return sqs.NewFromConfig(cfg), nil
}

// EventBridge is an EventBridge client from the standard AWS configuration.
func EventBridge(ctx context.Context) (*eventbridge.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("aws config: %w", err)
	}
	return eventbridge.NewFromConfig(cfg), nil
}

// Deliverer is the webhook-deliver function's handler: awsbus.Handler over the store's
// endpoints and attempt log and the delivery queues.
func Deliverer(ctx context.Context) (*awsbus.Handler, error) {
	s, err := Store(ctx)
	if err != nil {
		return nil, err
	}
	url := os.Getenv("DELIVERY_QUEUE_URL")
	if url == "" {
		return nil, errors.New("DELIVERY_QUEUE_URL is not set")
	}
	q, err := SQS(ctx)
	if err != nil {
		return nil, err
	}
	dest := egress.PolicyFromEnv()
	eps := &webhookendpoint.Service{Store: s, Secrets: SecretsFromEnv(), Destinations: dest}
	return &awsbus.Handler{
		Deliverer:          &delivery.Deliverer{Endpoints: eps, Client: delivery.NewClient(dest)},
		Subscribers:        eps,
		Log:                s,
		Queue:              q,
		QueueURL:           url,
		DeadLetterQueueURL: os.Getenv("DEAD_LETTER_QUEUE_URL"),
		Logger:             Logger().With("function", "webhook-deliver"),
	}, nil
}

// noQueue is the Redeliverer of functions that have no delivery queue: only
// events-redeliver is given one, and only it redelivers.
type noQueue struct{}

func (noQueue) Redeliver(context.Context, callevent.Event, []string) error {
	return errors.New("this function has no DELIVERY_QUEUE_URL")
}
