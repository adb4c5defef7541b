package lambda_test

// Benchmarks for `make bench`: each function's binary size (built as deployed, for
// linux/arm64), its cold start under the Runtime API (process start to first response,
// DynamoDB Local behind it) and a warm request on the same process, beside the same
// request served in-process by the local stack's handler (SQLite). With
// BENCH_BASELINE_SRC set to the source tree of an earlier commit (`make bench-functions`
// unpacks one with git archive), that commit's functions are built and measured in the
// same run, beside the current ones. Run: go test -run '^$' -bench . -benchtime 5x ./e2e/lambda/

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/bridgeline/bridgeline/e2e/internal/runtimeapi"
	"github.com/bridgeline/bridgeline/functions/functiontest"
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
// (provided.al2023 on arm64, stripped, static), and the baseline's beside it.
func BenchmarkBinarySize(b *testing.B) {
	cur := buildAll(b, "current-arm64", functiontest.Root(b), "linux", "arm64")
	var base map[string]string
	if src := os.Getenv(baselineEnv); src != "" {
		base = buildAll(b, "baseline-arm64", src, "linux", "arm64")
	}
	for _, name := range functiontest.Names(b) {
		b.Run(name, func(b *testing.B) {
			size := func(bin string) float64 {
				st, err := os.Stat(bin)
				if err != nil {
					b.Fatal(err)
				}
				return float64(st.Size()) / 1e6
			}
			for range b.N {
			}
			b.ReportMetric(size(cur[name]), "MB")
			if bin, ok := base[name]; ok {
				b.ReportMetric(size(bin), "baseline-MB")
			}
		})
	}
}

// baselineEnv names the source tree of the commit to measure beside the current one.
const baselineEnv = "BENCH_BASELINE_SRC"

var builtSets sync.Map // set name -> map[function]bootstrap path

// buildAll builds every function of the source tree src (its functions/<name>/main.go)
// the way build.mk's LAMBDA_BUILD does, into a folder of the test's build directory, once
// per set.
func buildAll(b testing.TB, set, src, goos, goarch string) map[string]string {
	b.Helper()
	if m, ok := builtSets.Load(set); ok {
		return m.(map[string]string)
	}
	mains, err := filepath.Glob(filepath.Join(src, "functions", "*", "main.go"))
	if err != nil || len(mains) == 0 {
		b.Fatalf("no functions under %s: %v", src, err)
	}
	out := filepath.Join(buildDir, set)
	bins := map[string]string{}
	var pkgs []string
	for _, m := range mains {
		name := filepath.Base(filepath.Dir(m))
		pkgs = append(pkgs, "./functions/"+name)
		bins[name] = filepath.Join(out, name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	args := append([]string{"build", "-trimpath", "-tags=lambda.norpc", "-ldflags=-s -w", "-o", out + "/"}, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	if o, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build the functions of %s (%s/%s): %v\n%s", src, goos, goarch, err, o)
	}
	builtSets.Store(set, bins)
	return bins
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
			for _, set := range lambdaSets(b) {
				bin, ok := set.bins[rq.fn]
				if !ok {
					continue
				}
				b.Run(set.name, func(b *testing.B) { coldStart(b, s, rq.fn, bin, env, event) })
			}
		})
	}
	b.Run("authorizer", func(b *testing.B) {
		ev := readJSON(b, "http-api-v2-authorizer.json")
		ev["identitySource"] = []any{"Bearer " + key}
		ev["headers"].(map[string]any)["authorization"] = "Bearer " + key
		event := mustJSON(b, ev)
		env := append(templateEnv(b, "authorizer", s.refs), awsEnv(s.dynamoURL, "")...)
		for _, set := range lambdaSets(b) {
			b.Run(set.name, func(b *testing.B) { coldStart(b, s, "authorizer", set.bins["authorizer"], env, event) })
		}
	})
}

// bootstrapSet is one build of the functions: their bootstraps by name.
type bootstrapSet struct {
	name string
	bins map[string]string
}

// lambdaSets are the bootstraps measured: the current ones (built for this machine), and
// the baseline's when BENCH_BASELINE_SRC is set.
func lambdaSets(b *testing.B) []bootstrapSet {
	b.Helper()
	cur := map[string]string{}
	for _, name := range functiontest.Names(b) {
		cur[name] = bootstrap(b, name)
	}
	sets := []bootstrapSet{{"current", cur}}
	if src := os.Getenv(baselineEnv); src != "" {
		sets = append(sets, bootstrapSet{"baseline", buildAll(b, "baseline-host", src, runtime.GOOS, runtime.GOARCH)})
	}
	return sets
}

// coldStart measures a function's cold start (ns/op: exec to the first response) and the
// next request on the same process (warm-ms).
func coldStart(b *testing.B, s *stack, fn, bin string, env []string, event []byte) {
	var warm time.Duration
	b.ResetTimer()
	for range b.N {
		p, err := runtimeapi.Run(bin, fn, env)
		if err != nil {
			b.Fatal(err)
		}
		r, err := p.Invoke(s.ctx, event)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if fn != "authorizer" {
			var resp events.APIGatewayV2HTTPResponse
			if err := json.Unmarshal(r.Payload, &resp); err != nil || resp.StatusCode >= 300 {
				b.Fatalf("%s: %s (%v)\n%s", fn, r.Payload, err, p.Output())
			}
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
	api, err := httpapi.New(store, store, slices.Concat((&httpapi.Assistants{Service: assistants}).Routes(),
		(&httpapi.Lines{Service: &line.Service{Store: store, Assistants: store, Now: time.Now}}).Routes()),
		httpapi.WithLog(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		b.Fatal(err)
	}
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
