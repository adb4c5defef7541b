// Package wire builds what one Bridgeline Lambda serves, from its environment: the
// DynamoDB store on the tables the function was granted (TABLE_* variables), the same
// services and handlers the local stack uses, and the route of the function named.
// Every functions/<name>/main.go calls it once, at start-up, outside the handler, so
// clients are made once per execution environment.
package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/bridgeline/bridgeline/events/awsbus"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/store/dynamo"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
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

// API wires the services over s, as the local stack does. There is no in-process rate
// limiter: a Lambda instance sees a sliver of the traffic, so API Gateway's route
// throttling (template.yaml) limits rates instead.
func API(s *dynamo.Store, redeliver httpapi.Redeliverer, log *slog.Logger) *httpapi.API {
	hooks := &httpapi.Webhooks{
		Endpoints: &webhookendpoint.Service{Store: s},
		Events:    s,
		Redeliver: redeliver,
	}
	answers := &httpapi.CallAnswers{Decisions: s, Now: time.Now}
	return &httpapi.API{
		Accounts:    s,
		Assistants:  &assistant.Service{Store: s, Now: time.Now},
		Lines:       &line.Service{Store: s, Assistants: s, Now: time.Now},
		Idempotency: s,
		Log:         log,
		Now:         time.Now,
		Extra:       slices.Concat(hooks.Routes(), answers.Routes()),
	}
}

// Handler is the net/http handler of one /v1 function: its route only, authenticated by
// the API Gateway authorizer's context.
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
	api := API(s, redeliver, log)
	return api.FunctionHandler(function, api.LambdaAuth)
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
	eps := &webhookendpoint.Service{Store: s}
	return &awsbus.Handler{
		Deliverer:          &delivery.Deliverer{Endpoints: eps},
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
