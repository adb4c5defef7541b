package stores_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/store/dynamo"
	"github.com/bridgeline/bridgeline/shared/store/dynamo/dynamolocal"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// sweepStore is what the sweep benchmark needs of a store.
type sweepStore interface {
	session.Stores
	session.SweepIndex
}

// meteredStore counts the sessions the sweep index hands out.
type meteredStore struct {
	sweepStore
	mu   sync.Mutex
	read int
}

func (m *meteredStore) DueSessions(ctx context.Context, now time.Time, after session.DueKey, limit int) ([]session.Session, error) {
	got, err := m.sweepStore.DueSessions(ctx, now, after, limit)
	m.mu.Lock()
	m.read += len(got)
	m.mu.Unlock()
	return got, err
}

func (m *meteredStore) take() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.read
	m.read = 0
	return n
}

// ddbMeter counts DynamoDB requests and the capacity units they consumed (each request
// asks for ReturnConsumedCapacity INDEXES).
type ddbMeter struct {
	mu        sync.Mutex
	requests  int
	read, wrt float64
	// parts are the units by table and index ("calls", "calls/by_account"), reads and
	// writes together.
	parts map[string]float64
}

// note adds cc's units by table and index; m.mu held.
func (m *ddbMeter) note(cc types.ConsumedCapacity) {
	if m.parts == nil {
		m.parts = map[string]float64{}
	}
	table := aws.ToString(cc.TableName)
	if i := strings.Index(table, "-"); i >= 0 {
		table = table[i+1:] // the test's prefix
	}
	if cc.Table != nil {
		m.parts[table] += aws.ToFloat64(cc.Table.CapacityUnits)
	}
	for ix, c := range cc.GlobalSecondaryIndexes {
		m.parts[table+"/"+ix] += aws.ToFloat64(c.CapacityUnits)
	}
}

// takeParts returns the units by table and index since the last call, and forgets them.
func (m *ddbMeter) takeParts() map[string]float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.parts
	m.parts = nil
	return p
}

func (m *ddbMeter) add(ccs ...*types.ConsumedCapacity) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests++
	for _, cc := range ccs {
		if cc == nil {
			continue
		}
		m.note(*cc)
		m.read += aws.ToFloat64(cc.ReadCapacityUnits)
		m.wrt += aws.ToFloat64(cc.WriteCapacityUnits)
		if cc.ReadCapacityUnits == nil && cc.WriteCapacityUnits == nil {
			// DynamoDB reports only the total for some operations: a read or a write by
			// the operation's kind (counted by the caller's switch).
			m.read += aws.ToFloat64(cc.CapacityUnits)
		}
	}
}

func (m *ddbMeter) take() (requests int, read, write float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	requests, read, write = m.requests, m.read, m.wrt
	m.requests, m.read, m.wrt = 0, 0, 0
	return
}

// option asks every request for its consumed capacity, by table and index, and counts
// it.
func (m *ddbMeter) option(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("meter", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		total := types.ReturnConsumedCapacityIndexes
		switch p := in.Parameters.(type) {
		case *dynamodb.QueryInput:
			p.ReturnConsumedCapacity = total
		case *dynamodb.GetItemInput:
			p.ReturnConsumedCapacity = total
		case *dynamodb.TransactWriteItemsInput:
			p.ReturnConsumedCapacity = total
		case *dynamodb.UpdateItemInput:
			p.ReturnConsumedCapacity = total
		case *dynamodb.PutItemInput:
			p.ReturnConsumedCapacity = total
		}
		out, md, err := next.HandleInitialize(ctx, in)
		switch r := out.Result.(type) {
		case *dynamodb.QueryOutput:
			m.add(r.ConsumedCapacity)
		case *dynamodb.GetItemOutput:
			m.add(r.ConsumedCapacity)
		case *dynamodb.TransactWriteItemsOutput:
			m.addWrites(r.ConsumedCapacity)
		case *dynamodb.UpdateItemOutput:
			m.addWrites([]types.ConsumedCapacity{deref(r.ConsumedCapacity)})
		case *dynamodb.PutItemOutput:
			m.addWrites([]types.ConsumedCapacity{deref(r.ConsumedCapacity)})
		default:
			m.add()
		}
		return out, md, err
	}), middleware.After)
}

