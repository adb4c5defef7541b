package eventtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/freeport"
)

// StartMoto runs moto's server mode (the AWS emulator: SQS, EventBridge, DynamoDB and
// its streams, Secrets Manager) on a free loopback port for the test's lifetime and
// returns its URL. Without moto_server the test is skipped, except in CI; under -short
// (`make check`, which starts no server) it is skipped too.
func StartMoto(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: needs moto_server")
	}
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("moto_server is required in CI")
		}
		t.Skip("moto_server not installed")
	}
	port, err := freeport.TCP("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_DEFAULT_REGION=us-east-1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	u := fmt.Sprintf("http://127.0.0.1:%d", port)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u+"/moto-api/", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			return u
		}
		select {
		case <-ctx.Done():
			t.Fatalf("moto_server did not start: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
