package main

// The SDKs as a customer meets them, against the local stack `make run` runs (this
// package's testStack: `bridgeline dev` with the sim lines +15550100001 and
// +15550100002, the webhook delivery worker, livekit-server): the Go SDK's examples,
// which its README shows (sdk/go's TestREADMEShowsTheExamples keeps the two equal), run
// with `go test` in sdk/go, its own module.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGoSDKExamples runs sdk/go's Example functions (packages bridgeline and webhook)
// against a fresh stack; each checks what it prints (// Output:).
func TestGoSDKExamples(t *testing.T) {
	s := newTestStack(t)
	s.start()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// -p 1: the two packages' examples share the account, one package at a time.
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-p", "1", "-v", "-run", "^Example", "./...")
	cmd.Dir = filepath.Join("..", "..", "sdk", "go")
	cmd.Env = append(os.Environ(), "BRIDGELINE_API_URL="+s.api, "BRIDGELINE_API_KEY="+s.key)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test -run ^Example ./... in sdk/go: %v\n%s", err, out)
	}
	// Every example ran: none was skipped for want of an API.
	for _, name := range []string{"Example", "ExampleClient_CreateSession", "ExampleClient_Assistants", "ExampleAPIError",
		"ExampleIter_All", "ExampleParse", "Example_receiver"} {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("%s did not run and pass:\n%s", name, out)
		}
	}
}
