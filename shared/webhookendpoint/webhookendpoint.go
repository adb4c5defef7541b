// Package webhookendpoint holds the customer's webhook endpoints: where Bridgeline posts
// events, which event types each one wants, and the secrets that sign them. A secret is
// shown once, at creation or rotation; after a rotation the previous one keeps signing
// for RotationOverlap so receivers can switch without losing a message.
package webhookendpoint

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/events/webhook"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/retry"
)

// Statuses.
const (
	StatusEnabled  = "enabled"
	StatusDisabled = "disabled"
)

// Reasons an endpoint is disabled.
const (
	DisabledGone     = "gone"     // the receiver answered 410 Gone
	DisabledByClient = "customer" // the customer set status: disabled
)

// RotationOverlap is how long a rotated-out secret keeps signing beside the new one.
const RotationOverlap = 24 * time.Hour

// MaxPerAccount bounds an account's endpoints; each event fans out to all of them.
const MaxPerAccount = 16

// IDPrefix starts every endpoint id.
const IDPrefix = "whep"

// Endpoint is the stored record. Events empty means every event type.
type Endpoint struct {
	ID                      string    `json:"id"`
	AccountID               string    `json:"account_id"`
	URL                     string    `json:"url"`
	Description             string    `json:"description"`
	Events                  []string  `json:"events"`
	Status                  string    `json:"status"`
	DisabledReason          string    `json:"disabled_reason"`
	Secret                  string    `json:"secret"`
	PreviousSecret          string    `json:"previous_secret"`
	PreviousSecretExpiresAt time.Time `json:"previous_secret_expires_at"`
	Revision                int64     `json:"revision"`
	CreatedAt               time.Time `json:"created_at"`
	UpdatedAt               time.Time `json:"updated_at"`
}

// Subscribed reports whether the endpoint wants events of type typ.
func (e Endpoint) Subscribed(typ string) bool {
	return len(e.Events) == 0 || slices.Contains(e.Events, typ)
}

// Target is the endpoint as delivery sends to it: its URL, whether it is enabled, and
// its secrets as this record holds them (opened by Signing and Subscribed).
func (e Endpoint) Target() delivery.Endpoint {
	return delivery.Endpoint{ID: e.ID, AccountID: e.AccountID, URL: e.URL, Enabled: e.Status == StatusEnabled,
		Secret: e.Secret, PreviousSecret: e.PreviousSecret, PreviousSecretExpiresAt: e.PreviousSecretExpiresAt}
}

// Store keeps webhook endpoints.
//
// Errors: GetWebhookEndpoint and DeleteWebhookEndpoint return apierr.ErrNotFound;
// CreateWebhookEndpoint returns apierr.ErrConflict when the id exists; UpdateWebhookEndpoint
// is conditional on e.Revision (the revision read) and returns apierr.ErrConflict when the
// record moved or is gone, and stores e with Revision+1.
type Store interface {
	// CreateWebhookEndpoint inserts e if its account has fewer than max endpoints, else
	// returns ErrLimit: the count and the insert are one atomic step, so concurrent
	// creates cannot pass max together.
	CreateWebhookEndpoint(ctx context.Context, e Endpoint, max int) error
	GetWebhookEndpoint(ctx context.Context, id string) (Endpoint, error)
	// ListWebhookEndpoints returns up to q.Limit+1 endpoints of the account, newest first.
	ListWebhookEndpoints(ctx context.Context, accountID string, q listing.Query) ([]Endpoint, error)
	UpdateWebhookEndpoint(ctx context.Context, e Endpoint) error
	DeleteWebhookEndpoint(ctx context.Context, id string) error
}

// ErrLimit is a create refused because the account has its maximum of endpoints.
var ErrLimit = errors.New("webhookendpoint: the account has its maximum of endpoints")

// Input is a create request or a PATCH: nil fields are left alone (create needs URL).
type Input struct {
	URL         *string
	Description *string
	Events      *[]string
	Status      *string
}

// Sealer seals signing secrets for storage and opens them to sign
// (*secretbox.LocalKey locally, *secretbox.KMS on AWS). Open returns a value that was
// never sealed as it is.
type Sealer interface {
	Seal(ctx context.Context, plain string) (string, error)
	Open(ctx context.Context, sealed string) (string, error)
}

