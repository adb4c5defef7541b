package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

// Redeliverer queues a fresh delivery of an event to the given endpoints: the local
// outbox (delivery.OutboxRedeliverer) or the AWS queue (awsbus.Handler).
type Redeliverer interface {
	Redeliver(ctx context.Context, evt callevent.Event, endpointIDs []string) error
}

// Webhooks serves webhook endpoints and the event log..
type Webhooks struct {
	Endpoints *webhookendpoint.Service
	Events    delivery.Log
	Redeliver Redeliverer
}

// Routes are the webhook endpoint and event routes, one Lambda function each.
func (h *Webhooks) Routes() []Route {
	return []Route{
		{Function: "webhook-endpoints-list", Method: http.MethodGet, Pattern: "/v1/webhook_endpoints", Keys: TestKeys(), Handler: h.listEndpoints},
		{Function: "webhook-endpoints-create", Method: http.MethodPost, Pattern: "/v1/webhook_endpoints", Keys: TestKeys(), ReplayOmits: []string{"secret"}, Handler: h.createEndpoint},
		{Function: "webhook-endpoints-get", Method: http.MethodGet, Pattern: "/v1/webhook_endpoints/{id}", Keys: TestKeys(), Handler: h.getEndpoint},
		{Function: "webhook-endpoints-update", Method: http.MethodPatch, Pattern: "/v1/webhook_endpoints/{id}", Keys: TestKeys(), Handler: h.updateEndpoint},
		{Function: "webhook-endpoints-delete", Method: http.MethodDelete, Pattern: "/v1/webhook_endpoints/{id}", Keys: TestKeys(), Handler: h.deleteEndpoint},
		{Function: "webhook-endpoints-rotate-secret", Method: http.MethodPost, Pattern: "/v1/webhook_endpoints/{id}/rotate_secret", Keys: TestKeys(), ReplayOmits: []string{"secret"}, Handler: h.rotateSecret},
		{Function: "events-list", Method: http.MethodGet, Pattern: "/v1/events", Keys: TestKeys(), Handler: h.listEvents},
		{Function: "events-get", Method: http.MethodGet, Pattern: "/v1/events/{id}", Keys: TestKeys(), Handler: h.getEvent},
		{Function: "events-redeliver", Method: http.MethodPost, Pattern: "/v1/events/{id}/redeliver", Keys: TestKeys(), Handler: h.redeliver},
	}
}

// EndpointJSON is the webhook_endpoint object. Secret is present only in the answers to
// create and rotate_secret.
type EndpointJSON struct {
	ID                      string   `json:"id"`
	Object                  string   `json:"object"`
	URL                     string   `json:"url"`
	Description             string   `json:"description"`
	Events                  []string `json:"events"`
	Status                  string   `json:"status"`
	DisabledReason          *string  `json:"disabled_reason"`
	Secret                  string   `json:"secret,omitempty"`
	PreviousSecretExpiresAt *Time    `json:"previous_secret_expires_at"`
	CreatedAt               Time     `json:"created_at"`
	UpdatedAt               Time     `json:"updated_at"`
}

// PresentEndpoint maps an endpoint to its JSON object, without its secret.
func PresentEndpoint(e webhookendpoint.Endpoint) EndpointJSON {
	events := e.Events
	if len(events) == 0 {
		events = []string{"*"}
	}
	var prevExp *Time
	if e.PreviousSecret != "" && time.Now().Before(e.PreviousSecretExpiresAt) {
		prevExp = TimePtr(&e.PreviousSecretExpiresAt)
	}
	return EndpointJSON{ID: e.ID, Object: "webhook_endpoint", URL: e.URL, Description: e.Description,
		Events: events, Status: e.Status, DisabledReason: StringOrNull(e.DisabledReason),
		PreviousSecretExpiresAt: prevExp, CreatedAt: Time(e.CreatedAt), UpdatedAt: Time(e.UpdatedAt)}
}

func presentWithSecret(e webhookendpoint.Endpoint) EndpointJSON {
	j := PresentEndpoint(e)
	j.Secret = e.Secret
	return j
}

// endpointBody is the create and update request. events: ["*"] or absent means all.
type endpointBody struct {
	URL         Nullable[string]   `json:"url"`
	Description Nullable[string]   `json:"description"`
	Events      Nullable[[]string] `json:"events"`
	Status      Nullable[string]   `json:"status"`
}

func (b endpointBody) input() (webhookendpoint.Input, error) {
	for _, err := range []error{b.URL.NotNull("url"), b.Description.NotNull("description"),
		b.Events.NotNull("events"), b.Status.NotNull("status")} {
		if err != nil {
			return webhookendpoint.Input{}, err
		}
	}
	in := webhookendpoint.Input{URL: b.URL.Ptr(), Description: b.Description.Ptr(), Status: b.Status.Ptr()}
	if evs := b.Events.Ptr(); evs != nil {
		if len(*evs) == 0 {
			return in, apierr.Invalid("events", `events must name at least one event type, or be ["*"] for all`)
		}
		if slices.Contains(*evs, "*") {
			if len(*evs) > 1 {
				return in, apierr.Invalid("events", `"*" stands for every event type and cannot be combined with others`)
			}
			evs = &[]string{}
		}
		in.Events = evs
	}
	return in, nil
}

