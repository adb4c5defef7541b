package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

// BenchmarkClaimDueDeliveries: the local delivery worker's claim (ten times a second
// when idle) with 100 and 10,000 webhook endpoints across accounts and nothing due. It
// read every endpoint of every customer and asked each for its first due delivery; it
// now reads the due deliveries alone.
//
//	go test -run '^$' -bench BenchmarkClaimDueDeliveries -benchtime 200x ./shared/store/sqlite/
func BenchmarkClaimDueDeliveries(b *testing.B) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "claim.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	have := 0
	for _, n := range []int{100, 10000} {
		for ; have < n; have++ {
			now := time.Now().UTC()
			e := webhookendpoint.Endpoint{ID: ident.New("we"), AccountID: ident.New("acct"), URL: "https://example.com/hook",
				Status: webhookendpoint.StatusEnabled, Revision: 1, CreatedAt: now, UpdatedAt: now}
			if err := s.CreateWebhookEndpoint(ctx, e, webhookendpoint.MaxPerAccount); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("endpoints=%d", n), func(b *testing.B) {
			for b.Loop() {
				ds, err := s.ClaimDueDeliveries(ctx, time.Now(), delivery.ClaimLimits{Limit: 16, PerEndpoint: 4, PerAccount: 8})
				if err != nil || len(ds) != 0 {
					b.Fatalf("claim = %d, %v; want nothing due", len(ds), err)
				}
			}
		})
	}
}
