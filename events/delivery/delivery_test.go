package delivery_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/events/webhook"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

func TestDeliversSignedEnvelope(t *testing.T) {
	e := newEnv(t, "")
	r := newReceiver(t, e.clock)
	e.endpoint(t, r)
	evt := e.emit(t, callevent.TypeCallEnded, callEnded("call_1"))

	if n := e.step(t); n != 1 {
		t.Fatalf("attempts made = %d, want 1", n)
	}
	got := r.requests()
	if len(got) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(got))
	}
	if got[0].Verified != nil {
		t.Errorf("Verify = %v, want nil", got[0].Verified)
	}
	if got[0].ID != evt.ID {
		t.Errorf("webhook-id = %q, want the event id %q", got[0].ID, evt.ID)
	}
	var env struct {
		ID        string              `json:"id"`
		Type      string              `json:"type"`
		CreatedAt time.Time           `json:"created_at"`
		Data      callevent.CallEnded `json:"data"`
		Extra     map[string]any      `json:"-"`
	}
	if err := json.Unmarshal(got[0].Body, &env); err != nil {
		t.Fatalf("body %s: %v", got[0].Body, err)
	}
	if env.ID != evt.ID || env.Type != callevent.TypeCallEnded || env.Data.CallID != "call_1" || !env.CreatedAt.Equal(evt.CreatedAt) {
		t.Errorf("envelope = %+v, want id %s, type call.ended, call_1", env, evt.ID)
	}
	var keys map[string]json.RawMessage
	json.Unmarshal(got[0].Body, &keys)
	if _, leaked := keys["AccountID"]; leaked || len(keys) != 4 {
		t.Errorf("envelope keys = %v, want exactly id, type, created_at, data", keys)
	}
	if ua := got[0].Header.Get("User-Agent"); ua != delivery.UserAgent {
		t.Errorf("User-Agent = %q, want %q", ua, delivery.UserAgent)
	}

	as := e.attempts(t, evt.ID)
	if len(as) != 1 || as[0].Outcome != delivery.OutcomeSucceeded || as[0].StatusCode != 204 || as[0].Number != 1 || as[0].NextAttemptAt != nil {
		t.Errorf("attempts = %+v, want one succeeded 204", as)
	}
	// Nothing further is due.
	e.clock.Add(24 * time.Hour)
	if n := e.step(t); n != 0 || len(r.requests()) != 1 {
		t.Errorf("after success: %d more attempts, %d requests; want 0 and 1", n, len(r.requests()))
	}
}

func TestEventFilter(t *testing.T) {
	e := newEnv(t, "")
	all, answered := newReceiver(t, e.clock), newReceiver(t, e.clock)
	e.endpoint(t, all)
	e.endpoint(t, answered, callevent.TypeCallAnswered)
	e.emit(t, callevent.TypeCallEnded, callEnded("call_1"))
	e.emit(t, callevent.TypeCallAnswered, callevent.CallAnswered{CallID: "call_2"})
	e.step(t)
	if n := len(all.requests()); n != 2 {
		t.Errorf("endpoint with every event got %d, want 2", n)
	}
	got := answered.requests()
	if len(got) != 1 {
		t.Fatalf("call.answered endpoint got %d, want 1", len(got))
	}
	var env callevent.Event
	json.Unmarshal(got[0].Body, &env)
	if env.Type != callevent.TypeCallAnswered {
		t.Errorf("call.answered endpoint got %q", env.Type)
	}
}

// A receiver that is down and comes back gets every event, each under its own id.
func TestReceiverDownThenBack(t *testing.T) {
	e := newEnv(t, "")
	r := newReceiver(t, e.clock)
	e.endpoint(t, r)
	r.down()
	var ids []string
	for i := range 5 {
		ids = append(ids, e.emit(t, callevent.TypeCallEnded, callEnded("call_"+strconv.Itoa(i))).ID)
	}
	if n := e.step(t); n != 5 {
		t.Fatalf("first attempts = %d, want 5", n)
	}
	for _, id := range ids {
		as := e.attempts(t, id)
		if len(as) != 1 || as[0].Error != "connection refused" || as[0].NextAttemptAt == nil {
			t.Fatalf("attempts of %s = %+v, want one refused with a retry", id, as)
		}
		if wait := as[0].NextAttemptAt.Sub(as[0].StartedAt); wait < 4500*time.Millisecond || wait > 5600*time.Millisecond {
			t.Errorf("retry after %v, want 5 s ± 10%%", wait)
		}
	}
	r.up()
	if n := e.step(t); n != 0 {
		t.Errorf("attempts before the retry is due = %d, want 0", n)
	}
	e.clock.Add(6 * time.Second)
	e.step(t)
	seen := map[string]bool{}
	for _, req := range r.requests() {
		if req.Verified != nil {
			t.Errorf("Verify = %v", req.Verified)
		}
		seen[req.ID] = true
	}
	for _, id := range ids {
		if !seen[id] {
			t.Errorf("event %s never arrived", id)
		}
	}
}

