package dynamo_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/store/dynamo"
	"github.com/bridgeline/bridgeline/shared/store/dynamo/dynamolocal"
)

// TestRateLimiterAcrossInstances: four "Lambda instances" (each its own store client on
// the same tables) take from one account's limit at once; exactly the burst passes in a
// window, another account is untouched, and the next window admits again.
func TestRateLimiterAcrossInstances(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	const rate, burst = 10, 10 // a window of 1 s admitting 10
	var instances []*dynamo.RateLimiter
	for range 4 {
		other, err := dynamo.Open(ctx, dynamo.Config{Tables: s.Tables(), Endpoint: dynamolocal.Endpoint(t), Region: "us-east-1"})
		if err != nil {
			t.Fatal(err)
		}
		instances = append(instances, &dynamo.RateLimiter{Store: other, Rate: rate, Burst: burst})
	}
	// A fixed instant inside one window, so the count does not depend on the clock.
	now := time.Now().Truncate(time.Second).Add(100 * time.Millisecond)
	take := func(bucket string, at time.Time, per int) (passed int64, waits []time.Duration) {
		var n atomic.Int64
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, l := range instances {
			for range per {
				wg.Go(func() {
					ok, wait, err := l.Take(ctx, bucket, at)
					if err != nil {
						t.Error(err)
						return
					}
					if ok {
						n.Add(1)
						return
					}
					mu.Lock()
					waits = append(waits, wait)
					mu.Unlock()
				})
			}
		}
		wg.Wait()
		return n.Load(), waits
	}
	passed, waits := take("acct_flood", now, 10) // 40 requests from 4 instances
	if passed != burst {
		t.Errorf("flooding account: %d of 40 passed across 4 instances, want %d", passed, burst)
	}
	for _, w := range waits {
		if w != 900*time.Millisecond {
			t.Errorf("refused with a wait of %v, want the 900 ms left in the window", w)
			break
		}
	}
	if passed, _ := take("acct_quiet", now, 1); passed != 4 {
		t.Errorf("another account: %d of 4 passed, want 4", passed)
	}
	if passed, _ := take("acct_flood", now.Add(time.Second), 10); passed != burst {
		t.Errorf("next window: %d of 40 passed, want %d", passed, burst)
	}
	off := &dynamo.RateLimiter{Store: s, Rate: 0}
	if ok, _, err := off.Take(ctx, "acct_flood", now); !ok || err != nil {
		t.Errorf("rate 0: Take = %v, %v; want allowed", ok, err)
	}
}
