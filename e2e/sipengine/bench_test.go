package sipengine_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/sipphone"
)

// BenchmarkSIPInboundCall: per call, the INVITE to the SIP participant joining the room
// (p50 and p95 over b.N calls), and livekit-sip's CPU (share of one core) and resident
// memory over 10 s of the call, beside the same 10 s with no call, in the same run (the
// bridge idle: the baseline).
//
//	go test -run '^$' -bench SIPInboundCall -benchtime 5x ./e2e/sipengine/
func BenchmarkSIPInboundCall(b *testing.B) {
	const hold = 10 * time.Second
	r := newRig(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(b.N+2)*time.Minute)
	defer cancel()
	r.room(ctx, b, "ses_bench")
	r.line(ctx, b, "ses_bench")
	w := r.watch(b, "ses_bench")
	r.bot(ctx, b, "ses_bench")
	phone := r.phone(ctx, b, sipphone.Config{Number: "+15559990001", Speak: r.tone, AuthUser: trunkUser, AuthPassword: trunkPass})
	sip := r.e.SIP

	cpu0 := sip.CPUTime()
	time.Sleep(hold)
	idleCPU, idleRSS := sip.CPUTime()-cpu0, sip.RSS()

	var joins []time.Duration
	var callCPU time.Duration
	var callRSS int64
	b.ResetTimer()
	for range b.N {
		w.mu.Lock()
		clear(w.kinds)
		clear(w.left)
		w.mu.Unlock()
		invite := time.Now()
		call, err := phone.Dial(ctx, "sip:"+lineNumber+"@"+sip.SIPAddr())
		if err != nil {
			b.Fatal(err)
		}
		id, joined := w.sipJoined(ctx, b)
		joins = append(joins, joined.Sub(invite))
		if _, err := call.Next(ctx, "CALL_ESTABLISHED"); err != nil {
			b.Fatal(err)
		}
		c0 := sip.CPUTime()
		time.Sleep(hold)
		callCPU += sip.CPUTime() - c0
		callRSS = max(callRSS, sip.RSS())
		if err := phone.Hangup(ctx); err != nil {
			b.Fatal(err)
		}
		w.until(ctx, b, "the SIP participant to leave", func() bool { return !w.left[id].IsZero() })
		if _, err := call.Closed(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	slices.Sort(joins)
	pct := func(p int) float64 { return float64(joins[(len(joins)-1)*p/100]) / float64(time.Millisecond) }
	share := func(cpu time.Duration, n int) float64 { return 100 * cpu.Seconds() / (hold.Seconds() * float64(n)) }
	b.ReportMetric(pct(50), "invite-joined-p50-ms")
	b.ReportMetric(pct(95), "invite-joined-p95-ms")
	b.ReportMetric(share(callCPU, b.N), "sip-cpu-%-in-call")
	b.ReportMetric(share(idleCPU, 1), "sip-cpu-%-idle")
	b.ReportMetric(float64(callRSS)/(1<<20), "sip-rss-MB-in-call")
	b.ReportMetric(float64(idleRSS)/(1<<20), "sip-rss-MB-idle")
	b.ReportMetric(0, "ns/op")
}
