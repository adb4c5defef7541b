package delivery_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/secretbox"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

const workerDBEnv = "BRIDGELINE_TEST_WORKER_DB"

// TestWorkerProcess is not a test: it is the worker process TestKillMidDelivery starts
// (this test binary again) and kills.
func TestWorkerProcess(t *testing.T) {
	path := os.Getenv(workerDBEnv)
	if path == "" {
		t.Skip("helper process for TestKillMidDelivery")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key, err := secretbox.OpenKeyFile(filepath.Join(filepath.Dir(path), secretbox.KeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	eps := &webhookendpoint.Service{Store: st, Secrets: key, Destinations: egress.Policy{AllowLoopback: true}}
	w := &delivery.Worker{Outbox: st, Log: st, Subscribers: eps, Deliverer: &delivery.Deliverer{Endpoints: eps, Client: delivery.NewClient(egress.Policy{AllowLoopback: true})},
		Poll: 20 * time.Millisecond, Concurrency: 8, PerEndpoint: 8, PerAccount: 8}
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
}

func startWorker(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWorkerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), workerDBEnv+"="+path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// SIGKILL while deliveries are in flight, start again: every event still arrives, with
// the webhook-id it had, and the store ends with every delivery succeeded.
func TestKillMidDelivery(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	path := filepath.Join(t.TempDir(), "bridgeline.db")
	e := newEnv(t, path)
	e.clock = &clock{t: time.Now()}
	r := newReceiver(t, e.clock)
	hold := make(chan struct{})
	var holdOnce sync.Once
	release := func() { holdOnce.Do(func() { close(hold) }) }
	t.Cleanup(release)
	var killed atomic.Bool
	var acked sync.Map // webhook-id -> true once a 2xx went back to a live worker
	r.setRespond(func(n int, w http.ResponseWriter) {
		req := r.requests()[n-1]
		if !killed.Load() {
			// Before the kill: hang, so the worker is mid-delivery when it dies.
			select {
			case <-hold:
			case <-time.After(30 * time.Second):
			}
			return
		}
		acked.Store(req.ID, true)
		w.WriteHeader(http.StatusOK)
	})
	e.endpoint(t, r)
	const n = 12
	var want []string
	for i := range n {
		evt := e.emit(t, callevent.TypeCallEnded, callEnded("call_"+strconv.Itoa(i)))
		want = append(want, evt.ID)
	}

	first := startWorker(t, path)
	waitFor(t, 20*time.Second, func() bool { return len(r.requests()) >= 8 }) // 8 = the worker's concurrency
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	inFlight := len(r.requests())
	killed.Store(true)
	release()

	startWorker(t, path)
	waitFor(t, 20*time.Second, func() bool {
		for _, id := range want {
			if _, ok := acked.Load(id); !ok {
				return false
			}
		}
		return true
	})
	t.Logf("%d requests in flight at the kill; %d requests in all for %d events", inFlight, len(r.requests()), n)
	if got := len(r.requests()); got < n+inFlight {
		t.Errorf("requests = %d, want every event after the restart (%d) plus the %d cut off", got, n, inFlight)
	}
	for _, req := range r.requests() {
		if req.Verified != nil {
			t.Errorf("request for %s: Verify = %v", req.ID, req.Verified)
		}
	}
	ctx := context.Background()
	waitFor(t, 10*time.Second, func() bool {
		for _, id := range want {
			as, err := e.store.ListDeliveryAttempts(ctx, id)
			if err != nil || len(as) == 0 || as[len(as)-1].Outcome != delivery.OutcomeSucceeded {
				return false
			}
		}
		return true
	})
	// No event was sent under another id and none is left pending.
	if next, ok, err := e.store.NextDeliveryDue(ctx); err != nil || ok {
		t.Errorf("NextDeliveryDue = %v, %v, %v; want nothing pending", next, ok, err)
	}
	for _, req := range r.requests() {
		found := false
		for _, id := range want {
			found = found || id == req.ID
		}
		if !found {
			t.Errorf("unexpected webhook-id %q", req.ID)
		}
	}
}