// Service applies the endpoint rules.
//
// Secrets are stored sealed when Secrets is set (every shipped binary sets it): Get,
// List and the writes handle the sealed values and never open them, so the functions
// that serve the customer API need no decrypt grant; only Signing and Subscribed, which
// the signers call, open them. Create and RotateSecret return the new secret in clear,
// once, for the response.
type Service struct {
	Store Store
	// Secrets seals secrets at rest; nil stores them in clear (unit tests only).
	Secrets Sealer
	// Destinations refuses URLs whose host is a literal internal address (400
	// url_not_allowed); the zero Policy refuses them all, loopback included.
	Destinations egress.Policy
	Now          func() time.Time
}

// Create registers an endpoint with a fresh secret; the returned record is the only time
// the caller sees that secret.
func (s *Service) Create(ctx context.Context, accountID string, in Input) (Endpoint, error) {
	if in.URL == nil {
		return Endpoint{}, apierr.Missing("url")
	}
	if in.Status != nil {
		return Endpoint{}, apierr.Param(apierr.CodeParameterUnknown, "status", "status can be set only on an existing endpoint")
	}
	if err := in.validate(s.Destinations); err != nil {
		return Endpoint{}, err
	}
	existing, err := s.Store.ListWebhookEndpoints(ctx, accountID, listing.Query{Limit: MaxPerAccount})
	if err != nil {
		return Endpoint{}, fmt.Errorf("count webhook endpoints: %w", err)
	}
	if len(existing) >= MaxPerAccount {
		return Endpoint{}, apierr.New(apierr.CodeWebhookEndpointLimit,
			fmt.Sprintf("an account can have at most %d webhook endpoints; delete one first", MaxPerAccount))
	}
	secret, sealed, err := s.newSecret(ctx)
	if err != nil {
		return Endpoint{}, err
	}
	now := s.now()
	e := Endpoint{ID: ident.New(IDPrefix), AccountID: accountID, Status: StatusEnabled, Secret: sealed,
		Events: []string{}, Revision: 1, CreatedAt: now, UpdatedAt: now}
	in.apply(&e)
	switch err := s.Store.CreateWebhookEndpoint(ctx, e, MaxPerAccount); {
	case errors.Is(err, ErrLimit):
		return Endpoint{}, apierr.New(apierr.CodeWebhookEndpointLimit,
			fmt.Sprintf("an account can have at most %d webhook endpoints; delete one first", MaxPerAccount))
	case err != nil:
		return Endpoint{}, fmt.Errorf("create webhook endpoint: %w", err)
	}
	e.Secret = secret
	return e, nil
}

// newSecret makes a signing secret and its sealed form.
func (s *Service) newSecret(ctx context.Context) (plain, sealed string, err error) {
	plain, err = webhook.NewSecret()
	if err != nil {
		return "", "", err
	}
	if s.Secrets == nil {
		return plain, plain, nil
	}
	sealed, err = s.Secrets.Seal(ctx, plain)
	if err != nil {
		return "", "", fmt.Errorf("seal webhook secret: %w", err)
	}
	return plain, sealed, nil
}

// open returns e with its secrets in clear, for signing.
func (s *Service) open(ctx context.Context, e Endpoint) (Endpoint, error) {
	if s.Secrets == nil {
		return e, nil
	}
	var err error
	if e.Secret, err = s.Secrets.Open(ctx, e.Secret); err != nil {
		return Endpoint{}, fmt.Errorf("open secret of %s: %w", e.ID, err)
	}
	if e.PreviousSecret != "" {
		if e.PreviousSecret, err = s.Secrets.Open(ctx, e.PreviousSecret); err != nil {
			return Endpoint{}, fmt.Errorf("open previous secret of %s: %w", e.ID, err)
		}
	}
	return e, nil
}

// Signing returns the account's endpoint with its secrets opened, as delivery sends to
// it: for the deliverers (delivery.Endpoints).
func (s *Service) Signing(ctx context.Context, accountID, id string) (delivery.Endpoint, error) {
	e, err := s.Get(ctx, accountID, id)
	if err != nil {
		return delivery.Endpoint{}, err
	}
	if e, err = s.open(ctx, e); err != nil {
		return delivery.Endpoint{}, err
	}
	return e.Target(), nil
}

// Get returns the account's endpoint, secrets as stored (sealed), or not-found for any
// other id.
func (s *Service) Get(ctx context.Context, accountID, id string) (Endpoint, error) {
	e, err := s.Store.GetWebhookEndpoint(ctx, id)
	return apierr.Owned(e, e.AccountID, err, accountID, apierr.NotFound("webhook_endpoint", id))
}

// List returns up to q.Limit+1 of the account's endpoints, newest first.
func (s *Service) List(ctx context.Context, accountID string, q listing.Query) ([]Endpoint, error) {
	return s.Store.ListWebhookEndpoints(ctx, accountID, q)
}

