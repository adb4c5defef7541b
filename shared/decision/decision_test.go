package decision_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/events/webhook"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/decision"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

type env struct {
	t       *testing.T
	store   *sqlite.Store
	eps     *webhookendpoint.Service
	asker   *decision.Asker
	account string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "d.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	eps := &webhookendpoint.Service{Store: st, Destinations: egress.Policy{AllowLoopback: true}}
	client := delivery.NewClient(egress.Policy{AllowLoopback: true})
	client.Timeout = 0 // the decision deadline bounds each request
	a := &decision.Asker{Store: st, Events: st, Subscribers: eps,
		Deliverer: &delivery.Deliverer{Endpoints: eps, Client: client},
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil))}
	return &env{t: t, store: st, eps: eps, asker: a, account: ident.New("acct")}
}

// hook is a customer's endpoint: respond answers each verified call.incoming.
type hook struct {
	mu      sync.Mutex
	secret  string
	got     []callevent.CallIncoming
	headers []http.Header
	errs    []error
}

func (e *env) hook(respond func(w http.ResponseWriter, in callevent.CallIncoming)) *hook {
	h := &hook{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		if err := webhook.Verify(h.secret, r.Header, body); err != nil {
			h.errs = append(h.errs, err)
		}
		var evt struct {
			Type string                 `json:"type"`
			Data callevent.CallIncoming `json:"data"`
		}
		json.Unmarshal(body, &evt)
		if evt.Type != callevent.TypeCallIncoming {
			h.errs = append(h.errs, errType(evt.Type))
		}
		h.got = append(h.got, evt.Data)
		h.headers = append(h.headers, r.Header.Clone())
		h.mu.Unlock()
		respond(w, evt.Data)
	}))
	e.t.Cleanup(srv.Close)
	url := srv.URL
	ep, err := e.eps.Create(context.Background(), e.account, webhookendpoint.Input{URL: &url})
	if err != nil {
		e.t.Fatal(err)
	}
	h.mu.Lock()
	h.secret = ep.Secret
	h.mu.Unlock()
	return h
}

type errType string

func (e errType) Error() string { return "unexpected event type " + string(e) }

func (e *env) incoming(timeout time.Duration) decision.Incoming {
	callID := ident.New("call")
	return decision.Incoming{AccountID: e.account, CallID: callID, LineID: ident.New("line"), From: "sim:caller",
		To: "+15550100001", Media: "video", Timeout: timeout,
		Session: callevent.Session{SessionID: ident.New("ses"), CallID: callID, RTCURL: "ws://127.0.0.1:7880",
			ParticipantToken: "token", ExpiresAt: time.Now().Add(10 * time.Minute)}}
}

// decided waits for the call's decision in the store, as the sweeper reads it.
func (e *env) decided(callID string) decision.Record {
	e.t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		r, err := e.store.GetDecision(context.Background(), callID)
		if err != nil {
			e.t.Fatal(err)
		}
		if r.Decision != "" {
			return r
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s still undecided after 5 s", callID)
		}
	}
}