// The schedule of API.md, every attempt logged, the same webhook-id each time, then give up.
func TestRetryScheduleThenGiveUp(t *testing.T) {
	e := newEnv(t, "")
	r := newReceiver(t, e.clock)
	r.setRespond(func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
	e.endpoint(t, r)
	evt := e.emit(t, callevent.TypeCallEnded, callEnded("call_1"))
	sched := delivery.DefaultSchedule()
	for i := 1; i <= len(sched)+1; i++ {
		e.step(t)
		as := e.attempts(t, evt.ID)
		last := as[len(as)-1]
		if last.NextAttemptAt == nil {
			break
		}
		e.clock.Set(*last.NextAttemptAt)
	}
	as := e.attempts(t, evt.ID)
	if len(as) != 7 {
		t.Fatalf("attempts = %d, want 7", len(as))
	}
	for i, a := range as {
		if a.Number != i+1 || a.StatusCode != 500 || a.Outcome != delivery.OutcomeFailed || a.Error != "HTTP 500" {
			t.Errorf("attempt %d = %+v", i+1, a)
		}
		if i > 0 {
			gap := a.StartedAt.Sub(as[i-1].StartedAt)
			want := sched[i]
			if gap < want*9/10 || gap > want*11/10+time.Second {
				t.Errorf("wait before attempt %d = %v, want %v ± 10%%", i+1, gap, want)
			}
		}
	}
	if as[6].NextAttemptAt != nil {
		t.Errorf("last attempt schedules another at %v", as[6].NextAttemptAt)
	}
	for _, req := range r.requests() {
		if req.ID != evt.ID {
			t.Errorf("webhook-id = %q on a retry, want %q every time", req.ID, evt.ID)
		}
		if req.Verified != nil {
			t.Errorf("Verify at attempt time = %v", req.Verified)
		}
	}
	e.clock.Add(48 * time.Hour)
	if n := e.step(t); n != 0 {
		t.Errorf("attempts after giving up = %d, want 0", n)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	e := newEnv(t, "")
	r := newReceiver(t, e.clock)
	r.setRespond(func(n int, w http.ResponseWriter) {
		if n == 1 {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	e.endpoint(t, r)
	evt := e.emit(t, callevent.TypeCallEnded, callEnded("call_1"))
	e.step(t)
	as := e.attempts(t, evt.ID)
	if len(as) != 1 || as[0].NextAttemptAt == nil {
		t.Fatalf("attempts = %+v", as)
	}
	if wait := as[0].NextAttemptAt.Sub(as[0].StartedAt); wait < 120*time.Second {
		t.Errorf("retry after %v, want at least the Retry-After of 120 s", wait)
	}
	e.clock.Add(60 * time.Second)
	if n := e.step(t); n != 0 {
		t.Errorf("attempted %d times before Retry-After passed", n)
	}
	e.clock.Add(61 * time.Second)
	e.step(t)
	if as := e.attempts(t, evt.ID); len(as) != 2 || as[1].Outcome != delivery.OutcomeSucceeded {
		t.Errorf("attempts = %+v, want the second to succeed", as)
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 11, 22, 7, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, value string
		want        time.Duration
	}{
		{"seconds", "30", 30 * time.Second},
		{"date", now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{"past date", now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"garbage", "soon", 0},
		{"negative", "-5", 0},
		{"capped", "999999999", 24 * time.Hour},
	} {
		h := http.Header{}
		h.Set("Retry-After", tc.value)
		if got := delivery.RetryAfter(h, now); got != tc.want {
			t.Errorf("%s: RetryAfter(%q) = %v, want %v", tc.name, tc.value, got, tc.want)
		}
	}
}

// A receiver slower than the timeout gets the retry; by deduplicating on webhook-id, as
// the docs tell customers to, it changes its state once. Bridgeline records one delivery.
func TestSlowReceiverRetriedWithSameID(t *testing.T) {
	e := newEnv(t, "")
	e.worker.Deliverer.Client = delivery.NewClient(egress.Policy{AllowLoopback: true})
	e.worker.Deliverer.Client.Timeout = 200 * time.Millisecond
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	r := newReceiver(t, e.clock)
	applied := map[string]int{}
	r.setRespond(func(n int, w http.ResponseWriter) {
		reqs := r.requests()
		id := reqs[n-1].ID
		r.mu.Lock()
		applied[id]++ // the receiver's state change, keyed by webhook-id
		first := applied[id] == 1
		r.mu.Unlock()
		if first {
			<-release // slower than the timeout
			return
		}
		w.WriteHeader(http.StatusOK) // already applied: acknowledge only
	})
	e.endpoint(t, r)
	evt := e.emit(t, callevent.TypeCallEnded, callEnded("call_1"))
	e.step(t)
	as := e.attempts(t, evt.ID)
	if len(as) != 1 || as[0].Error != "timeout" || as[0].NextAttemptAt == nil {
		t.Fatalf("first attempt = %+v, want a timeout with a retry", as)
	}
	e.clock.Set(*as[0].NextAttemptAt)
	e.step(t)
	as = e.attempts(t, evt.ID)
	if len(as) != 2 || as[1].Outcome != delivery.OutcomeSucceeded {
		t.Fatalf("attempts = %+v, want timeout then success", as)
	}
	reqs := r.requests()
	if len(reqs) != 2 || reqs[0].ID != reqs[1].ID || reqs[0].ID != evt.ID {
		t.Errorf("requests carried ids %v, want %s twice", ids(reqs), evt.ID)
	}
	if string(reqs[0].Body) != string(reqs[1].Body) {
		t.Errorf("retry body differs from the first:\n%s\n%s", reqs[0].Body, reqs[1].Body)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(applied) != 1 {
		t.Errorf("receiver applied %d distinct events, want 1", len(applied))
	}
	if delivery.NewClient(egress.Policy{}).Timeout != 15*time.Second {
		t.Errorf("delivery timeout = %v, want 15 s", delivery.NewClient(egress.Policy{}).Timeout)
	}
}

func ids(rs []received) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

// A 410 disables the endpoint: no retry, and later events are not sent to it.
func TestGoneDisablesEndpoint(t *testing.T) {
	e := newEnv(t, "")
	gone, other := newReceiver(t, e.clock), newReceiver(t, e.clock)
	gone.setRespond(func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusGone) })
	ep := e.endpoint(t, gone)
	e.endpoint(t, other)
	first := e.emit(t, callevent.TypeCallEnded, callEnded("call_1"))
	e.step(t)
	as := e.attempts(t, first.ID)
	var goneAttempt *delivery.Attempt
	for i := range as {
		if as[i].EndpointID == ep.ID {
			goneAttempt = &as[i]
		}
	}
	if goneAttempt == nil || goneAttempt.Outcome != delivery.OutcomeGone || goneAttempt.NextAttemptAt != nil {
		t.Fatalf("attempt to the 410 endpoint = %+v, want outcome gone, no retry", goneAttempt)
	}
	got, err := e.endpoints.Get(context.Background(), e.account, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != webhookendpoint.StatusDisabled || got.DisabledReason != webhookendpoint.DisabledGone {
		t.Errorf("endpoint after 410 = %s (%s), want disabled (gone)", got.Status, got.DisabledReason)
	}
	e.emit(t, callevent.TypeCallEnded, callEnded("call_2"))
	e.clock.Add(time.Hour)
	e.step(t)
	if n := len(gone.requests()); n != 1 {
		t.Errorf("410 endpoint got %d requests, want 1", n)
	}
	if n := len(other.requests()); n != 2 {
		t.Errorf("other endpoint got %d requests, want 2", n)
	}
}

// Rotation: for 24 h both secrets sign, so a receiver holding either verifies; then only
// the new one.
func TestRotatedSecretsBothSign(t *testing.T) {
	e := newEnv(t, "")
	r := newReceiver(t, e.clock)
	ep := e.endpoint(t, r)
	rotated, err := e.endpoints.RotateSecret(context.Background(), e.account, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	signing, err := e.endpoints.Signing(context.Background(), e.account, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Secret == ep.Secret || signing.Secret != rotated.Secret || signing.PreviousSecret != ep.Secret {
		t.Fatalf("rotate: secret %q, signing with %q and %q; want new and %q", rotated.Secret, signing.Secret, signing.PreviousSecret, ep.Secret)
	}
	e.emit(t, callevent.TypeCallEnded, callEnded("call_1"))
	e.step(t)
	e.clock.Add(webhookendpoint.RotationOverlap + time.Second)
	e.emit(t, callevent.TypeCallEnded, callEnded("call_2"))
	e.step(t)
	reqs := r.requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d, want 2", len(reqs))
	}
	check := func(req received, secret string) error {
		return webhook.Verifier{Secrets: []string{secret}, Now: func() time.Time { return req.At }}.Verify(req.Header, req.Body)
	}
	if check(reqs[0], ep.Secret) != nil || check(reqs[0], rotated.Secret) != nil {
		t.Errorf("during the overlap: old %v, new %v; want both to verify", check(reqs[0], ep.Secret), check(reqs[0], rotated.Secret))
	}
	if check(reqs[1], ep.Secret) == nil || check(reqs[1], rotated.Secret) != nil {
		t.Errorf("after the overlap: old %v, new %v; want only the new to verify", check(reqs[1], ep.Secret), check(reqs[1], rotated.Secret))
	}
}

func TestDeletedEndpointGetsNothing(t *testing.T) {
	e := newEnv(t, "")
	r := newReceiver(t, e.clock)
	r.setRespond(func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusBadGateway) })
	ep := e.endpoint(t, r)
	e.emit(t, callevent.TypeCallEnded, callEnded("call_1"))
	e.step(t)
	if _, err := e.endpoints.Delete(context.Background(), e.account, ep.ID); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(time.Hour)
	if n := e.step(t); n != 0 {
		t.Errorf("attempts after delete = %d, want 0", n)
	}
	if n := len(r.requests()); n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
}

// The real loop, on the real clock: events written while it runs arrive.
func TestWorkerRun(t *testing.T) {
	e := newEnv(t, "")
	e.worker.Now, e.worker.Deliverer.Now, e.endpoints.Now = nil, nil, nil
	e.clock = &clock{t: time.Now()}
	r := newReceiver(t, e.clock)
	e.endpoint(t, r)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.worker.Run(ctx) }()
	const n = 20
	for i := range n {
		e.emit(t, callevent.TypeCallEnded, callEnded("call_"+strconv.Itoa(i)))
		e.worker.Notify()
	}
	waitFor(t, 10*time.Second, func() bool { return len(r.requests()) >= n })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
	seen := map[string]bool{}
	for _, req := range r.requests() {
		if seen[req.ID] {
			t.Errorf("event %s delivered twice", req.ID)
		}
		seen[req.ID] = true
	}
}

func waitFor(t *testing.T, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A slow endpoint holds at most its share of the worker: another endpoint's events keep
// flowing while every attempt to the slow one hangs.
func TestSlowEndpointDoesNotStarveOthers(t *testing.T) {
	e := newEnv(t, "")
	e.worker.Now, e.worker.Deliverer.Now, e.endpoints.Now = nil, nil, nil
	// Both endpoints are one account's: this is about endpoints, so the account may use
	// every slot.
	e.worker.Concurrency, e.worker.PerEndpoint, e.worker.PerAccount = 4, 2, 4
	e.clock = &clock{t: time.Now()}
	release := make(chan struct{})
	slow, fast := newReceiver(t, e.clock), newReceiver(t, e.clock)
	slow.setRespond(func(n int, w http.ResponseWriter) { <-release })
	e.endpoint(t, slow)
	e.endpoint(t, fast)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.worker.Run(ctx) }()
	for i := range 10 {
		e.emit(t, callevent.TypeCallEnded, callEnded("call_"+strconv.Itoa(i)))
	}
	e.worker.Notify()
	waitFor(t, 10*time.Second, func() bool { return len(fast.requests()) == 10 })
	if n := len(slow.requests()); n != 2 {
		t.Errorf("requests hanging at the slow endpoint = %d, want its cap of 2", n)
	}
	close(release)
	waitFor(t, 10*time.Second, func() bool { return len(slow.requests()) == 10 })
	cancel()
	<-done
}