// Subscribed returns the account's enabled endpoints that want events of type typ, with
// their secrets opened for signing (delivery.Subscribers).
func (s *Service) Subscribed(ctx context.Context, accountID, typ string) ([]delivery.Endpoint, error) {
	all, err := s.all(ctx, accountID)
	if err != nil {
		return nil, err
	}
	var out []delivery.Endpoint
	for _, e := range all {
		if e.Status == StatusEnabled && e.Subscribed(typ) {
			if e, err = s.open(ctx, e); err != nil {
				return nil, err
			}
			out = append(out, e.Target())
		}
	}
	return out, nil
}

// Wants reports whether an enabled endpoint of the account subscribes to typ, without
// opening any secret: for deciding whether to produce an event at all (call.transcript,
// one per turn, is written only when someone listens).
func (s *Service) Wants(ctx context.Context, accountID, typ string) (bool, error) {
	all, err := s.all(ctx, accountID)
	if err != nil {
		return false, err
	}
	for _, e := range all {
		if e.Status == StatusEnabled && e.Subscribed(typ) {
			return true, nil
		}
	}
	return false, nil
}

// all reads every endpoint of the account, page by page: an account may hold more than
// MaxPerAccount (endpoints made before the cap held under concurrency), and every one
// subscribed gets its events.
func (s *Service) all(ctx context.Context, accountID string) ([]Endpoint, error) {
	const page = 100
	var out []Endpoint
	q := listing.Query{Limit: page}
	for {
		es, err := s.Store.ListWebhookEndpoints(ctx, accountID, q)
		if err != nil {
			return nil, fmt.Errorf("list webhook endpoints: %w", err)
		}
		more := len(es) > page
		if more {
			es = es[:page]
		}
		out = append(out, es...)
		if !more || len(es) == 0 {
			return out, nil
		}
		q.StartingAfter = es[len(es)-1].ID
	}
}

// Update applies a PATCH. Setting status back to enabled clears the disabled reason, so an
// endpoint turned off by a 410 can be turned on again.
func (s *Service) Update(ctx context.Context, accountID, id string, in Input) (Endpoint, error) {
	if err := in.validate(s.Destinations); err != nil {
		return Endpoint{}, err
	}
	return s.modify(ctx, accountID, id, func(e *Endpoint) { in.apply(e) })
}

// Delete removes the endpoint; deliveries still pending to it stop.
func (s *Service) Delete(ctx context.Context, accountID, id string) (Endpoint, error) {
	e, err := s.Get(ctx, accountID, id)
	if err != nil {
		return Endpoint{}, err
	}
	if err := s.Store.DeleteWebhookEndpoint(ctx, id); err != nil {
		if errors.Is(err, apierr.ErrNotFound) {
			return Endpoint{}, apierr.NotFound("webhook_endpoint", id)
		}
		return Endpoint{}, fmt.Errorf("delete webhook endpoint %s: %w", id, err)
	}
	return e, nil
}

// RotateSecret gives the endpoint a new secret and keeps the current one signing for
// RotationOverlap. A second rotation inside the overlap drops the oldest secret.
// The current secret moves to PreviousSecret as stored, sealed, without being opened.
func (s *Service) RotateSecret(ctx context.Context, accountID, id string) (Endpoint, error) {
	secret, sealed, err := s.newSecret(ctx)
	if err != nil {
		return Endpoint{}, err
	}
	e, err := s.modify(ctx, accountID, id, func(e *Endpoint) {
		e.PreviousSecret, e.PreviousSecretExpiresAt = e.Secret, s.now().Add(RotationOverlap)
		e.Secret = sealed
	})
	if err != nil {
		return Endpoint{}, err
	}
	e.Secret = secret
	return e, nil
}

// Gone disables an endpoint whose receiver answered 410 Gone (delivery.Endpoints).
// Disabling a missing endpoint is not an error: it was deleted meanwhile.
func (s *Service) Gone(ctx context.Context, accountID, id string) error {
	_, err := s.modify(ctx, accountID, id, func(e *Endpoint) {
		e.Status, e.DisabledReason = StatusDisabled, DisabledGone
	})
	if apierr.Is(err, apierr.CodeResourceNotFound) {
		return nil
	}
	return err
}

