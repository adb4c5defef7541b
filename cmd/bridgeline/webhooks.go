package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

// webhookStore is what local webhook delivery needs of the store: endpoints, the event
// log and the persistent outbox (the SQLite store has all three).
type webhookStore interface {
	webhookendpoint.Store
	delivery.Log
	delivery.Outbox
}

// startWebhooks adds the webhook endpoint and event routes to api and runs the delivery
// worker until ctx ends; stop waits for the attempts in flight to be stored.
func startWebhooks(ctx context.Context, s any, api *httpapi.API, log *slog.Logger) (stop func(), err error) {
	ws, ok := s.(webhookStore)
	if !ok {
		return nil, fmt.Errorf("store %T keeps no webhook outbox", s)
	}
	eps := &webhookendpoint.Service{Store: ws}
	w := &delivery.Worker{Outbox: ws, Log: ws, Subscribers: eps, Deliverer: &delivery.Deliverer{Endpoints: eps}, Logger: log}
	hooks := &httpapi.Webhooks{Endpoints: eps, Events: ws, Redeliver: &delivery.OutboxRedeliverer{Outbox: ws, Notify: w.Notify}}
	api.Extra = append(api.Extra, hooks.Routes()...)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(ctx); err != nil {
			log.Error("webhook delivery worker stopped", "err", err)
		}
	}()
	return func() { cancel(); <-done }, nil
}