func deref(cc *types.ConsumedCapacity) types.ConsumedCapacity {
	if cc == nil {
		return types.ConsumedCapacity{}
	}
	return *cc
}

// addWrites counts one write request whose capacity is write capacity.
func (m *ddbMeter) addWrites(ccs []types.ConsumedCapacity) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests++
	for _, cc := range ccs {
		m.note(cc)
		m.wrt += aws.ToFloat64(cc.CapacityUnits)
	}
}

// meteredDynamo is a dynamo.Store on fresh tables in DynamoDB Local whose client counts
// its requests and their capacity.
func meteredDynamo(b *testing.B) (*dynamo.Store, *ddbMeter) {
	fresh := dynamolocal.NewStore(b) // makes the tables and deletes them at the end
	m := &ddbMeter{}
	client := dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(dynamolocal.Endpoint(b)),
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		APIOptions:   []func(*middleware.Stack) error{m.option},
	})
	return dynamo.New(client, fresh.Tables()), m
}

// doneRooms is a LiveKit whose rooms are gone when deleted: the benchmark measures the
// store, and LiveKit's DeleteRoom is a constant per session ended, not per session live.
type doneRooms struct{ session.NoRooms }

func (doneRooms) DeleteRoom(context.Context, string) error { return nil }

// BenchmarkSweep: one sweeper tick with 100, 1,000 and 10,000 live sessions (active, due
// at their maximum duration an hour on), on SQLite and on DynamoDB Local: with nothing
// due (idle), and with 10 ringing sessions past their ring timeout, which the tick ends
// (ten-due); beside the read of before (read-all-before): every live session, what the
// sweep read each tick before this index. It reports each tick's time, the sessions it
// read, and on DynamoDB its requests and consumed capacity units.
//
//	go test -run '^$' -bench BenchmarkSweep -benchtime 10x -timeout 30m ./e2e/stores/
func BenchmarkSweep(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) (sweepStore, *ddbMeter)
	}{
		{"sqlite", func(b *testing.B) (sweepStore, *ddbMeter) {
			s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "sweep.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s, nil
		}},
		{"dynamodb", func(b *testing.B) (sweepStore, *ddbMeter) { return meteredDynamo(b) }},
	}
	const duePerTick = 10
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			raw, meter := st.open(b)
			ms := &meteredStore{sweepStore: raw}
			svc, err := session.New(ms, doneRooms{}, session.WithLog(slog.New(slog.DiscardHandler)))
			if err != nil {
				b.Fatal(err)
			}
			set := svc.Settings()
			dueNow := func(ses *session.Session) {
				ses.CreatedAt = time.Now().Add(-set.RingTimeout - time.Second)
				due := ses.CreatedAt.Add(set.RingTimeout)
				ses.SweepAt = &due
			}
			// Warm up (DynamoDB Local's JIT): ticks that end sessions, not measured.
			for range 10 {
				fill(b, raw, duePerTick, dueNow)
				if _, err := svc.Sweep(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			ms.take()
			live := 0
			for _, n := range []int{100, 1000, 10000} {
				fill(b, raw, n-live, func(ses *session.Session) {
					due := ses.CreatedAt.Add(set.MaxDuration)
					ses.Status, ses.AnsweredAt, ses.SweepAt = session.StatusActive, &ses.CreatedAt, &due
				})
				live = n
				if meter != nil {
					meter.take()
				}
				b.Run(fmt.Sprintf("live=%d/idle", n), func(b *testing.B) {
					var ticks []time.Duration
					read, requests, rcu, wcu := 0, 0, 0.0, 0.0
					for range b.N {
						if meter != nil {
							meter.take()
						}
						start := time.Now()
						n, err := svc.Sweep(context.Background())
						ticks = append(ticks, time.Since(start))
						if err != nil || n != 0 {
							b.Fatalf("idle tick ended %d sessions, %v; want none", n, err)
						}
						read += ms.take()
						if meter != nil {
							q, r, w := meter.take()
							requests, rcu, wcu = requests+q, rcu+r, wcu+w
						}
					}
					report(b, ticks, float64(read), requests, rcu, wcu, meter != nil)
				})
				b.Run(fmt.Sprintf("live=%d/ten-due", n), func(b *testing.B) {
					var ticks []time.Duration
					read, ended, requests, rcu, wcu := 0, 0, 0, 0.0, 0.0
					for range b.N {
						b.StopTimer()
						fill(b, raw, duePerTick, dueNow)
						ms.take()
						if meter != nil {
							meter.take()
						}
						b.StartTimer()
						start := time.Now()
						n, err := svc.Sweep(context.Background())
						ticks = append(ticks, time.Since(start))
						if err != nil {
							b.Fatal(err)
						}
						b.StopTimer()
						read += ms.take()
						ended += n
						if meter != nil {
							q, r, w := meter.take()
							requests, rcu, wcu = requests+q, rcu+r, wcu+w
						}
						b.StartTimer()
					}
					if ended != duePerTick*b.N {
						b.Fatalf("the ticks ended %d sessions, want %d", ended, duePerTick*b.N)
					}
					report(b, ticks, float64(read), requests, rcu, wcu, meter != nil)
				})
				b.Run(fmt.Sprintf("live=%d/read-all-before", n), func(b *testing.B) {
					var ticks []time.Duration
					read, requests, rcu := 0, 0, 0.0
					end := time.Now().Add(100 * 365 * 24 * time.Hour)
					for range b.N {
						if meter != nil {
							meter.take()
						}
						start := time.Now()
						var after session.DueKey
						for {
							page, err := raw.DueSessions(context.Background(), end, after, 100)
							if err != nil {
								b.Fatal(err)
							}
							read += len(page)
							if len(page) < 100 {
								break
							}
							after, _ = page[len(page)-1].Due()
						}
						ticks = append(ticks, time.Since(start))
						if meter != nil {
							q, r, _ := meter.take()
							requests, rcu = requests+q, rcu+r
						}
					}
					if read < n*b.N {
						b.Fatalf("read %d sessions in %d ticks, want every live one (%d) each time", read, b.N, n)
					}
					report(b, ticks, float64(read), requests, rcu, 0, meter != nil)
				})
			}
		})
	}
}

