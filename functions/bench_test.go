package functions_test

// Benchmarks for `make bench`: each function's binary size, its cold start under the
// Runtime API (process start to first response, DynamoDB Local behind it) and a warm
// request on the same process, beside the same request served in-process by the local
// stack's handler (SQLite). Run: go test -run '^$' -bench . -benchtime 5x ./functions/

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/bridgeline/bridgeline/functions/internal/runtimeapi"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// benchRequests are the requests measured: a read, a write, a list, one with no store
// access, and the authorizer.
var benchRequests = []struct {
	fn, method, pattern, path, body string
}{
	{"assistants-get", http.MethodGet, "/v1/assistants/{id}", "/v1/assistants/{asst}", ""},
	{"assistants-create", http.MethodPost, "/v1/assistants", "/v1/assistants", `{"name":"Bench"}`},
	{"lines-list", http.MethodGet, "/v1/lines", "/v1/lines", ""},
	{"avatars-list", http.MethodGet, "/v1/avatars", "/v1/avatars", ""},
}

// BenchmarkBinarySize reports each function's bootstrap size, built as deployed
// (stripped, static) for this machine's architecture.
func BenchmarkBinarySize(b *testing.B) {
	for _, name := range functionNames(b) {
		b.Run(name, func(b *testing.B) {
			st, err := os.Stat(bootstrap(b, name))
			if err != nil {
				b.Fatal(err)
			}
			for range b.N {
			}
			b.ReportMetric(float64(st.Size())/(1<<20), "MiB")
		})
	}
}

// BenchmarkLambda measures, per function: ns/op is the cold start (exec to the first
// response), and warm-ms the next request on the same process.
func BenchmarkLambda(b *testing.B) {
	s := newStack(b)
	ctx := s.ctx
	acct, key, err := (&account.Service{Store: s.store, Now: time.Now}).Create(ctx, "Bench Co", false)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := (&line.Service{Store: s.store, Assistants: s.store, Now: time.Now}).Provision(ctx, acct.ID, "sim", "+15550108888", "Bench"); err != nil {
		b.Fatal(err)
	}
	a, err := (&assistant.Service{Store: s.store, Now: time.Now}).Create(ctx, acct.ID, assistant.Fields{Name: ptr("Bench")})
	if err != nil {
		b.Fatal(err)
	}
	auth := map[string]any{"account_id": acct.ID}
	for _, rq := range benchRequests {
		b.Run(rq.fn, func(b *testing.B) {
			rqe := request{fn: rq.fn, method: rq.method, pattern: rq.pattern, path: strings.ReplaceAll(rq.path, "{asst}", a.ID), body: rq.body, auth: auth}
			if rq.body != "" {
				rqe.headers = map[string]string{"Content-Type": "application/json"}
			}
			event := httpEvent(b, rqe)
			env := append(templateEnv(b, rq.fn, s.refs), awsEnv(s.dynamoURL, "")...)
			bin := bootstrap(b, rq.fn)
			var warm time.Duration
			b.ResetTimer()
			for range b.N {
				p, err := runtimeapi.Run(bin, rq.fn, env)
				if err != nil {
					b.Fatal(err)
				}
				r, err := p.Invoke(s.ctx, event)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				var resp events.APIGatewayV2HTTPResponse
				if err := json.Unmarshal(r.Payload, &resp); err != nil || resp.StatusCode >= 300 {
					b.Fatalf("%s: %s (%v)\n%s", rq.fn, r.Payload, err, p.Output())
				}
				start := time.Now()
				if _, err := p.Invoke(s.ctx, event); err != nil {
					b.Fatal(err)
				}
				warm += time.Since(start)
				p.Stop()
				b.StartTimer()
			}
			b.ReportMetric(float64(warm.Microseconds())/1000/float64(b.N), "warm-ms")
		})
	}
	b.Run("authorizer", func(b *testing.B) {
		ev := readJSON(b, "http-api-v2-authorizer.json")
		ev["identitySource"] = []any{"Bearer " + key}
		ev["headers"].(map[string]any)["authorization"] = "Bearer " + key
		event := mustJSON(b, ev)
		env := append(templateEnv(b, "authorizer", s.refs), awsEnv(s.dynamoURL, "")...)
		bin := bootstrap(b, "authorizer")
		b.ResetTimer()
		for range b.N {
			p, err := runtimeapi.Run(bin, "authorizer", env)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := p.Invoke(s.ctx, event); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			p.Stop()
			b.StartTimer()
		}
	})
}

// BenchmarkLocalStack serves the same requests through the local stack's handler
// (API-key auth, SQLite), in process.
func BenchmarkLocalStack(b *testing.B) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	acct, key, err := (&account.Service{Store: store, Now: time.Now}).Create(ctx, "Bench Co", false)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := (&line.Service{Store: store, Assistants: store, Now: time.Now}).Provision(ctx, acct.ID, "sim", "+15550108888", "Bench"); err != nil {
		b.Fatal(err)
	}
	assistants := &assistant.Service{Store: store, Now: time.Now}
	a, err := assistants.Create(ctx, acct.ID, assistant.Fields{Name: ptr("Bench")})
	if err != nil {
		b.Fatal(err)
	}
	api := &httpapi.API{Accounts: store, Assistants: assistants, Idempotency: store,
		Lines: &line.Service{Store: store, Assistants: store, Now: time.Now}, Now: time.Now,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	h := api.Handler()
	for _, rq := range benchRequests {
		b.Run(rq.fn, func(b *testing.B) {
			path := strings.ReplaceAll(rq.path, "{asst}", a.ID)
			for range b.N {
				r := httptest.NewRequest(rq.method, path, strings.NewReader(rq.body))
				r.Header.Set("Authorization", "Bearer "+key)
				if rq.body != "" {
					r.Header.Set("Content-Type", "application/json")
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code >= 300 {
					b.Fatalf("%s %s: %d %s", rq.method, path, w.Code, w.Body)
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
