package campaign_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/campaign"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// parties stands where session.Service.Create stands for the runner, with parties that
// answer at once and hang up after hold: it records each dialled call under the
// attempt's call id, as a create does, and ends it as the session's end does (the record
// written ended, then Service.CallEnded and the runner woken, as bridgeline dev wires
// them). What it measures is the scheduler's: the runner's ticks, claims, settles and
// SQLite writes; the sessions themselves are measured by BenchmarkSessionCreate.
type parties struct {
	st          *sqlite.Store
	svc         *campaign.Service
	runner      *campaign.Runner
	c           campaign.Campaign
	hold        time.Duration
	concurrency int
	wake        bool // wake the runner as a call ends (else its ticks alone find the slot)

	mu       sync.Mutex
	calls    sync.WaitGroup
	live     int
	dials    []time.Time
	freed    []time.Time     // slots freed while every slot was taken, not yet refilled
	slotWait []time.Duration // from such a slot freeing to the next dial
	err      error
}

func (p *parties) Create(ctx context.Context, _ account.Caller, req session.CreateRequest) (session.Created, error) {
	n, _ := strconv.Atoi(strings.TrimPrefix(req.PlatformHandle, "sim:r"))
	rc, err := p.st.GetRecipient(ctx, p.c.ID, campaign.RecipientID(p.c.ID, n))
	if err != nil {
		return session.Created{}, err
	}
	now := time.Now().UTC()
	cl := call.Call{ID: rc.Current().CallID, AccountID: p.c.AccountID, Direction: call.Outbound, LineID: p.c.LineID,
		To: req.PlatformHandle, Media: "audio", Status: call.StatusActive, StartedAt: now, AnsweredAt: &now, Platform: "sim",
		HandledBy: call.HandledByAssistant, CampaignID: p.c.ID, RecipientID: rc.ID}
	if err := p.st.SaveCall(ctx, cl, nil); err != nil {
		return session.Created{}, err
	}
	p.mu.Lock()
	p.live++
	p.dials = append(p.dials, now)
	if len(p.freed) > 0 {
		p.slotWait = append(p.slotWait, now.Sub(p.freed[0]))
		p.freed = p.freed[1:]
	}
	p.mu.Unlock()
	p.calls.Add(1)
	go func() {
		defer p.calls.Done()
		time.Sleep(p.hold)
		ended := time.Now().UTC()
		cl.Status, cl.EndedAt, cl.EndReason, cl.Revision = call.StatusEnded, &ended, call.ReasonRemoteHangup, 1
		if err := p.st.SaveCall(context.Background(), cl, nil); err != nil {
			p.fail(err)
			return
		}
		p.mu.Lock()
		if p.live == p.concurrency {
			p.freed = append(p.freed, ended)
		}
		p.live--
		p.mu.Unlock()
		p.svc.CallEnded(context.Background(), cl)
		if p.wake {
			p.runner.Wake()
		}
	}()
	return session.Created{}, nil
}

func (p *parties) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
}

func (p *parties) dialled() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.dials)
}

// BenchmarkCampaign runs campaigns on the local runner (ticks every 500 ms and as a call
// ends, as bridgeline dev runs it) over SQLite, to parties that answer at once and hang
// up after 1 s: 1,000 recipients with 20 calls at once (the rate, 10 calls a second at
// most, binds), and 300 with 5 at once (the slots bind), beside the same without the
// wake (the ticks alone find a free slot: the baseline). It reports the calls started a
// second, the process's CPU per call (the runner, the store, the parties), and from a
// slot freeing while all were taken to the next dial (p50, p95).
func BenchmarkCampaign(b *testing.B) {
	for _, tc := range []struct {
		recipients, concurrency int
		wake                    bool
	}{{1000, 20, true}, {300, 5, true}, {300, 5, false}} {
		b.Run(fmt.Sprintf("recipients=%d/concurrency=%d/wake=%t", tc.recipients, tc.concurrency, tc.wake), func(b *testing.B) {
			var rate, cpu float64
			var waits []time.Duration
			for range b.N {
				r, c, w := runCampaign(b, tc.recipients, tc.concurrency, tc.wake)
				rate, cpu, waits = rate+r, cpu+c, append(waits, w...)
			}
			b.ReportMetric(rate/float64(b.N), "calls/s")
			b.ReportMetric(cpu/float64(b.N), "cpu-ms/call")
			if len(waits) > 0 {
				slices.Sort(waits)
				b.ReportMetric(float64(waits[len(waits)/2].Microseconds())/1000, "slot-to-dial-p50-ms")
				b.ReportMetric(float64(waits[len(waits)*95/100].Microseconds())/1000, "slot-to-dial-p95-ms")
			}
		})
	}
}