// report adds the per-tick figures: p50 and p95 of the tick's time, sessions read, and
// on DynamoDB requests and capacity units.
func report(b *testing.B, ticks []time.Duration, read float64, requests int, rcu, wcu float64, dynamo bool) {
	sort.Slice(ticks, func(i, j int) bool { return ticks[i] < ticks[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	n := float64(b.N)
	b.ReportMetric(ms(ticks[len(ticks)/2]), "p50-ms/tick")
	b.ReportMetric(ms(ticks[min(len(ticks)-1, len(ticks)*95/100)]), "p95-ms/tick")
	b.ReportMetric(read/n, "read/tick")
	if dynamo {
		b.ReportMetric(float64(requests)/n, "requests/tick")
		b.ReportMetric(rcu/n, "RCU/tick")
		b.ReportMetric(wcu/n, "WCU/tick")
	}
}

// fill writes n new sessions (each with its call, as every session write does), made by
// shape from a ringing human session created now, from 8 writers at once.
func fill(b *testing.B, s sweepStore, n int, shape func(*session.Session)) {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				now := time.Now().UTC().Truncate(time.Millisecond)
				acct := ident.New("acct")
				ses := session.Session{ID: ident.New("ses"), AccountID: acct, Mode: session.ModeHuman, Media: "audio",
					PlatformHandle: "+15557654321", Status: session.StatusRinging, CreatedAt: now}
				shape(&ses)
				c := call.Call{ID: ident.New("call"), AccountID: acct, Direction: call.Outbound, Media: "audio",
					Status: call.StatusRinging, HandledBy: call.HandledByCustomer, SessionID: ses.ID, Platform: sim.Name,
					StartedAt: ses.CreatedAt}
				ses.CallID = c.ID
				if err := s.SaveSession(context.Background(), ses, c, nil); err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
			}
		}()
	}
	for i := range n {
		select {
		case work <- i:
		case err := <-errs:
			close(work)
			wg.Wait()
			b.Fatal(err)
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}
