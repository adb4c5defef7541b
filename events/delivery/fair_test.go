package delivery_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

// TestStalledAccountDoesNotDelayAnother: account A fills its 16 endpoints with a backlog
// to a receiver that never answers; account B's events, to a fast receiver, still go out
// at once, because A holds at most PerAccount of the worker's slots. The case without the
// per-account cap (PerAccount as large as Concurrency, the worker before it) shows what
// it prevents: B waits until A's stalled attempts end, here when the test lets them go
// after 2 s, in production at delivery.Timeout (15 s; 14.5 s measured); later B events go
// out once A's backlog drains.
func TestStalledAccountDoesNotDelayAnother(t *testing.T) {
	tests := []struct {
		name       string
		perAccount int // 0: the default, half of Concurrency
		releaseA   time.Duration
		wantMax    time.Duration // B's slowest delivery
		wantFirst  time.Duration // B's first delivery takes at least this long
	}{
		{name: "per-account cap (default)", wantMax: 500 * time.Millisecond},
		{name: "no per-account cap (before)", perAccount: 16, releaseA: 2 * time.Second, wantFirst: time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "")
			e.worker.Now, e.worker.Deliverer.Now, e.endpoints.Now = nil, nil, nil
			e.worker.PerAccount = tc.perAccount
			e.clock = &clock{t: time.Now()}
			release := make(chan struct{})
			released := false
			letGo := func() {
				if !released {
					released = true
					close(release)
				}
			}
			defer letGo()
			stalled, fast := newReceiver(t, e.clock), newReceiver(t, e.clock)
			stalled.setRespond(func(int, http.ResponseWriter) { <-release })
			for range webhookendpoint.MaxPerAccount {
				e.endpoint(t, stalled)
			}
			accountB := ident.New("acct")
			urlB := fast.URL()
			if _, err := e.endpoints.Create(context.Background(), accountB, webhookendpoint.Input{URL: &urlB}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- e.worker.Run(ctx) }()
			defer func() { letGo(); cancel(); <-done }()

			for i := range 20 { // 320 deliveries to A's stalled endpoints
				e.emit(t, callevent.TypeCallEnded, callEnded("call_a"+strconv.Itoa(i)))
			}
			e.worker.Notify()
			waitFor(t, 5*time.Second, func() bool { return len(stalled.requests()) >= 8 })
			if tc.releaseA > 0 {
				time.AfterFunc(tc.releaseA, letGo)
			}

			var lat []time.Duration
			for i := range 5 {
				raw, _ := json.Marshal(callEnded("call_b" + strconv.Itoa(i)))
				start := time.Now()
				emitTo(t, e.store, callevent.Event{ID: ident.New("evt"), AccountID: accountB, Type: callevent.TypeCallEnded,
					CreatedAt: start.UTC().Truncate(time.Millisecond), Data: raw})
				e.worker.Notify()
				waitFor(t, 20*time.Second, func() bool { return len(fast.requests()) == i+1 })
				lat = append(lat, time.Since(start))
			}
			first := lat[0]
			slices.Sort(lat)
			t.Logf("B's delivery latency while A's endpoints hang: first %v, min %v, median %v, max %v (A's requests received: %d)",
				first.Round(time.Millisecond), lat[0].Round(time.Millisecond), lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond),
				len(stalled.requests()))
			if tc.wantMax > 0 && lat[len(lat)-1] > tc.wantMax {
				t.Errorf("B's slowest delivery took %v, want under %v", lat[len(lat)-1], tc.wantMax)
			}
			if first < tc.wantFirst {
				t.Errorf("B's first delivery took %v, want over %v (the case no longer shows the problem)", first, tc.wantFirst)
			}
		})
	}
}
