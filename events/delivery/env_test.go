package delivery_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/events/webhook"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/secretbox"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

// clock is a test clock the worker, deliverer and endpoint rules all read.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.t) {
		c.t = t
	}
}

func (c *clock) Add(d time.Duration) { c.Set(c.Now().Add(d)) }

// received is one request a receiver got.
type received struct {
	ID       string
	Body     []byte
	Header   http.Header
	At       time.Time // test clock
	Verified error
}

// receiver is a customer's webhook endpoint on 127.0.0.1. respond decides each answer
// (n counts requests from 1); verify checks every request with the endpoint's secret.
type receiver struct {
	t       *testing.T
	clock   *clock
	ln      net.Listener
	srv     *http.Server
	addr    string
	mu      sync.Mutex
	got     []received
	secret  string
	respond func(n int, w http.ResponseWriter)
}

func newReceiver(t *testing.T, clk *clock) *receiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{t: t, clock: clk, addr: ln.Addr().String()}
	r.serve(ln)
	t.Cleanup(r.down)
	return r
}

func (r *receiver) URL() string { return "http://" + r.addr + "/hooks" }

func (r *receiver) serve(ln net.Listener) {
	r.ln = ln
	r.srv = &http.Server{Handler: http.HandlerFunc(r.handle)}
	go r.srv.Serve(ln)
}

// down closes the listener: the port refuses connections. The listener is closed here,
// not only through the server: a server closed before its Serve goroutine ran closes the
// listener later, and a connection the kernel accepted meanwhile is then reset, not
// refused.
func (r *receiver) down() {
	if r.srv != nil {
		r.ln.Close()
		r.srv.Close()
		r.srv = nil
	}
}

// up listens on the same port again.
func (r *receiver) up() {
	r.t.Helper()
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		r.t.Fatalf("listen again on %s: %v", r.addr, err)
	}
	r.serve(ln)
}

func (r *receiver) handle(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	rec := received{ID: req.Header.Get(webhook.HeaderID), Body: body, Header: req.Header.Clone(), At: r.clock.Now()}
	if r.secret != "" {
		rec.Verified = webhook.Verifier{Secrets: []string{r.secret}, Now: r.clock.Now}.Verify(req.Header, body)
	}
	r.got = append(r.got, rec)
	n, respond := len(r.got), r.respond
	r.mu.Unlock()
	if respond != nil {
		respond(n, w)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) setRespond(f func(n int, w http.ResponseWriter)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.respond = f
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// env is one store file with the delivery parts wired on it, all on the test clock.
type env struct {
	store     *sqlite.Store
	clock     *clock
	endpoints *webhookendpoint.Service
	worker    *delivery.Worker
	account   string
}

func newEnv(t *testing.T, path string) *env {
	t.Helper()
	ctx := context.Background()
	if path == "" {
		path = filepath.Join(t.TempDir(), "bridgeline.db")
	}
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clk := &clock{t: time.Now().UTC()}
	// Secrets sealed at rest, as the local stack does: every test here signs with secrets
	// opened from the store.
	key, err := secretbox.OpenKeyFile(filepath.Join(filepath.Dir(path), secretbox.KeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	eps := &webhookendpoint.Service{Store: st, Secrets: key, Destinations: egress.Policy{AllowLoopback: true}, Now: clk.Now}
	d := &delivery.Deliverer{Endpoints: eps, Now: clk.Now, Client: delivery.NewClient(egress.Policy{AllowLoopback: true})}
	w := &delivery.Worker{Outbox: st, Log: st, Subscribers: eps, Deliverer: d, Now: clk.Now}
	return &env{store: st, clock: clk, endpoints: eps, worker: w, account: ident.New("acct")}
}

func (e *env) endpoint(t *testing.T, r *receiver, events ...string) webhookendpoint.Endpoint {
	t.Helper()
	url := r.URL()
	in := webhookendpoint.Input{URL: &url}
	if len(events) > 0 {
		in.Events = &events
	}
	ep, err := e.endpoints.Create(context.Background(), e.account, in)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.secret = ep.Secret
	r.mu.Unlock()
	return ep
}

// emit writes an event into the outbox the way a state change does: inside a transaction.
func (e *env) emit(t *testing.T, typ string, data any) callevent.Event {
	t.Helper()
	raw, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	evt := callevent.Event{ID: ident.New("evt"), AccountID: e.account, Type: typ,
		CreatedAt: e.clock.Now().Truncate(time.Millisecond), Data: raw}
	emitTo(t, e.store, evt)
	return evt
}

func emitTo(t *testing.T, st *sqlite.Store, evts ...callevent.Event) {
	t.Helper()
	ctx := context.Background()
	tx, err := st.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlite.InsertEvents(ctx, tx, evts); err != nil {
		tx.Rollback()
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// step runs the worker once and returns how many attempts it made.
func (e *env) step(t *testing.T) int {
	t.Helper()
	n, err := e.worker.RunOnce(context.Background())
	if err != nil {
		t.Fatalf("RunOnce: %v", err)
	}
	return n
}

func (e *env) attempts(t *testing.T, eventID string) []delivery.Attempt {
	t.Helper()
	as, err := e.store.ListDeliveryAttempts(context.Background(), eventID)
	if err != nil {
		t.Fatal(err)
	}
	return as
}

func callEnded(callID string) callevent.CallEnded {
	now := time.Now().UTC().Truncate(time.Millisecond)
	return callevent.CallEnded{CallID: callID, Direction: "outbound", From: "sim:bridgeline", To: "sim:alice",
		Media: "video", HandledBy: "customer", StartedAt: now.Add(-time.Minute), EndedAt: now,
		DurationMS: 60000, EndReason: "deleted", EndedBy: "customer"}
}
