package storetest

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

// WebhookStore is what a store keeps for webhooks: endpoints and the attempt log.
type WebhookStore interface {
	webhookendpoint.Store
	RecordDeliveryAttempt(ctx context.Context, a delivery.Attempt) error
	ListDeliveryAttempts(ctx context.Context, eventID string) ([]delivery.Attempt, error)
	DeliveryAttemptsPage(ctx context.Context, eventID, startingAfter string, limit int) ([]delivery.Attempt, bool, error)
}

// RunWebhooks runs the webhook cases, each against a fresh store from newStore. Every
// store that serves the webhook API (SQLite, DynamoDB) passes it.
func RunWebhooks(t *testing.T, newStore func(t *testing.T) WebhookStore) {
	for name, c := range webhookCases {
		t.Run(name, func(t *testing.T) { c(t, newStore(t)) })
	}
}

var webhookCases = map[string]func(*testing.T, WebhookStore){
	"create get round trip":                       endpointRoundTrip,
	"create twice conflicts":                      endpointCreateConflict,
	"update is conditional":                       endpointConditionalUpdate,
	"delete then not found":                       endpointDelete,
	"list newest first, paged":                    endpointList,
	"list is per account":                         endpointListPerAccount,
	"service rotate keeps old secret":             endpointRotate,
	"attempts oldest first, once":                 attemptLog,
	"endpoint cap holds under concurrent creates": endpointCapConcurrent,
}

// endpointCapConcurrent: 24 concurrent creates through the service for one account
// (MaxPerAccount 16) make exactly 16 endpoints, the rest webhook_endpoint_limit_reached;
// a delete frees one place, taken once; Subscribed sees all 16.
func endpointCapConcurrent(t *testing.T, s WebhookStore) {
	svc := webhookendpoint.Service{Store: s}
	acct := ident.New("acct")
	url := "https://example.test/hooks"
	const tries = webhookendpoint.MaxPerAccount + 8
	var wg sync.WaitGroup
	var made, refused atomic.Int32
	var first atomic.Value
	for range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := svc.Create(ctx(t), acct, webhookendpoint.Input{URL: &url})
			switch {
			case err == nil:
				made.Add(1)
				first.CompareAndSwap(nil, e.ID)
			case apierr.Is(err, apierr.CodeWebhookEndpointLimit):
				refused.Add(1)
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if made.Load() != webhookendpoint.MaxPerAccount || refused.Load() != tries-webhookendpoint.MaxPerAccount {
		t.Fatalf("%d concurrent creates: %d made, %d refused; want %d and %d", tries, made.Load(), refused.Load(),
			webhookendpoint.MaxPerAccount, tries-webhookendpoint.MaxPerAccount)
	}
	all, err := s.ListWebhookEndpoints(ctx(t), acct, listing.Query{Limit: 100})
	if err != nil || len(all) != webhookendpoint.MaxPerAccount {
		t.Fatalf("stored %d endpoints (%v), want %d", len(all), err, webhookendpoint.MaxPerAccount)
	}
	if sub, err := svc.Subscribed(ctx(t), acct, "call.ended"); err != nil || len(sub) != webhookendpoint.MaxPerAccount {
		t.Errorf("Subscribed = %d endpoints (%v), want %d", len(sub), err, webhookendpoint.MaxPerAccount)
	}
	if _, err := svc.Delete(ctx(t), acct, first.Load().(string)); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Create(ctx(t), acct, webhookendpoint.Input{URL: &url}); err != nil {
		t.Errorf("create after a delete = %v, want a place", err)
	}
	if _, err := svc.Create(ctx(t), acct, webhookendpoint.Input{URL: &url}); !apierr.Is(err, apierr.CodeWebhookEndpointLimit) {
		t.Errorf("create past the cap after a delete and a create = %v, want webhook_endpoint_limit_reached", err)
	}
	// An account holding more than the cap (endpoints made before it held) has every
	// one of them subscribed, past any one page.
	many := ident.New("acct")
	const n = 3*webhookendpoint.MaxPerAccount + 5
	for range n {
		if err := s.CreateWebhookEndpoint(ctx(t), newEndpoint(many), n); err != nil {
			t.Fatal(err)
		}
	}
	if sub, err := svc.Subscribed(ctx(t), many, "call.ended"); err != nil || len(sub) != n {
		t.Errorf("Subscribed over %d endpoints = %d (%v), want all", n, len(sub), err)
	}
}

func newEndpoint(accountID string) webhookendpoint.Endpoint {
	now := time.Now().UTC().Truncate(time.Millisecond)
	return webhookendpoint.Endpoint{ID: ident.New(webhookendpoint.IDPrefix), AccountID: accountID,
		URL: "https://example.test/hooks", Description: "d", Events: []string{"call.ended"},
		Status: webhookendpoint.StatusEnabled, Secret: "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0", Revision: 1,
		CreatedAt: now, UpdatedAt: now}
}

func endpointRoundTrip(t *testing.T, s WebhookStore) {
	e := newEndpoint(ident.New("acct"))
	e.PreviousSecret, e.PreviousSecretExpiresAt = "whsec_b2xkLW9sZC1vbGQtb2xkLW9sZC1vbGQ=", e.CreatedAt.Add(time.Hour)
	if err := s.CreateWebhookEndpoint(ctx(t), e, webhookendpoint.MaxPerAccount); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetWebhookEndpoint(ctx(t), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.URL != e.URL || got.Secret != e.Secret || got.PreviousSecret != e.PreviousSecret ||
		!got.PreviousSecretExpiresAt.Equal(e.PreviousSecretExpiresAt) || len(got.Events) != 1 ||
		got.Events[0] != "call.ended" || got.Revision != 1 || !got.CreatedAt.Equal(e.CreatedAt) || got.AccountID != e.AccountID {
		t.Errorf("GetWebhookEndpoint = %+v, want %+v", got, e)
	}
	if _, err := s.GetWebhookEndpoint(ctx(t), ident.New(webhookendpoint.IDPrefix)); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("GetWebhookEndpoint(unknown) = %v, want ErrNotFound", err)
	}
}

func endpointCreateConflict(t *testing.T, s WebhookStore) {
	e := newEndpoint(ident.New("acct"))
	if err := s.CreateWebhookEndpoint(ctx(t), e, webhookendpoint.MaxPerAccount); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateWebhookEndpoint(ctx(t), e, webhookendpoint.MaxPerAccount); !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("second CreateWebhookEndpoint = %v, want ErrConflict", err)
	}
}