func runCampaign(b *testing.B, recipients, concurrency int, wake bool) (rate, cpuPerCall float64, slotWait []time.Duration) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := sqlite.Open(ctx, b.TempDir()+"/bench.db")
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	acct, _, err := (&account.Service{Store: st, Now: time.Now}).Create(ctx, "Bench Co", false)
	if err != nil {
		b.Fatal(err)
	}
	c := campaign.Campaign{ID: ident.New(campaign.IDPrefix), AccountID: acct.ID, AssistantID: ident.New("asst"), VersionID: ident.New("ver"),
		LineID: ident.New("line"), Platform: "sim", Status: campaign.StatusRunning, Active: true, Recipients: recipients, Sequenced: true,
		CreatedAt: time.Now().UTC().Truncate(time.Millisecond),
		Settings: campaign.Settings{MaxConcurrentCalls: concurrency, CallsPerSecond: campaign.MaxCallsPerSecond,
			Retry: campaign.Retry{MaxAttempts: 1, On: []string{}}}}
	rs := make([]campaign.Recipient, recipients)
	for i := range rs {
		rs[i] = campaign.Recipient{ID: campaign.RecipientID(c.ID, i), CampaignID: c.ID, AccountID: acct.ID,
			PlatformHandle: fmt.Sprintf("sim:r%d", i), Status: campaign.RecipientPending}
	}
	if err := st.CreateCampaign(ctx, c, rs); err != nil {
		b.Fatal(err)
	}
	svc := &campaign.Service{Store: st, Lines: st, Assistants: st, Accounts: st, Calls: st}
	p := &parties{st: st, svc: svc, c: c, hold: time.Second, concurrency: concurrency, wake: wake}
	p.runner = &campaign.Runner{Service: svc, Dialer: p}

	cpu0 := cpuTime(b)
	start := time.Now()
	done := make(chan struct{})
	go func() { defer close(done); p.runner.Run(ctx, 500*time.Millisecond) }()
	for {
		got, err := st.GetCampaign(ctx, c.ID)
		if err != nil {
			b.Fatal(err)
		}
		if got.Status == campaign.StatusCompleted {
			break
		}
		if time.Since(start) > time.Duration(recipients)*time.Second {
			b.Fatalf("campaign still %s after %v: %d dials", got.Status, time.Since(start), p.dialled())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-done
	p.calls.Wait()
	cpu := cpuTime(b) - cpu0
	if p.err != nil {
		b.Fatal(p.err)
	}
	counts, err := svc.Counts(context.Background(), c)
	if err != nil || counts[campaign.RecipientAnswered] != recipients || len(p.dials) != recipients {
		b.Fatalf("%d dials, counts %v (%v); want each of %d recipients dialled once and answered", len(p.dials), counts, err, recipients)
	}
	span := p.dials[len(p.dials)-1].Sub(p.dials[0])
	return float64(recipients-1) / span.Seconds(), float64(cpu.Milliseconds()) / float64(recipients), p.slotWait
}

// cpuTime is the process's user and system CPU so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
