package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/bridgeline/bridgeline/events/decision"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/secretbox"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

// webhookStore is what local webhooks need of the store: endpoints, the event log, the
// persistent outbox and customer_decides decisions (the SQLite store has them all).
type webhookStore interface {
	webhookendpoint.Store
	delivery.Log
	delivery.Outbox
	decision.Store
	decision.EventLog
}

// localWebhooks is the running webhook side of the local stack.
type localWebhooks struct {
	// Asker runs customer_decides for inbound calls (the sim's inbound hook calls Ask).
	Asker  *decision.Asker
	Worker *delivery.Worker
	// Stop ends the worker and waits for the attempts in flight to be stored.
	Stop func()
}

// startWebhooks adds the webhook endpoint, event and call-answer routes to api and runs
// the delivery worker until ctx ends or Stop. Signing secrets are sealed at rest with the
// key file under dataDir (secretbox.KeyFileName, created 0600 on first start).
func startWebhooks(ctx context.Context, s any, api *httpapi.API, dest egress.Policy, dataDir string, log *slog.Logger) (*localWebhooks, error) {
	ws, ok := s.(webhookStore)
	if !ok {
		return nil, fmt.Errorf("store %T keeps no webhook outbox", s)
	}
	key, err := secretbox.OpenKeyFile(filepath.Join(dataDir, secretbox.KeyFileName))
	if err != nil {
		return nil, fmt.Errorf("webhook secrets key: %w", err)
	}
	eps := &webhookendpoint.Service{Store: ws, Secrets: key, Destinations: dest}
	w := &delivery.Worker{Outbox: ws, Log: ws, Subscribers: eps,
		Deliverer: &delivery.Deliverer{Endpoints: eps, Client: delivery.NewClient(dest)}, Logger: log}
	hooks := &httpapi.Webhooks{Endpoints: eps, Events: ws, Redeliver: &delivery.OutboxRedeliverer{Outbox: ws, Notify: w.Notify}}
	api.Extra = append(api.Extra, hooks.Routes()...)
	api.Extra = append(api.Extra, (&httpapi.CallAnswers{Decisions: ws}).Routes()...)
	client := delivery.NewClient(dest)
	client.Timeout = 0 // call.incoming is bounded by the line's decision timeout instead
	asker := &decision.Asker{Store: ws, Events: ws, Subscribers: eps, Logger: log,
		Deliverer: &delivery.Deliverer{Endpoints: eps, Client: client}}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(ctx); err != nil {
			log.Error("webhook delivery worker stopped", "err", err)
		}
	}()
	return &localWebhooks{Asker: asker, Worker: w, Stop: func() { cancel(); <-done }}, nil
}