func endpointConditionalUpdate(t *testing.T, s WebhookStore) {
	e := newEndpoint(ident.New("acct"))
	if err := s.CreateWebhookEndpoint(ctx(t), e, webhookendpoint.MaxPerAccount); err != nil {
		t.Fatal(err)
	}
	a, b := e, e
	a.URL, b.URL = "https://a.test/", "https://b.test/"
	if err := s.UpdateWebhookEndpoint(ctx(t), a); err != nil {
		t.Fatalf("first update: %v", err)
	}
	if err := s.UpdateWebhookEndpoint(ctx(t), b); !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("update from a stale revision = %v, want ErrConflict", err)
	}
	got, _ := s.GetWebhookEndpoint(ctx(t), e.ID)
	if got.URL != a.URL || got.Revision != 2 {
		t.Errorf("after updates: url %q revision %d, want %q 2", got.URL, got.Revision, a.URL)
	}
	gone := newEndpoint(e.AccountID)
	if err := s.UpdateWebhookEndpoint(ctx(t), gone); !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("update of a missing endpoint = %v, want ErrConflict", err)
	}
}

func endpointDelete(t *testing.T, s WebhookStore) {
	e := newEndpoint(ident.New("acct"))
	if err := s.CreateWebhookEndpoint(ctx(t), e, webhookendpoint.MaxPerAccount); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteWebhookEndpoint(ctx(t), e.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetWebhookEndpoint(ctx(t), e.ID); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("get after delete = %v, want ErrNotFound", err)
	}
	if err := s.DeleteWebhookEndpoint(ctx(t), e.ID); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("second delete = %v, want ErrNotFound", err)
	}
}

