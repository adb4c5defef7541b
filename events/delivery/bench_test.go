package delivery_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/events/webhook"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

// benchStack is the local delivery path on a real SQLite file and a loopback receiver
// that counts what it gets.
type benchStack struct {
	store    *sqlite.Store
	worker   *delivery.Worker
	eps      *webhookendpoint.Service
	account  string
	url      string
	secret   string
	received atomic.Int64
	arrived  chan struct{}
}

func newBenchStack(b *testing.B) *benchStack {
	b.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	s := &benchStack{store: st, account: ident.New("acct"), arrived: make(chan struct{}, 1<<16)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		s.received.Add(1)
		s.arrived <- struct{}{}
	}))
	b.Cleanup(srv.Close)
	s.url = srv.URL
	s.eps = &webhookendpoint.Service{Store: st, Destinations: egress.Policy{AllowLoopback: true}}
	ep, err := s.eps.Create(ctx, s.account, webhookendpoint.Input{URL: &s.url})
	if err != nil {
		b.Fatal(err)
	}
	s.secret = ep.Secret
	s.worker = &delivery.Worker{Outbox: st, Log: st, Subscribers: s.eps, Deliverer: &delivery.Deliverer{Endpoints: s.eps, Client: delivery.NewClient(egress.Policy{AllowLoopback: true})},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Poll: 100 * time.Millisecond}
	return s
}

func (s *benchStack) events(n int) []callevent.Event {
	now := time.Now().UTC()
	evts := make([]callevent.Event, n)
	for i := range evts {
		evts[i] = callevent.Event{ID: ident.New("evt"), AccountID: s.account, Type: callevent.TypeCallEnded, CreatedAt: now,
			Data: []byte(`{"call_id":"call_1","direction":"outbound","end_reason":"deleted","duration_ms":60000}`)}
	}
	return evts
}

func (s *benchStack) insert(b *testing.B, evts []callevent.Event) {
	ctx := context.Background()
	tx, err := s.store.DB().BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := sqlite.InsertEvents(ctx, tx, evts); err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

func (s *benchStack) run(b *testing.B) func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.worker.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
}

// BenchmarkEventToReceipt is the time from an event's commit into the outbox to its
// arrival at the customer's receiver, one event at a time. "direct" is the floor: a
// signed POST of the same body with no outbox in between.
func BenchmarkEventToReceipt(b *testing.B) {
	b.Run("outbox", func(b *testing.B) {
		s := newBenchStack(b)
		stop := s.run(b)
		defer stop()
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for range b.N {
			evt := s.events(1)
			start := time.Now()
			s.insert(b, evt)
			s.worker.Notify()
			<-s.arrived
			lat = append(lat, time.Since(start))
		}
		b.StopTimer()
		reportLatency(b, lat)
	})
	b.Run("direct", func(b *testing.B) {
		s := newBenchStack(b)
		client := delivery.NewClient(egress.Policy{AllowLoopback: true})
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for range b.N {
			evt := s.events(1)[0]
			start := time.Now()
			body, _ := delivery.Body(evt)
			req, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(body))
			webhook.SetHeaders(req.Header, []string{s.secret}, evt.ID, time.Now(), body)
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
			<-s.arrived
			lat = append(lat, time.Since(start))
		}
		b.StopTimer()
		reportLatency(b, lat)
	})
}

// BenchmarkDeliveryThroughput is deliveries per second from a full outbox (b.N events
// committed first) to a local receiver, with the worker's default concurrency of 8.
func BenchmarkDeliveryThroughput(b *testing.B) {
	s := newBenchStack(b)
	s.insert(b, s.events(b.N))
	b.ResetTimer()
	start := time.Now()
	stop := s.run(b)
	for range b.N {
		<-s.arrived
	}
	elapsed := time.Since(start)
	b.StopTimer()
	stop()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
}
