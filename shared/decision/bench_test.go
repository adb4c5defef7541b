package decision_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/shared/decision"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

// BenchmarkRingToCallIncoming is the time from a ringing call being handed to the
// decision flow to call.incoming arriving at the customer's receiver (which answers
// accept), and the whole decision round trip. The sim's own ring-to-hand-over time is on
// top of this.
func BenchmarkRingToCallIncoming(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	arrived := make(chan time.Time, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- time.Now()
		io.Copy(io.Discard, r.Body)
		w.Write([]byte(`{"action":"accept"}`))
	}))
	defer srv.Close()
	eps := &webhookendpoint.Service{Store: st, Destinations: egress.Policy{AllowLoopback: true}}
	acct := ident.New("acct")
	if _, err := eps.Create(ctx, acct, webhookendpoint.Input{URL: &srv.URL}); err != nil {
		b.Fatal(err)
	}
	client := delivery.NewClient(egress.Policy{AllowLoopback: true})
	client.Timeout = 0
	a := &decision.Asker{Store: st, Events: st, Subscribers: eps, Deliverer: &delivery.Deliverer{Endpoints: eps, Client: client},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	toArrival := make([]time.Duration, 0, b.N)
	toDecision := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		in := decision.Incoming{AccountID: acct, CallID: ident.New("call"), LineID: "line_1", From: "sim:caller",
			To: "+15550100001", Media: "video", Timeout: 10 * time.Second}
		start := time.Now()
		r, err := a.Post(ctx, in, 0)
		if err != nil || r.Decision != decision.Accept {
			b.Fatalf("Post = %+v, %v", r, err)
		}
		toDecision = append(toDecision, time.Since(start))
		toArrival = append(toArrival, (<-arrived).Sub(start))
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	slices.Sort(toArrival)
	slices.Sort(toDecision)
	b.ReportMetric(ms(toArrival[len(toArrival)/2]), "arrival-p50-ms")
	b.ReportMetric(ms(toArrival[len(toArrival)*99/100]), "arrival-p99-ms")
	b.ReportMetric(ms(toDecision[len(toDecision)/2]), "decided-p50-ms")
	b.ReportMetric(ms(toDecision[len(toDecision)*99/100]), "decided-p99-ms")
}
