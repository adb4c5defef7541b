package bridgeline_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fencedBlocks returns the bodies of a Markdown page's blocks fenced as lang, in order.
func fencedBlocks(t *testing.T, page, lang string) []string {
	t.Helper()
	md, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(string(md)))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !in && strings.TrimSpace(line) == "```"+lang:
			in, cur = true, nil
		case in && strings.TrimSpace(line) == "```":
			in = false
			blocks = append(blocks, strings.Join(cur, "\n"))
		case in:
			cur = append(cur, line)
		}
	}
	return blocks
}

// codeLines is src's lines without their indentation, blank lines dropped, so that an
// excerpt compares with the function it comes from whatever their indentation.
func codeLines(src string) []string {
	var out []string
	for _, l := range strings.Split(src, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func contains(haystack, needle []string) bool {
	for i := 0; i+len(needle) <= len(haystack); i++ {
		if strings.Join(haystack[i:i+len(needle)], "\n") == strings.Join(needle, "\n") {
			return true
		}
	}
	return false
}

// TestREADMEShowsTheExamples: every Go block of the README is an excerpt of one of the
// Example functions, which run against a stack (cmd/bridgeline's TestGoSDKExamples), so
// the README shows code that compiles and works.
func TestREADMEShowsTheExamples(t *testing.T) {
	var examples [][]string
	for _, f := range []string{"example_test.go", "example_go123_test.go", "webhook/example_test.go", "webhook/example_receiver_test.go"} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		examples = append(examples, codeLines(string(src)))
	}
	blocks := fencedBlocks(t, "README.md", "go")
	if len(blocks) < 8 {
		t.Fatalf("README.md has %d Go blocks, want the 8 or more it shows", len(blocks))
	}
	for _, b := range blocks {
		found := false
		for _, ex := range examples {
			found = found || contains(ex, codeLines(b))
		}
		if !found {
			t.Errorf("this README block is in no example:\n%s", b)
		}
	}
}

// TestDependingWithAReplaceLine follows the README's "Depend on it" in an empty module:
// its commands make a module that builds and runs against this clone, and a type switch
// on webhook.Parse's result with a value case does not compile.
func TestDependingWithAReplaceLine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go mod tidy and go build in a new module")
	}
	var steps string
	for _, b := range fencedBlocks(t, "README.md", "sh") {
		if strings.Contains(b, "go mod edit") {
			steps = b
		}
	}
	if steps == "" {
		t.Fatal(`README.md has no sh block with "go mod edit"`)
	}
	clone, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	run := func(name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "BRIDGELINE="+clone, "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("go", "mod", "init", "example.com/app"); err != nil {
		t.Fatalf("go mod init: %v\n%s", err, out)
	}
	app := `package main

import (
	"fmt"
	"log"

	bridgeline "github.com/bridgeline/bridgeline/sdk/go"
	"github.com/bridgeline/bridgeline/sdk/go/webhook"
)

func main() {
	if _, err := bridgeline.New("http://127.0.0.1:8080", "sk_test_x", bridgeline.Options{}); err != nil {
		log.Fatal(err)
	}
	ev, err := webhook.Parse([]byte(` + "`" + `{"id":"evt_1","type":"call.ended","created_at":"2026-11-22T07:01:00.000Z","data":{"end_reason":"declined"}}` + "`" + `))
	if err != nil {
		log.Fatal(err)
	}
	switch ev := ev.(type) {
	case CASE:
		fmt.Println("ended:", ev.Data.EndReason)
	}
}
`
	write := func(c string) {
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(strings.Replace(app, "CASE", c, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("*bridgeline.CallEndedEvent")
	if out, err := run("bash", "-c", "set -euo pipefail\n"+steps); err != nil {
		t.Fatalf("the README's steps: %v\n%s", err, out)
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mod), "replace github.com/bridgeline/bridgeline/sdk/go => "+clone+"/sdk/go") {
		t.Errorf("go.mod after the README's steps:\n%s", mod)
	}
	if out, err := run("go", "run", "."); err != nil || strings.TrimSpace(out) != "ended: declined" {
		t.Fatalf("go run = %v\n%s", err, out)
	}
	write("bridgeline.CallEndedEvent")
	if out, err := run("go", "build", "."); err == nil || !strings.Contains(out, "impossible type switch case") {
		t.Errorf("a value case: go build = %v, want an impossible type switch case\n%s", err, out)
	}
}

// TestDocsVerifyWebhooksWithTheSDKs: the repository's customer docs show one way to
// verify a webhook, the SDKs' (webhook.Verify here, verifyWebhook in Node), never the
// service's own events/webhook, and each snippet is an excerpt of an SDK example that runs
// against a stack (Example_receiver here, receiver.ts in sdk/typescript's README).
func TestDocsVerifyWebhooksWithTheSDKs(t *testing.T) {
	root := filepath.Join("..", "..")
	src, err := os.ReadFile(filepath.Join("webhook", "example_receiver_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	goExample := codeLines(string(src))
	var tsExample []string
	for _, b := range fencedBlocks(t, filepath.Join(root, "sdk", "typescript", "README.md"), "ts") {
		if strings.HasPrefix(b, "// receiver.ts\n") {
			tsExample = codeLines(b)
		}
	}
	if tsExample == nil {
		t.Fatal("sdk/typescript/README.md has no receiver.ts")
	}
	for _, page := range []string{"README.md", "docs/webhooks.md", "docs/quickstart.md"} {
		path := filepath.Join(root, page)
		md, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, internal := range []string{"events/webhook", "webhook.Verifier"} {
			if strings.Contains(string(md), internal) {
				t.Errorf("%s shows %s: customers verify with the SDKs", page, internal)
			}
		}
		for _, b := range fencedBlocks(t, path, "go") {
			if strings.Contains(b, "webhook.Verify") && !contains(goExample, codeLines(b)) {
				t.Errorf("%s: this Go block is not an excerpt of webhook/example_receiver_test.go:\n%s", page, b)
			}
		}
		for _, b := range fencedBlocks(t, path, "ts") {
			if strings.Contains(b, "verifyWebhook") && !contains(tsExample, codeLines(b)) {
				t.Errorf("%s: this TypeScript block is not an excerpt of sdk/typescript's receiver.ts:\n%s", page, b)
			}
		}
	}
	path := filepath.Join(root, "docs", "webhooks.md")
	if !strings.Contains(strings.Join(fencedBlocks(t, path, "go"), "\n"), "webhook.Verify(") ||
		!strings.Contains(strings.Join(fencedBlocks(t, path, "ts"), "\n"), "verifyWebhook(") {
		t.Error("docs/webhooks.md does not show both webhook.Verify (Go) and verifyWebhook (Node)")
	}
}