func endpointList(t *testing.T, s WebhookStore) {
	acct := ident.New("acct")
	var ids []string
	for range 5 {
		e := newEndpoint(acct)
		if err := s.CreateWebhookEndpoint(ctx(t), e, webhookendpoint.MaxPerAccount); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	page, err := s.ListWebhookEndpoints(ctx(t), acct, listing.Query{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 3 || page[0].ID != ids[0] || page[1].ID != ids[1] {
		t.Fatalf("first page = %v, want %v then one more", endpointIDs(page), ids[:2])
	}
	page, err = s.ListWebhookEndpoints(ctx(t), acct, listing.Query{Limit: 10, StartingAfter: ids[1]})
	if err != nil {
		t.Fatal(err)
	}
	if got := endpointIDs(page); len(got) != 3 || got[0] != ids[2] || got[2] != ids[4] {
		t.Errorf("page after %s = %v, want %v", ids[1], got, ids[2:])
	}
}

func endpointListPerAccount(t *testing.T, s WebhookStore) {
	mine, theirs := newEndpoint(ident.New("acct")), newEndpoint(ident.New("acct"))
	for _, e := range []webhookendpoint.Endpoint{mine, theirs} {
		if err := s.CreateWebhookEndpoint(ctx(t), e, webhookendpoint.MaxPerAccount); err != nil {
			t.Fatal(err)
		}
	}
	page, err := s.ListWebhookEndpoints(ctx(t), mine.AccountID, listing.Query{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := endpointIDs(page); len(got) != 1 || got[0] != mine.ID {
		t.Errorf("ListWebhookEndpoints = %v, want only %s", got, mine.ID)
	}
}

func endpointRotate(t *testing.T, s WebhookStore) {
	svc := webhookendpoint.Service{Store: s}
	acct := ident.New("acct")
	url := "https://example.test/hooks"
	e, err := svc.Create(ctx(t), acct, webhookendpoint.Input{URL: &url})
	if err != nil {
		t.Fatal(err)
	}
	r, err := svc.RotateSecret(ctx(t), acct, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := svc.Get(ctx(t), acct, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Secret != r.Secret || got.PreviousSecret != e.Secret || got.Secret == e.Secret {
		t.Errorf("after rotation: secret %q previous %q; want new secret and %q", got.Secret, got.PreviousSecret, e.Secret)
	}
	if d := time.Until(got.PreviousSecretExpiresAt); d < 23*time.Hour || d > 25*time.Hour {
		t.Errorf("previous secret expires in %v, want 24 h", d)
	}
	if _, err := svc.Get(ctx(t), ident.New("acct"), e.ID); !apierr.Is(err, apierr.CodeResourceNotFound) {
		t.Errorf("Get from another account = %v, want resource_not_found", err)
	}
}

func attemptLog(t *testing.T, s WebhookStore) {
	evt := ident.New("evt")
	start := time.Now().UTC().Truncate(time.Millisecond)
	next := start.Add(5 * time.Second)
	var want []delivery.Attempt
	for i := range 3 {
		a := delivery.Attempt{ID: ident.New("watt"), EventID: evt, AccountID: "acct_1", EndpointID: "whep_1",
			URL: "https://example.test/", Number: i + 1, StartedAt: start.Add(time.Duration(i) * time.Second),
			DurationMS: 12, StatusCode: 500, Outcome: delivery.OutcomeFailed, Error: "HTTP 500", NextAttemptAt: &next}
		want = append(want, a)
	}
	for _, a := range []delivery.Attempt{want[0], want[1], want[1], want[2]} { // one logged twice
		if err := s.RecordDeliveryAttempt(ctx(t), a); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RecordDeliveryAttempt(ctx(t), delivery.Attempt{ID: ident.New("watt"), EventID: ident.New("evt")}); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListDeliveryAttempts(ctx(t), evt)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("ListDeliveryAttempts = %d attempts, want 3", len(got))
	}
	for i := range got {
		if got[i].ID != want[i].ID || got[i].Number != i+1 || !got[i].StartedAt.Equal(want[i].StartedAt) ||
			got[i].NextAttemptAt == nil || !got[i].NextAttemptAt.Equal(next) || got[i].Error != "HTTP 500" {
			t.Errorf("attempt %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// Pages of two: the first two and more, then the third and no more.
	for _, pg := range []struct {
		after string
		want  []string
		more  bool
	}{{"", []string{want[0].ID, want[1].ID}, true}, {want[1].ID, []string{want[2].ID}, false}, {want[2].ID, nil, false}} {
		page, more, err := s.DeliveryAttemptsPage(ctx(t), evt, pg.after, 2)
		var ids []string
		for _, a := range page {
			ids = append(ids, a.ID)
		}
		if err != nil || !slices.Equal(ids, pg.want) || more != pg.more {
			t.Errorf("DeliveryAttemptsPage(after %q, 2) = %v, more %v, %v; want %v, more %v", pg.after, ids, more, err, pg.want, pg.more)
		}
	}
}

func endpointIDs(es []webhookendpoint.Endpoint) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}
