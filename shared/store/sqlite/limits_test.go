package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
	"github.com/bridgeline/bridgeline/shared/store/storetest"
)

func TestSessionLimitConformance(t *testing.T) {
	storetest.RunSessionLimits(t, func(t *testing.T) storetest.SessionLimitStore {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "test.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// BenchmarkSessionFirstWrite: a create's first write with the slot count (CreateSession)
// beside the plain insert it replaced (SaveSession), with the account holding `held`
// slots (19: the last free one of the default 20), in one run:
//
//	go test -run '^$' -bench BenchmarkSessionFirstWrite ./shared/store/sqlite/
func BenchmarkSessionFirstWrite(b *testing.B) {
	for _, held := range []int{0, 19, 1000} {
		for _, counted := range []bool{false, true} {
			name := fmt.Sprintf("SaveSession/held=%d", held)
			if counted {
				name = fmt.Sprintf("CreateSession/held=%d", held)
			}
			b.Run(name, func(b *testing.B) {
				ctx := context.Background()
				s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				acct := ident.New("acct")
				pair := func() (session.Session, call.Call) {
					now := time.Now().UTC()
					ses := session.Session{ID: ident.New("ses"), AccountID: acct, Status: session.StatusRinging, CreatedAt: now, Slot: true}
					c := call.Call{ID: ident.New("call"), AccountID: acct, SessionID: ses.ID, Status: call.StatusRinging, StartedAt: now}
					ses.CallID = c.ID
					return ses, c
				}
				for range held {
					ses, c := pair()
					if err := s.CreateSession(ctx, ses, c, nil, 1<<30); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				for range b.N {
					ses, c := pair()
					if counted {
						err = s.CreateSession(ctx, ses, c, nil, 1<<30)
					} else {
						ses.Slot = false
						err = s.SaveSession(ctx, ses, c, nil)
					}
					if err != nil {
						b.Fatal(err)
					}
					// The account keeps holding `held` slots: the session goes again,
					// outside the measurement.
					b.StopTimer()
					if err := s.DiscardSession(ctx, ses.ID, c.ID); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
			})
		}
	}
}