// modify reads, changes and conditionally writes the endpoint, reading again when another
// write got there first.
func (s *Service) modify(ctx context.Context, accountID, id string, change func(*Endpoint)) (Endpoint, error) {
	var out Endpoint
	err := retry.OnConflict(func() error {
		e, err := s.Get(ctx, accountID, id)
		if err != nil {
			return err
		}
		change(&e)
		e.UpdatedAt = s.now()
		if err := s.Store.UpdateWebhookEndpoint(ctx, e); err != nil {
			return fmt.Errorf("update webhook endpoint %s: %w", id, err)
		}
		e.Revision++
		out = e
		return nil
	})
	return out, err
}

func (s *Service) now() time.Time {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	return now().UTC().Truncate(time.Millisecond)
}

func (in Input) validate(dest egress.Policy) error {
	if in.URL != nil {
		if err := ValidURL(*in.URL); err != nil {
			return err
		}
		if err := AllowedURL(dest, *in.URL); err != nil {
			return err
		}
	}
	if in.Description != nil {
		if utf8.RuneCountInString(*in.Description) > 500 || !utf8.ValidString(*in.Description) {
			return apierr.Invalid("description", "description must be valid UTF-8 of at most 500 characters")
		}
	}
	if in.Events != nil {
		for _, t := range *in.Events {
			if !slices.Contains(callevent.Types, t) {
				return apierr.Invalid("events", fmt.Sprintf("unknown event type %q; known types: %s", t, strings.Join(callevent.Types, ", ")))
			}
		}
	}
	if in.Status != nil && *in.Status != StatusEnabled && *in.Status != StatusDisabled {
		return apierr.Invalid("status", "status must be enabled or disabled")
	}
	return nil
}

func (in Input) apply(e *Endpoint) {
	if in.URL != nil {
		e.URL = *in.URL
	}
	if in.Description != nil {
		e.Description = *in.Description
	}
	if in.Events != nil {
		e.Events = slices.Compact(slices.Sorted(slices.Values(*in.Events)))
	}
	if in.Status != nil && *in.Status != e.Status {
		e.Status, e.DisabledReason = *in.Status, ""
		if e.Status == StatusDisabled {
			e.DisabledReason = DisabledByClient
		}
	}
}

// ValidURL checks an endpoint URL: absolute http(s) with a host, no credentials, at most
// 2048 bytes. Where the URL may point, and when plain http may be used, is AllowedURL's
// job.
func ValidURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return apierr.Missing("url")
	case len(raw) > 2048 || err != nil || !u.IsAbs() || u.Host == "" || u.Hostname() == "":
		return apierr.Invalid("url", "url must be an absolute http or https URL")
	case u.Scheme != "https" && u.Scheme != "http":
		return apierr.Invalid("url", "url must be an absolute http or https URL")
	case u.User != nil:
		return apierr.Invalid("url", "url must not carry credentials")
	}
	return nil
}

// AllowedURL refuses, with 400 url_not_allowed, a well-formed URL whose host is not
// written canonically (egress.CanonicalHost: no hex, octal, decimal or short IPv4 forms,
// no IPv6 zone, no percent-encoding) or is a literal internal address (loopback unless
// dest allows it, private, link-local, CGNAT, unique-local, multicast, unspecified, or
// an IPv4-mapped form of those), and a plain http URL whatever the key's mode: events
// have no mode, so every endpoint of an account receives its live calls' events,
// call.incoming with its room's participant token among them. Plain http is only for
// a loopback receiver where dest lets loopback through (the local stack). Host names
// are checked again at every dial, after resolution (egress.Policy.Control), and the
// scheme at every request (delivery.NewClient).
func AllowedURL(dest egress.Policy, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return apierr.Invalid("url", "url must be an absolute http or https URL")
	}
	if u.Scheme != "https" && !dest.PlainHTTP(u.Hostname()) {
		return apierr.Param(apierr.CodeURLNotAllowed, "url",
			"url must use https: every endpoint receives the account's live events (plain http only to a loopback receiver on a local stack)")
	}
	return AllowedHost(dest, raw)
}

// AllowedHost refuses, with 400 url_not_allowed, a URL whose host is not written
// canonically or is a literal internal address: AllowedURL's host rule, without its
// scheme rule, for URLs whose scheme rule is their own (an assistant's tools need https
// only for live keys).
func AllowedHost(dest egress.Policy, raw string) error {
	switch err := dest.CheckURL(raw); {
	case errors.Is(err, egress.ErrNotCanonical):
		return apierr.Param(apierr.CodeURLNotAllowed, "url",
			"url's host must be a DNS name in ASCII, an IPv4 address in dotted decimal (four numbers 0-255) or an IPv6 address without a zone")
	case err != nil:
		return apierr.Param(apierr.CodeURLNotAllowed, "url",
			"url must not point at a loopback, private, link-local or other internal address")
	}
	return nil
}
