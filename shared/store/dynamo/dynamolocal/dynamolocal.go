// Package dynamolocal runs DynamoDB Local (AWS's emulator jar) for tests and the local
// stack. The jar is installed by scripts/dynamodb-local.sh; Start runs it with Java on a
// free port of 127.0.0.1 and Stop ends it.
//
// Tests use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(dynamolocal.Main(m)) }
//
// and each test asks for the endpoint with dynamolocal.Endpoint(t). When DYNAMODB_ENDPOINT
// is set, that server is used and nothing is started.
package dynamolocal

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/freeport"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/store/dynamo"
)

// EnvEndpoint names the variable that points tests at an already running DynamoDB
// (DynamoDB Local started by hand or by `scripts/dynamodb-local.sh start`).
const EnvEndpoint = "DYNAMODB_ENDPOINT"

// Server is a DynamoDB Local process this package started.
type Server struct {
	URL  string
	cmd  *exec.Cmd
	dir  string
	done chan struct{}
	log  bytes.Buffer
}

// ErrNotInstalled says the jar is not installed and could not be installed.
var ErrNotInstalled = errors.New("dynamodb local is not installed (run: bash scripts/dynamodb-local.sh install)")

// Install runs scripts/dynamodb-local.sh install (a no-op once done) and returns the
// emulator folder holding DynamoDBLocal.jar.
func Install(ctx context.Context) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "dynamodb-local.sh"), "install")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%w: %v: %s", ErrNotInstalled, err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// Start installs the jar if needed and starts DynamoDB Local in memory on a free port
// of 127.0.0.1. It returns once the server answers HTTP.
func Start(ctx context.Context) (*Server, error) {
	emu, err := Install(ctx)
	if err != nil {
		return nil, err
	}
	launcher := filepath.Join(emu, "..", "..", "launcher")
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "dynamodb-local-")
	if err != nil {
		return nil, err
	}
	s := &Server{URL: "http://127.0.0.1:" + strconv.Itoa(port), dir: work, done: make(chan struct{})}
	cp := strings.Join([]string{launcher, filepath.Join(emu, "DynamoDBLocal.jar"), filepath.Join(emu, "DynamoDBLocal_lib", "*")}, string(os.PathListSeparator))
	s.cmd = exec.Command("java", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Djava.library.path="+filepath.Join(emu, "DynamoDBLocal_lib"),
		"-cp", cp, "LoopbackRunner",
		"-inMemory", "-sharedDb", "-disableTelemetry", "-port", strconv.Itoa(port))
	// It writes a metadata file into its working folder: a temporary one.
	s.cmd.Dir = work
	s.cmd.Env = append(os.Environ(), "DDB_LOCAL_TELEMETRY=0")
	s.cmd.Stdout = &s.log
	s.cmd.Stderr = &s.log
	setParentDeathSignal(s.cmd)
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(work)
		return nil, fmt.Errorf("start dynamodb local: %w", err)
	}
	go func() {
		s.cmd.Wait()
		close(s.done)
	}()
	if err := s.waitReady(ctx, 60*time.Second); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// waitReady polls until the server answers HTTP, the process exits, or the timeout passes.
func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("dynamodb local exited during start: %s", s.log.String())
		case <-ctx.Done():
			return fmt.Errorf("dynamodb local not answering on %s: %w", s.URL, ctx.Err())
		case <-tick.C:
		}
	}
}

// Stop ends the process and removes its working folder.
func (s *Server) Stop() {
	if s.cmd.Process != nil {
		s.cmd.Process.Kill()
		<-s.done
	}
	os.RemoveAll(s.dir)
}

// freePort is below the ephemeral ports, which a client's connection may take first.
func freePort() (int, error) { return freeport.TCP("127.0.0.1") }

// repoRoot walks up from the working folder to the one holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "scripts", "dynamodb-local.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w: scripts/dynamodb-local.sh not found above the working folder", ErrNotInstalled)
		}
		dir = parent
	}
}

var (
	mainMu       sync.Mutex
	mainEndpoint string
	mainErr      error
)

// Main runs a test binary with DynamoDB Local: it uses $DYNAMODB_ENDPOINT when set, else
// starts the jar, runs the tests, and stops it. It returns the exit code for os.Exit.
// Failing to start is reported by Endpoint in each test that needs it, so tests that do
// not need DynamoDB still run. Under -short it starts nothing (Endpoint skips).
func Main(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		return m.Run()
	}
	if ep := os.Getenv(EnvEndpoint); ep != "" {
		mainEndpoint = ep
		return m.Run()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	s, err := Start(ctx)
	cancel()
	if err != nil {
		mainErr = err
		return m.Run()
	}
	defer s.Stop()
	mainEndpoint = s.URL
	return m.Run()
}

// Endpoint returns the DynamoDB endpoint that Main found or started. Without one, the
// test is skipped on a developer's machine and fails in CI (CI=true), where DynamoDB
// Local must run. Under -short (`make check`, which starts no server) it skips.
func Endpoint(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: needs DynamoDB Local")
	}
	mainMu.Lock()
	defer mainMu.Unlock()
	if mainEndpoint != "" {
		return mainEndpoint
	}
	why := "dynamolocal.Main was not called from TestMain"
	if mainErr != nil {
		why = mainErr.Error()
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("DynamoDB Local is required in CI: %s", why)
	}
	t.Skipf("no DynamoDB Local (set %s or install it with: bash scripts/dynamodb-local.sh install): %s", EnvEndpoint, why)
	return ""
}

// NewStore opens a dynamo.Store on fresh tables (a unique prefix per test) in the
// DynamoDB Local that Main found or started, and deletes them when the test ends.
func NewStore(t testing.TB) *dynamo.Store {
	t.Helper()
	endpoint := Endpoint(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prefix := strings.ToLower(ident.New("t")) + "-"
	s, err := dynamo.Open(ctx, dynamo.Config{Tables: dynamo.TablesWithPrefix(prefix), Endpoint: endpoint, Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.DeleteTables(ctx); err != nil {
			t.Errorf("DeleteTables: %v", err)
		}
	})
	return s
}
