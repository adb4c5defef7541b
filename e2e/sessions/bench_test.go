package sessions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/rtc/lkapi"
	"github.com/bridgeline/bridgeline/shared/session"
)

// BenchmarkSessionCreate drives POST /v1/sessions through the real HTTP stack (router,
// auth, validation, SQLite, LiveKit's CreateRoom over Twirp, two token mints, the sim's
// dial) and, interleaved in the same run, the floor it cannot avoid: a bare LiveKit
// CreateRoom plus one token mint. It reports both latencies' p50 and p99, sessions/s for
// one client, the ratios of the medians and of the p99s, and then sessions/s from
// concurrentClients clients creating at once (each with its own connection).
//
// A third measurement in the same loop is the round trip every API call pays: GET
// /v1/avatars, the cheapest authenticated request (the key's lookup, no other read). It
// is reported as hop-p50-ms and as a share of the bare figure, so the ratio can be read
// as "CreateRoom + the API's round trip + the create's own work". Before the loop it
// reads the CPU livekit-server spends on one room (livekit-cpu-ms/room): on a machine
// with few cores, the create's own work shares them with it.
//
// The dialled handle rings for the whole run, so no party joins and the figures are the
// control plane's, not the media bots'. Sessions and rooms are removed after the run.
//
//	go test -run '^$' -bench BenchmarkSessionCreate -benchtime 1000x ./e2e/sessions/
func BenchmarkSessionCreate(b *testing.B) {
	st := harness.Start(b, harness.Options{RingDelay: time.Hour, MaxConcurrentSessions: 10000})
	ctx := context.Background()
	body := map[string]any{"platform_handle": "+15557654321", "media": "video"}
	// Warm both paths (connections, SQLite pages) outside the measurement.
	for range 5 {
		st.Request(http.MethodPost, "/v1/sessions", body, st.APIKey)
		bareCreate(b, ctx, st.RTC)
	}
	// How much CPU livekit-server spends on one room (CreateRoom, then DeleteRoom), read
	// from /proc over cpuRooms bare creates before the measured loop.
	cpu0 := st.LiveKit.CPUTime()
	for range cpuRooms {
		bareCreate(b, ctx, st.RTC)
	}
	time.Sleep(100 * time.Millisecond) // the deleted rooms' closing work
	lkCPU := (st.LiveKit.CPUTime() - cpu0) / cpuRooms
	full := make([]time.Duration, 0, b.N)
	bare := make([]time.Duration, 0, b.N)
	hop := make([]time.Duration, 0, b.N)
	var fullTotal time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		status, raw, err := st.Request(http.MethodPost, "/v1/sessions", body, st.APIKey)
		d := time.Since(t0)
		if err != nil || status != http.StatusCreated {
			b.Fatalf("POST /v1/sessions = %d %s, %v", status, raw, err)
		}
		full = append(full, d)
		fullTotal += d
		bare = append(bare, bareCreate(b, ctx, st.RTC))
		t0 = time.Now()
		if status, raw, err := st.Request(http.MethodGet, "/v1/avatars", nil, st.APIKey); err != nil || status != http.StatusOK {
			b.Fatalf("GET /v1/avatars = %d %s, %v", status, raw, err)
		}
		hop = append(hop, time.Since(t0))
	}
	b.StopTimer()
	fp50, fp99 := percentile(full, 50), percentile(full, 99)
	bp50, bp99 := percentile(bare, 50), percentile(bare, 99)
	hp50 := percentile(hop, 50)
	b.ReportMetric(ms(fp50), "p50-ms")
	b.ReportMetric(ms(fp99), "p99-ms")
	b.ReportMetric(float64(len(full))/fullTotal.Seconds(), "sessions/s")
	b.ReportMetric(ms(bp50), "bare-p50-ms")
	b.ReportMetric(ms(bp99), "bare-p99-ms")
	b.ReportMetric(float64(fp50)/float64(bp50), "ratio-p50")
	b.ReportMetric(float64(fp99)/float64(bp99), "ratio-p99")
	b.ReportMetric(ms(hp50), "hop-p50-ms")
	b.ReportMetric(ms(lkCPU), "livekit-cpu-ms/room")
	b.ReportMetric(float64(hp50)/float64(bp50), "hop-share-of-bare")
	conc := concurrentCreates(b, st, body, max(b.N, 400))
	b.ReportMetric(conc, "concurrent-sessions/s")
	if testing.Verbose() || b.N >= 50 {
		fmt.Printf("POST /v1/sessions: p50 %.2f ms, p99 %.2f ms, %.0f sessions/s (one client); bare CreateRoom+token: p50 %.2f ms, p99 %.2f ms; ratio p50 %.2f, p99 %.2f (n=%d); API round trip (GET /v1/avatars) p50 %.2f ms = %.2f of bare; livekit-server CPU per room %.2f ms; %d clients: %.0f sessions/s\n",
			ms(fp50), ms(fp99), float64(len(full))/fullTotal.Seconds(), ms(bp50), ms(bp99), float64(fp50)/float64(bp50),
			float64(fp99)/float64(bp99), len(full), ms(hp50), float64(hp50)/float64(bp50), ms(lkCPU), concurrentClients, conc)
	}

	// Clean up: end every session (room deleted, dial hung up).
	q := listing.Query{Limit: listing.MaxLimit}
	for {
		page, err := st.Service.List(ctx, st.AccountID, session.ListQuery{Query: q})
		if err != nil {
			b.Fatal(err)
		}
		page, more := listing.Page(page, q.Limit)
		for _, s := range page {
			if _, err := st.Service.Delete(ctx, st.AccountID, s.ID); err != nil {
				b.Fatal(err)
			}
		}
		if !more {
			break
		}
		q.StartingAfter = page[len(page)-1].ID
	}
}

