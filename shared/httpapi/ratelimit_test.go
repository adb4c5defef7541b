package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/httpapi"
)

// TestRateLimitNeighbours is the load suite's figure "two accounts, one at 10x its rate
// limit, the other at 1 rps": the quiet account's 429 rate (goal 0) and p99 latency,
// over the real handler stack on SQLite behind a loopback HTTP server. The flooding
// account sends 10x its limit the whole time. -short runs 3 s instead of 10.
//
//	go test ./shared/httpapi/ -run TestRateLimitNeighbours -v
func TestRateLimitNeighbours(t *testing.T) {
	const rate, burst = 10.0, 20.0
	dur := 10 * time.Second
	if testing.Short() {
		dur = 3 * time.Second
	}
	e := newEnv(t, httpapi.NewLimiter(rate, burst))
	_, quietKey, err := (&account.Service{Store: e.store, Now: time.Now}).Create(context.Background(), "Quiet Co", false)
	if err != nil {
		t.Fatal(err)
	}
	get := func(key string) (int, time.Duration) {
		req, _ := http.NewRequest("GET", e.srv.URL+"/v1/lines", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		start := time.Now()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0, 0
		}
		res.Body.Close()
		return res.StatusCode, time.Since(start)
	}

	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var mu sync.Mutex
	flood := map[int]int{}
	var wg sync.WaitGroup
	// The flood: 10x the rate, each request on its own goroutine so a slow answer does
	// not slow the sender.
	wg.Go(func() {
		tick := time.NewTicker(time.Duration(float64(time.Second) / (10 * rate)))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				wg.Go(func() {
					code, _ := get(e.key)
					mu.Lock()
					flood[code]++
					mu.Unlock()
				})
			}
		}
	})
	var quiet []time.Duration
	quiet429 := 0
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-tick.C:
			code, d := get(quietKey)
			if code == http.StatusTooManyRequests {
				quiet429++
			} else if code != http.StatusOK {
				t.Errorf("quiet account: status %d", code)
			}
			quiet = append(quiet, d)
		}
	}
	wg.Wait()
	slices.Sort(quiet)
	p99 := quiet[min(len(quiet)-1, int(float64(len(quiet))*0.99))]
	total := flood[200] + flood[429]
	t.Logf("flooding account: %d requests at %.0f rps (10x its %.0f rps limit): %d answered 200, %d answered 429",
		total, 10*rate, rate, flood[200], flood[429])
	t.Logf("quiet account at 1 rps: %d requests, 429 rate %.1f%% (goal 0), p99 %v", len(quiet),
		100*float64(quiet429)/float64(len(quiet)), p99.Round(10*time.Microsecond))
	if quiet429 > 0 {
		t.Errorf("the quiet account got %d 429s beside the flood, want 0", quiet429)
	}
	// The flood passes at about its limit: burst plus rate a second (with a second of
	// slack for the ticker), and the rest is refused.
	if max := int(burst + rate*(dur.Seconds()+1)); flood[200] > max || flood[429] == 0 {
		t.Errorf("flooding account: %v, want at most %d 200s and some 429s", flood, max)
	}
	if len(flood) > 2 {
		t.Errorf("flooding account got statuses %v, want only 200 and 429", fmt.Sprint(flood))
	}
}