func answerWith(action string) func(http.ResponseWriter, callevent.CallIncoming) {
	return func(w http.ResponseWriter, _ callevent.CallIncoming) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"action":"` + action + `"}`))
	}
}

func TestAcceptInWebhookResponse(t *testing.T) {
	e := newEnv(t)
	h := e.hook(answerWith("accept"))
	in := e.incoming(5 * time.Second)
	start := time.Now()
	r, err := e.asker.Post(context.Background(), in, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Decision != decision.Accept || r.Source != decision.SourceWebhook {
		t.Errorf("decision = %s from %s, want accept from webhook_response", r.Decision, r.Source)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Post took %v; an answer in the response should end it at once", d)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.errs) > 0 || len(h.got) != 1 {
		t.Fatalf("receiver: %d requests, errors %v", len(h.got), h.errs)
	}
	got := h.got[0]
	if got.CallID != in.CallID || got.Session.ParticipantToken != "token" || got.LineID != in.LineID ||
		!got.AnswerBy.Equal(r.AnswerBy) || got.AnswerBy.Before(start.Add(4*time.Second)) {
		t.Errorf("call.incoming data = %+v", got)
	}
	// Logged like every event, with its attempt.
	evt, err := e.store.GetEvent(context.Background(), r.EventID)
	if err != nil || evt.Type != callevent.TypeCallIncoming || h.headers[0].Get(webhook.HeaderID) != evt.ID {
		t.Errorf("event log: %+v, %v", evt, err)
	}
	// The log keeps everything but the token, which only the delivery carried.
	var logged callevent.CallIncoming
	if err := json.Unmarshal(evt.Data, &logged); err != nil {
		t.Fatal(err)
	}
	if logged.Session.ParticipantToken != decision.RedactedToken || logged.Session.SessionID != in.Session.SessionID || logged.CallID != in.CallID {
		t.Errorf("logged call.incoming session = %+v, want the token redacted and the rest kept", logged.Session)
	}
	as, _ := e.store.ListDeliveryAttempts(context.Background(), r.EventID)
	if len(as) != 1 || as[0].Outcome != delivery.OutcomeSucceeded {
		t.Errorf("attempts = %+v", as)
	}
	if evts, _ := e.store.UndispatchedEvents(context.Background(), 10); len(evts) != 0 {
		t.Errorf("call.incoming left for the outbox worker: %v", evts)
	}
}

// The webhook acknowledges without an answer; the API answer decides; a later different
// answer is refused, the same one is accepted again.
func TestAnswerThroughAPI(t *testing.T) {
	e := newEnv(t)
	e.hook(func(w http.ResponseWriter, in callevent.CallIncoming) {
		w.WriteHeader(http.StatusAccepted)
		go func() {
			if _, err := decision.Answer(context.Background(), e.store, e.account, in.CallID, callevent.Answer{Action: "decline"}, time.Now(), nil); err != nil {
				t.Errorf("API answer: %v", err)
			}
		}()
	})
	in := e.incoming(5 * time.Second)
	r, err := e.asker.Post(context.Background(), in, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Decision != "" && r.Decision != decision.Decline {
		t.Fatalf("Post returned decision %q; the acknowledgement carried none", r.Decision)
	}
	r = e.decided(in.CallID)
	if r.Decision != decision.Decline || r.Source != decision.SourceAPI {
		t.Fatalf("decision = %s from %s, want decline from api", r.Decision, r.Source)
	}
	if _, err := decision.Answer(context.Background(), e.store, e.account, in.CallID, callevent.Answer{Action: "accept"}, time.Now(), nil); !apierr.Is(err, apierr.CodeCallAlreadyAnswered) {
		t.Errorf("different later answer = %v, want call_already_answered", err)
	}
	if _, err := decision.Answer(context.Background(), e.store, e.account, in.CallID, callevent.Answer{Action: "decline"}, time.Now(), nil); err != nil {
		t.Errorf("same answer again = %v, want success", err)
	}
	if _, err := decision.Answer(context.Background(), e.store, ident.New("acct"), in.CallID, callevent.Answer{Action: "decline"}, time.Now(), nil); !apierr.Is(err, apierr.CodeResourceNotFound) {
		t.Errorf("another account's answer = %v, want resource_not_found", err)
	}
	if _, err := decision.Answer(context.Background(), e.store, e.account, in.CallID, callevent.Answer{Action: "maybe"}, time.Now(), nil); !apierr.Is(err, apierr.CodeParameterInvalid) {
		t.Errorf("bad action = %v, want parameter_invalid", err)
	}
}

func TestTimeout(t *testing.T) {
	e := newEnv(t)
	e.hook(func(w http.ResponseWriter, _ callevent.CallIncoming) {
		time.Sleep(3 * time.Second) // slower than the deadline
	})
	in := e.incoming(time.Second)
	start := time.Now()
	r, err := e.asker.Post(context.Background(), in, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if r.Decision != "" {
		t.Errorf("decision = %q from %q, want none yet (the POST ran out at answer_by)", r.Decision, r.Source)
	}
	if took < 900*time.Millisecond || took > 2500*time.Millisecond {
		t.Errorf("Post took %v, want about the 1 s decision timeout, not the 5 s wait", took)
	}
	// What the sweeper does at answer_by.
	if r, err = e.asker.Expire(context.Background(), in.CallID); err != nil || r.Decision != decision.Timeout || r.Source != "" {
		t.Errorf("Expire = %q from %q, %v; want timeout", r.Decision, r.Source, err)
	}
	as, _ := e.store.ListDeliveryAttempts(context.Background(), r.EventID)
	if len(as) != 1 || as[0].Error != "timeout" {
		t.Errorf("attempts = %+v, want one that timed out", as)
	}
	if _, err := decision.Answer(context.Background(), e.store, e.account, in.CallID, callevent.Answer{Action: "accept"}, time.Now(), nil); !apierr.Is(err, apierr.CodeCallNotAnswerable) {
		t.Errorf("answer after the deadline = %v, want call_not_answerable", err)
	}
}

func TestNoEndpointMeansTimeoutAtOnce(t *testing.T) {
	e := newEnv(t)
	start := time.Now()
	r, err := e.asker.Post(context.Background(), e.incoming(10*time.Second), 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Decision != decision.Timeout || time.Since(start) > time.Second {
		t.Errorf("decision %q after %v, want timeout at once", r.Decision, time.Since(start))
	}
}

// Endpoints that answer differently, and API answers racing them: exactly one decision,
// and every other answer is told it lost.
func TestFirstAnswerWins(t *testing.T) {
	for i := range 5 {
		e := newEnv(t)
		e.hook(answerWith("accept"))
		e.hook(answerWith("decline"))
		in := e.incoming(5 * time.Second)
		var wg sync.WaitGroup
		results := make(chan error, 8)
		e.hook(func(w http.ResponseWriter, c callevent.CallIncoming) {
			w.WriteHeader(http.StatusNoContent)
			for j := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := decision.Answer(context.Background(), e.store, e.account, c.CallID, callevent.Answer{Action: []string{"accept", "decline"}[j%2]}, time.Now(), nil)
					results <- err
				}()
			}
		})
		r, err := e.asker.Post(context.Background(), in, 0)
		if err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		close(results)
		stored, _ := e.store.GetDecision(context.Background(), in.CallID)
		if stored.Decision != r.Decision || (r.Decision != "accept" && r.Decision != "decline") {
			t.Fatalf("run %d: Post returned %s, store has %s", i, r.Decision, stored.Decision)
		}
		for err := range results {
			if err != nil && !apierr.Is(err, apierr.CodeCallAlreadyAnswered) {
				t.Errorf("run %d: racing answer = %v", i, err)
			}
		}
	}
}
