package dynamo_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/events/webhook"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

// TestLocalOutbox runs the local stack's delivery worker on the DynamoDB store (what
// `bridgeline dev --store dynamodb` does): an event written with its state change is
// fanned out to the subscribed endpoints, a failing receiver is retried on schedule, and
// every attempt is logged.
func TestLocalOutbox(t *testing.T) {
	s := newStore(t)
	s.EnableLocalOutbox()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var okHits, flakyHits atomic.Int32
	var secret atomic.Value
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhook.Verify(secret.Load().(string), r.Header, body); err != nil {
			t.Errorf("delivered webhook does not verify: %v", err)
		}
		okHits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer ok.Close()
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if flakyHits.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer flaky.Close()

	acct := ident.New("acct")
	eps := &webhookendpoint.Service{Store: s, Destinations: egress.Policy{AllowLoopback: true}}
	for _, u := range []string{ok.URL, flaky.URL} {
		e, err := eps.Create(ctx, acct, webhookendpoint.Input{URL: &u})
		if err != nil {
			t.Fatal(err)
		}
		if u == ok.URL {
			secret.Store(e.Secret)
		}
	}
	evt := callevent.Event{ID: ident.New("evt"), AccountID: acct, Type: callevent.TypeCallEnded,
		CreatedAt: time.Now().UTC().Truncate(time.Millisecond), Data: []byte(`{"call_id":"call_1"}`)}
	put, err := s.EventPut(evt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client().TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{put}}); err != nil {
		t.Fatal(err)
	}

	w := &delivery.Worker{Outbox: s, Log: s, Subscribers: eps, Poll: 20 * time.Millisecond,
		Deliverer: &delivery.Deliverer{Endpoints: eps, Client: delivery.NewClient(egress.Policy{AllowLoopback: true}), Schedule: delivery.Schedule{0, 50 * time.Millisecond}}}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	deadline := time.Now().Add(30 * time.Second)
	for okHits.Load() < 1 || flakyHits.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: %d posts to the good receiver, %d to the flaky one; want 1 and 2", okHits.Load(), flakyHits.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil && err != context.Canceled {
		t.Errorf("worker: %v", err)
	}

	attempts, err := s.ListDeliveryAttempts(ctx, evt.ID)
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, a := range attempts {
		outcomes = append(outcomes, a.Outcome)
	}
	if len(attempts) != 3 || strings.Count(strings.Join(outcomes, ","), delivery.OutcomeSucceeded) != 2 {
		t.Errorf("attempts = %v, want 3 with 2 succeeded (one retry)", outcomes)
	}
	if left, err := s.UndispatchedEvents(ctx, 10); err != nil || len(left) != 0 {
		t.Errorf("undispatched after fan-out = %d, %v; want none", len(left), err)
	}
	if _, due, err := s.NextDeliveryDue(ctx); err != nil || due {
		t.Errorf("NextDeliveryDue = %v, %v; want nothing pending", due, err)
	}
	if err := s.AddDeliveries(ctx, evt.ID, nil); err == nil {
		t.Error("fanning out the same event twice succeeded, want a conflict")
	}
}

// TestLocalOutboxOffOnAWS: without the local outbox, events carry no undispatched mark
// (on AWS nothing would clear it).
func TestLocalOutboxOffOnAWS(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	evt := callevent.Event{ID: ident.New("evt"), AccountID: ident.New("acct"), Type: callevent.TypeCallEnded,
		CreatedAt: time.Now().UTC(), Data: []byte(`{}`)}
	put, _ := s.EventPut(evt)
	if _, err := s.Client().TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{put}}); err != nil {
		t.Fatal(err)
	}
	if left, err := s.UndispatchedEvents(ctx, 10); err != nil || len(left) != 0 {
		t.Errorf("UndispatchedEvents = %d, %v; want none", len(left), err)
	}
}

// TestOutboxClaims: claims respect the per-endpoint room, a claim left by a killed
// process is released, and a delivery whose endpoint is gone is canceled.
func TestOutboxClaims(t *testing.T) {
	s := newStore(t)
	s.EnableLocalOutbox()
	ctx := context.Background()
	acct := ident.New("acct")
	eps := &webhookendpoint.Service{Store: s, Destinations: egress.Policy{AllowLoopback: true}}
	u := "http://127.0.0.1:9/hooks"
	a, err := eps.Create(ctx, acct, webhookendpoint.Input{URL: &u})
	if err != nil {
		t.Fatal(err)
	}
	b, err := eps.Create(ctx, acct, webhookendpoint.Input{URL: &u})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	var ds []delivery.Delivery
	for i, ep := range []string{a.ID, a.ID, a.ID, b.ID} {
		ds = append(ds, delivery.Delivery{ID: ident.New("dlv"), EventID: ident.New("evt"), AccountID: acct, EndpointID: ep,
			State: delivery.StatePending, NextAttemptAt: now.Add(time.Duration(i-10) * time.Second), CreatedAt: now, UpdatedAt: now})
	}
	if err := s.AddRedeliveries(ctx, ds); err != nil {
		t.Fatal(err)
	}
	next, due, err := s.NextDeliveryDue(ctx)
	if err != nil || !due || !next.Equal(ds[0].NextAttemptAt) {
		t.Fatalf("NextDeliveryDue = %v, %v, %v; want %v", next, due, err, ds[0].NextAttemptAt)
	}
	// Two slots per endpoint, one already busy at a: one of a's, then b's.
	got, err := s.ClaimDueDeliveries(ctx, now, delivery.ClaimLimits{Limit: 10, PerEndpoint: 2, Busy: map[string]int{a.ID: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range got {
		ids = append(ids, d.ID)
	}
	if want := []string{ds[0].ID, ds[3].ID}; strings.Join(ids, ",") != strings.Join(want, ",") {
		t.Errorf("claimed %v, want %v (oldest of a, then b)", ids, want)
	}
	if again, _ := s.ClaimDueDeliveries(ctx, now, delivery.ClaimLimits{Limit: 10, PerEndpoint: 5}); len(again) != 2 {
		t.Errorf("second claim took %d, want the 2 left", len(again))
	}
	// A restart releases every claim; then b is deleted and its delivery canceled.
	n, err := s.ReleaseDeliveryClaims(ctx, now.Add(time.Second))
	if err != nil || n != 4 {
		t.Fatalf("ReleaseDeliveryClaims = %d, %v; want 4", n, err)
	}
	if _, err := eps.Delete(ctx, acct, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReleaseDeliveryClaims(ctx, now); err != nil {
		t.Fatal(err)
	}
	left, err := s.ClaimDueDeliveries(ctx, now, delivery.ClaimLimits{Limit: 10, PerEndpoint: 5})
	if err != nil || len(left) != 3 {
		t.Fatalf("after release and cancel: claimed %d, %v; want a's 3", len(left), err)
	}
	for _, d := range left {
		if d.EndpointID != a.ID {
			t.Errorf("claimed %s of deleted endpoint %s", d.ID, d.EndpointID)
		}
	}
	// Finishing one as succeeded takes it off the queue for good.
	done := left[0]
	done.State, done.Attempts = delivery.StateSucceeded, 1
	if err := s.FinishDelivery(ctx, done, nil); err != nil {
		t.Fatal(err)
	}
	s.ReleaseDeliveryClaims(ctx, now.Add(time.Second))
	if rest, _ := s.ClaimDueDeliveries(ctx, now, delivery.ClaimLimits{Limit: 10, PerEndpoint: 5}); len(rest) != 2 {
		t.Errorf("after one finished: %d due, want 2", len(rest))
	}
}