// BenchmarkAPIRoundTrip is the API's round trip on its own: GET /v1/avatars (the key's
// lookup, nothing else) through the same stack as BenchmarkSessionCreate, back to back
// and after a pause before each request, the way requests arrive at a server that is not
// saturated. It reports the p50 of each.
//
//	go test -run '^$' -bench BenchmarkAPIRoundTrip -benchtime 1000x ./e2e/sessions/
func BenchmarkAPIRoundTrip(b *testing.B) {
	st := harness.Start(b, harness.Options{})
	for _, pause := range []time.Duration{0, time.Millisecond} {
		b.Run(fmt.Sprintf("pause=%v", pause), func(b *testing.B) {
			ds := make([]time.Duration, 0, b.N)
			for range b.N {
				if pause > 0 {
					time.Sleep(pause)
				}
				t0 := time.Now()
				if status, raw, err := st.Request(http.MethodGet, "/v1/avatars", nil, st.APIKey); err != nil || status != http.StatusOK {
					b.Fatalf("GET /v1/avatars = %d %s, %v", status, raw, err)
				}
				ds = append(ds, time.Since(t0))
			}
			b.ReportMetric(ms(percentile(ds, 50)), "p50-ms")
		})
	}
}

// cpuRooms is how many bare rooms the benchmark makes to read livekit-server's CPU per room.
const cpuRooms = 200

// concurrentClients is how many clients concurrentCreates runs at once.
const concurrentClients = 8

// concurrentCreates has concurrentClients clients create n sessions between them, as fast
// as each gets its answers, and returns sessions created per second of wall time.
func concurrentCreates(b *testing.B, st *harness.Stack, body map[string]any, n int) float64 {
	raw, err := json.Marshal(body)
	if err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: concurrentClients, MaxConnsPerHost: concurrentClients}}
	defer client.CloseIdleConnections()
	post := func() error {
		req, err := http.NewRequest(http.MethodPost, st.URL+"/v1/sessions", bytes.NewReader(raw))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+st.APIKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("POST /v1/sessions = %d %s", resp.StatusCode, got)
		}
		return nil
	}
	var next atomic.Int64
	errs := make(chan error, concurrentClients)
	t0 := time.Now()
	var wg sync.WaitGroup
	for range concurrentClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				if err := post(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(t0)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return float64(n) / elapsed.Seconds()
}

// bareCreate is the floor: one CreateRoom and one participant token, then the room is
// deleted outside the measured part.
func bareCreate(b *testing.B, ctx context.Context, c *lkapi.Client) time.Duration {
	name := ident.New("ses")
	t0 := time.Now()
	if _, err := c.CreateRoom(ctx, rtc.RoomSpec{Name: name, EmptyTimeout: session.RoomEmptyTimeout,
		DepartureTimeout: session.RoomDepartureTimeout, MaxParticipants: session.RoomMaxParticipants}); err != nil {
		b.Fatal(err)
	}
	if _, err := c.ParticipantToken(rtc.Grant{Room: name, Identity: session.NewCustomerIdentity()}); err != nil {
		b.Fatal(err)
	}
	d := time.Since(t0)
	if err := c.DeleteRoom(ctx, name); err != nil {
		b.Fatal(err)
	}
	return d
}

func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