func (h *Webhooks) createEndpoint(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body endpointBody
	if err := Decode(r, &body, false); err != nil {
		return 0, nil, err
	}
	in, err := body.input()
	if err != nil {
		return 0, nil, err
	}
	e, err := h.Endpoints.Create(r.Context(), AccountFrom(r.Context()).ID, in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, presentWithSecret(e), nil
}

func (h *Webhooks) listEndpoints(w http.ResponseWriter, r *http.Request) (int, any, error) {
	q, err := ListQuery(r, webhookendpoint.IDPrefix)
	if err != nil {
		return 0, nil, err
	}
	list, err := h.Endpoints.List(r.Context(), AccountFrom(r.Context()).ID, q)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, NewList(list, q, PresentEndpoint), nil
}

func (h *Webhooks) getEndpoint(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	e, err := h.Endpoints.Get(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, PresentEndpoint(e), nil
}

func (h *Webhooks) updateEndpoint(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body endpointBody
	if err := Decode(r, &body, false); err != nil {
		return 0, nil, err
	}
	in, err := body.input()
	if err != nil {
		return 0, nil, err
	}
	e, err := h.Endpoints.Update(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, PresentEndpoint(e), nil
}

// deletedJSON answers a DELETE.
type deletedJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

func (h *Webhooks) deleteEndpoint(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	e, err := h.Endpoints.Delete(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, deletedJSON{ID: e.ID, Object: "webhook_endpoint", Deleted: true}, nil
}

func (h *Webhooks) rotateSecret(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Decode(r, &struct{}{}, true); err != nil {
		return 0, nil, err
	}
	e, err := h.Endpoints.RotateSecret(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, presentWithSecret(e), nil
}

// EventJSON is the event object: the envelope receivers get, plus the attempts on
// GET /v1/events/{id}.
type EventJSON struct {
	ID        string          `json:"id"`
	Object    string          `json:"object"`
	Type      string          `json:"type"`
	CreatedAt Time            `json:"created_at"`
	Data      json.RawMessage `json:"data"`
	Attempts  *[]AttemptJSON  `json:"attempts,omitempty"`
	// HasMoreAttempts says a page of attempts follows Attempts (with them only).
	HasMoreAttempts *bool `json:"has_more_attempts,omitempty"`
}

// AttemptJSON is one delivery attempt.
type AttemptJSON struct {
	ID            string  `json:"id"`
	Object        string  `json:"object"`
	EndpointID    string  `json:"endpoint_id"`
	URL           string  `json:"url"`
	Attempt       int     `json:"attempt"`
	AttemptedAt   Time    `json:"attempted_at"`
	DurationMS    int64   `json:"duration_ms"`
	StatusCode    *int    `json:"status_code"`
	Outcome       string  `json:"outcome"`
	Error         *string `json:"error"`
	NextAttemptAt *Time   `json:"next_attempt_at"`
}

// PresentEvent maps an event to its JSON object, without attempts.
func PresentEvent(e callevent.Event) EventJSON {
	return EventJSON{ID: e.ID, Object: "event", Type: e.Type, CreatedAt: Time(e.CreatedAt), Data: e.Data}
}

// PresentAttempt maps an attempt to its JSON object.
func PresentAttempt(a delivery.Attempt) AttemptJSON {
	j := AttemptJSON{ID: a.ID, Object: "event_attempt", EndpointID: a.EndpointID, URL: a.URL, Attempt: a.Number,
		AttemptedAt: Time(a.StartedAt), DurationMS: a.DurationMS, Outcome: a.Outcome, Error: StringOrNull(a.Error),
		NextAttemptAt: TimePtr(a.NextAttemptAt)}
	if a.StatusCode != 0 {
		j.StatusCode = &a.StatusCode
	}
	return j
}

func (h *Webhooks) listEvents(w http.ResponseWriter, r *http.Request) (int, any, error) {
	q, err := ListQuery(r, "evt", "type", CreatedGTE, CreatedLTE)
	if err != nil {
		return 0, nil, err
	}
	if q, err = CreatedRange(r, "evt", q); err != nil {
		return 0, nil, err
	}
	typ := r.URL.Query().Get("type")
	if typ != "" && !slices.Contains(callevent.Types, typ) {
		return 0, nil, apierr.Invalid("type", fmt.Sprintf("unknown event type %q", typ))
	}
	list, err := h.Events.ListEvents(r.Context(), AccountFrom(r.Context()).ID, typ, q)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, NewList(list, q, PresentEvent), nil
}

// event reads the account's event, or not-found for any other id.
func (h *Webhooks) event(ctx context.Context, id string) (callevent.Event, error) {
	e, err := h.Events.GetEvent(ctx, id)
	return apierr.Owned(e, e.AccountID, err, AccountFrom(ctx).ID, apierr.NotFound("event", id))
}

// eventWithAttempts is the event with a page of its attempts: up to limit after the
// attempt startingAfter ("" from the first), oldest first.
func (h *Webhooks) eventWithAttempts(ctx context.Context, e callevent.Event, startingAfter string, limit int) (EventJSON, error) {
	as, more, err := h.Events.DeliveryAttemptsPage(ctx, e.ID, startingAfter, limit)
	if err != nil {
		return EventJSON{}, fmt.Errorf("attempts of %s: %w", e.ID, err)
	}
	j := PresentEvent(e)
	list := make([]AttemptJSON, 0, len(as))
	for _, a := range as {
		list = append(list, PresentAttempt(a))
	}
	j.Attempts, j.HasMoreAttempts = &list, &more
	return j, nil
}

// attemptsPage reads GET /v1/events/{id}'s paging of attempts: attempts_limit (1-100,
// default 20) and attempts_starting_after (an attempt id).
func attemptsPage(r *http.Request) (startingAfter string, limit int, err error) {
	if err := Query(r, "attempts_limit", "attempts_starting_after"); err != nil {
		return "", 0, err
	}
	limit = listing.DefaultLimit
	if s := r.URL.Query().Get("attempts_limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > listing.MaxLimit {
			return "", 0, apierr.Invalid("attempts_limit", fmt.Sprintf("attempts_limit must be an integer from 1 to %d", listing.MaxLimit))
		}
		limit = n
	}
	startingAfter = r.URL.Query().Get("attempts_starting_after")
	if startingAfter != "" && !ident.Valid("watt", startingAfter) {
		return "", 0, apierr.Invalid("attempts_starting_after", "attempts_starting_after must be a watt_ id")
	}
	return startingAfter, limit, nil
}

func (h *Webhooks) getEvent(w http.ResponseWriter, r *http.Request) (int, any, error) {
	after, limit, err := attemptsPage(r)
	if err != nil {
		return 0, nil, err
	}
	e, err := h.event(r.Context(), r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	j, err := h.eventWithAttempts(r.Context(), e, after, limit)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, j, nil
}

// redeliver sends the event again, now, to one endpoint (endpoint_id) or to every enabled
// endpoint subscribed to its type. The webhook-id stays the event id, so receivers that
// already have it can tell.
func (h *Webhooks) redeliver(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body struct {
		EndpointID string `json:"endpoint_id"`
	}
	if err := Decode(r, &body, true); err != nil {
		return 0, nil, err
	}
	ctx := r.Context()
	e, err := h.event(ctx, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	if e.Type == callevent.TypeCallIncoming {
		return 0, nil, apierr.New(apierr.CodeEventNotRedeliverable, "call.incoming asks for a decision while the call rings and cannot be redelivered")
	}
	var ids []string
	if body.EndpointID != "" {
		ep, err := h.Endpoints.Get(ctx, e.AccountID, body.EndpointID)
		if apierr.Is(err, apierr.CodeResourceNotFound) {
			return 0, nil, apierr.Param(apierr.CodeResourceNotFound, "endpoint_id", fmt.Sprintf("no such webhook_endpoint: %q", body.EndpointID))
		}
		if err != nil {
			return 0, nil, err
		}
		if ep.Status != webhookendpoint.StatusEnabled {
			return 0, nil, apierr.Param(apierr.CodeWebhookEndpointDisabled, "endpoint_id", "the endpoint is disabled; enable it first")
		}
		ids = []string{ep.ID}
	} else {
		eps, err := h.Endpoints.Subscribed(ctx, e.AccountID, e.Type)
		if err != nil {
			return 0, nil, err
		}
		for _, ep := range eps {
			ids = append(ids, ep.ID)
		}
		if len(ids) == 0 {
			return 0, nil, apierr.New(apierr.CodeNoSubscribedEndpoint, fmt.Sprintf("no enabled webhook endpoint is subscribed to %s", e.Type))
		}
	}
	switch err := h.Events.CountRedelivery(ctx, e.ID, delivery.MaxRedeliveries); {
	case errors.Is(err, apierr.ErrConflict):
		return 0, nil, apierr.New(apierr.CodeEventNotRedeliverable, fmt.Sprintf(
			"the event was redelivered %d times already, the most one event may be", delivery.MaxRedeliveries))
	case err != nil:
		return 0, nil, fmt.Errorf("count redelivery of %s: %w", e.ID, err)
	}
	if err := h.Redeliver.Redeliver(ctx, e, ids); err != nil {
		return 0, nil, fmt.Errorf("redeliver %s: %w", e.ID, err)
	}
	j, err := h.eventWithAttempts(ctx, e, "", listing.DefaultLimit)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusAccepted, j, nil
}
