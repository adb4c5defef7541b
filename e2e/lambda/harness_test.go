package lambda_test

// The harness the function tests share: the functions' bootstraps built once for this
// machine (functions/functiontest finds them and their template.yaml resources), template.yaml parsed, DynamoDB Local (through a recording proxy that notes
// which table each request touches and with which IAM action), and moto's server for
// EventBridge and SQS.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/internal/runtimeapi"
	"github.com/bridgeline/bridgeline/functions/functiontest"
	"github.com/bridgeline/bridgeline/shared/store/dynamo/dynamolocal"
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

var buildDir string

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "bridgeline-functions-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	buildDir = dir
	return dynamolocal.Main(m)
}

var (
	buildOnce sync.Once
	buildErr  error
)

// bootstrap returns the path of the named function's bootstrap, built for this machine
// the way the deployable one is (static, -trimpath, lambda.norpc). All functions build
// in one `go build` the first time.
func bootstrap(t testing.TB, name string) string {
	t.Helper()
	buildOnce.Do(func() {
		var pkgs []string
		for _, n := range functiontest.Names(t) {
			pkgs = append(pkgs, "./functions/"+n)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		args := append([]string{"build", "-trimpath", "-tags=lambda.norpc", "-ldflags=-s -w", "-o", buildDir + "/"}, pkgs...)
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = functiontest.Root(t)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	bin := filepath.Join(buildDir, name)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no bootstrap for %s: %v", name, err)
	}
	return bin
}

// templateEnv returns a function's environment as template.yaml declares it, with
// !Ref of a resource resolved by refs (a table's or queue's name in this test) and
// Globals' variables included.
func templateEnv(t testing.TB, name string, refs map[string]string) []string {
	t.Helper()
	vars := map[string]any{}
	if g, ok := functiontest.Template(t).Globals["Function"].(map[string]any); ok {
		functiontest.EachIn(g, "Environment", "Variables", func(k string, v any) { vars[k] = v })
	}
	functiontest.EachIn(functiontest.Resource(t, name).Properties, "Environment", "Variables", func(k string, v any) { vars[k] = v })
	var env []string
	for k, v := range vars {
		switch v := v.(type) {
		case string:
			env = append(env, k+"="+v)
		case map[string]any:
			ref, _ := v["Ref"].(string)
			if val, ok := refs[ref]; ok {
				env = append(env, k+"="+val)
			} else if ref == "Stage" {
				env = append(env, k+"=test")
			} else if ref == "TtsVoices" {
				env = append(env, k+"="+testTTSVoices)
			} else if ref == "LlmModels" {
				env = append(env, k+"="+testLLMModels)
			} else if ref == "LlmVisionModels" {
				env = append(env, k+"="+testLLMVisionModels)
			} else if ref == "SttLanguages" {
				env = append(env, k+"=en")
			} else if ref == "AccountRateLimit" || ref == "AccountRateBurst" {
				// High enough that the scenario's bursts of calls pass: the limit is
				// counted (every function writes rate_limits) but not reached.
				env = append(env, k+"="+map[string]string{"AccountRateLimit": "1000", "AccountRateBurst": "2000"}[ref])
			} else {
				t.Fatalf("%s: environment %s = %v: the test has no value for it", name, k, v)
			}
		default:
			t.Fatalf("%s: environment %s = %v: unexpected", name, k, v)
		}
	}
	sort.Strings(env)
	return env
}

// testTTSVoices are the hosted voices the functions under test offer (the TtsVoices
// parameter).
const testTTSVoices = "alloy,nova"

// testLLMModels are the models the functions under test offer (the LlmModels parameter).
const testLLMModels = "llama3.1:8b,gpt-4o-mini"

// testLLMVisionModels are those of them that accept images (the LlmVisionModels
// parameter).
const testLLMVisionModels = "gpt-4o-mini"

// access is one table touched with one IAM action (dynamodb:PutItem, ...).
type access struct {
	Table  string // the table's logical id in template.yaml
	Action string
}

// recorder is a reverse proxy in front of DynamoDB Local that notes every table a
// request names, with the IAM action the request needs on it.
type recorder struct {
	URL     string
	mu      sync.Mutex
	seen    map[access]bool
	logical map[string]string // physical table name -> logical id
}

func newRecorder(t testing.TB, target string, logical map[string]string) *recorder {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{seen: map[access]bool{}, logical: logical}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rec.note(r.Header.Get("X-Amz-Target"), body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	rec.URL = srv.URL
	return rec
}

// note records the tables and actions of one DynamoDB JSON-protocol request.
func (rec *recorder) note(target string, body []byte) {
	op := strings.TrimPrefix(target, "DynamoDB_20120810.")
	var req struct {
		TableName     string
		RequestItems  map[string]json.RawMessage
		TransactItems []map[string]struct{ TableName string }
	}
	json.Unmarshal(body, &req)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	add := func(table, action string) {
		if l, ok := rec.logical[table]; ok {
			table = l
		}
		rec.seen[access{table, "dynamodb:" + action}] = true
	}
	switch op {
	case "TransactWriteItems", "TransactGetItems":
		for _, it := range req.TransactItems {
			for kind, v := range it {
				add(v.TableName, map[string]string{
					"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem",
					"ConditionCheck": "ConditionCheckItem", "Get": "GetItem",
				}[kind])
			}
		}
	case "BatchGetItem", "BatchWriteItem":
		for table := range req.RequestItems {
			add(table, op)
		}
	default:
		add(req.TableName, op)
	}
}

func (rec *recorder) accesses() map[access]bool {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := map[access]bool{}
	for a := range rec.seen {
		out[a] = true
	}
	return out
}

// awsEnv is what every function process gets besides its template environment: fixed
// credentials and region, no metadata service, and the endpoints of this test. The test's
// webhook receivers listen on 127.0.0.1, which a deployed function refuses: the
// allowance is set here, explicitly, and never in template.yaml.
func awsEnv(dynamoURL, motoURL string) []string {
	env := []string{
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_SESSION_TOKEN=test",
		"AWS_EC2_METADATA_DISABLED=true", "WEBHOOK_ALLOW_LOOPBACK=1",
		"AWS_ENDPOINT_URL_DYNAMODB=" + dynamoURL,
	}
	if motoURL != "" {
		env = append(env, "AWS_ENDPOINT_URL_SQS="+motoURL, "AWS_ENDPOINT_URL_EVENTBRIDGE="+motoURL,
			"AWS_ENDPOINT_URL_SECRETS_MANAGER="+motoURL, "AWS_ENDPOINT_URL_KMS="+motoURL,
			"AWS_ENDPOINT_URL_S3="+motoURL, "S3_PATH_STYLE=true")
	}
	return env
}

// startFunction runs a function's bootstrap under the Runtime API with env.
func startFunction(t testing.TB, name string, env []string) *runtimeapi.Process {
	t.Helper()
	p, err := runtimeapi.Run(bootstrap(t, name), name, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

// readJSON reads a testdata event as a generic value, to be adjusted and marshalled.
func readJSON(t testing.TB, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}
