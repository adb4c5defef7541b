// Package eventtest is for tests of code that emits events: a customer receiver on
// 127.0.0.1 that verifies every request with events/webhook, records the events, and can
// answer call.incoming; and a check that a call got exactly one event of a type.
package eventtest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/webhook"
	"github.com/bridgeline/bridgeline/shared/listing"
)

// Received is one verified request.
type Received struct {
	WebhookID string
	Event     callevent.Event
	At        time.Time
}

// Receiver is a webhook endpoint under test. Set Secret (the endpoint's) before events
// arrive; requests that fail Verify are counted in Rejected and answered 400.
type Receiver struct {
	URL string

	mu       sync.Mutex
	secret   string
	got      []Received
	rejected []error
	answer   func(callevent.CallIncoming) callevent.Answer
	changed  chan struct{}
}

// NewReceiver starts a receiver for the test's lifetime.
func NewReceiver(t testing.TB) *Receiver {
	r := &Receiver{changed: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/hooks"
	return r
}

// SetSecret sets the secret requests are verified with.
func (r *Receiver) SetSecret(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secret = s
}

// AnswerIncoming makes the receiver answer call.incoming in its response body with the
// action f returns ("" answers nothing).
func (r *Receiver) AnswerIncoming(f func(callevent.CallIncoming) string) {
	r.AnswerIncomingWith(func(in callevent.CallIncoming) callevent.Answer { return callevent.Answer{Action: f(in)} })
}

// AnswerIncomingWith makes the receiver answer call.incoming with the whole answer f
// returns (an assistant answer with its variables); an empty Action answers nothing.
func (r *Receiver) AnswerIncomingWith(f func(callevent.CallIncoming) callevent.Answer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answer = f
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	if err := webhook.Verify(r.secret, req.Header, body); err != nil {
		r.rejected = append(r.rejected, err)
		r.mu.Unlock()
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	var evt callevent.Event
	json.Unmarshal(body, &evt)
	r.got = append(r.got, Received{WebhookID: req.Header.Get(webhook.HeaderID), Event: evt, At: time.Now()})
	answer := r.answer
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
	if evt.Type == callevent.TypeCallIncoming && answer != nil {
		var in callevent.CallIncoming
		json.Unmarshal(evt.Data, &in)
		if a := answer(in); a.Action != "" {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(a)
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// Events returns what arrived, in order; typ "" means every type.
func (r *Receiver) Events(typ string) []Received {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Received
	for _, g := range r.got {
		if typ == "" || g.Event.Type == typ {
			out = append(out, g)
		}
	}
	return out
}

// Rejected returns the verification errors seen.
func (r *Receiver) Rejected() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.rejected...)
}

// WaitFor waits up to limit for an event of type typ whose data matches (nil matches
// any) and returns it.
func (r *Receiver) WaitFor(t testing.TB, typ string, limit time.Duration, match func(json.RawMessage) bool) Received {
	t.Helper()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		for _, g := range r.Events(typ) {
			if match == nil || match(g.Event.Data) {
				return g
			}
		}
		select {
		case <-r.changed:
		case <-time.After(20 * time.Millisecond):
		case <-deadline.C:
			t.Fatalf("no %s arrived within %v (got %d events, %d rejected)", typ, limit, len(r.Events("")), len(r.Rejected()))
		}
	}
}

// ForCall matches event data whose call_id is callID.
func ForCall(callID string) func(json.RawMessage) bool {
	return func(data json.RawMessage) bool {
		var d struct {
			CallID string `json:"call_id"`
		}
		json.Unmarshal(data, &d)
		return d.CallID == callID
	}
}

// EventLister is the part of the store's event log ExactlyOnce reads.
type EventLister interface {
	ListEvents(ctx context.Context, accountID, typ string, q listing.Query) ([]callevent.Event, error)
}

// ExactlyOnce fails the test unless the account's event log holds exactly one event of
// type typ for the call, and returns it.
func ExactlyOnce(t testing.TB, log EventLister, accountID, typ, callID string) callevent.Event {
	t.Helper()
	var found []callevent.Event
	q := listing.Query{Limit: listing.MaxLimit}
	for range 100 {
		page, err := log.ListEvents(context.Background(), accountID, typ, q)
		if err != nil {
			t.Fatalf("ListEvents: %v", err)
		}
		items, more := listing.Page(page, q.Limit)
		for _, e := range items {
			if ForCall(callID)(e.Data) {
				found = append(found, e)
			}
		}
		if !more {
			break
		}
		q.StartingAfter = items[len(items)-1].ID
	}
	if len(found) != 1 {
		t.Fatalf("%s events for %s = %d, want exactly 1", typ, callID, len(found))
	}
	return found[0]
}
