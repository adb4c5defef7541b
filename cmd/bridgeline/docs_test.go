package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/livekitserver/livekittest"
)

// TestDocs runs the customer docs as a reader would: every ```sh block of the page,
// top to bottom, in one bash with `set -euo pipefail`, against a fresh local stack
// (livekit-server, SQLite, the sim; a persona worker where the page talks with an
// assistant). The pages take the API from $API and the sample
// receiver's address from $HOOKS_ADDR (defaults 127.0.0.1:8080 and 127.0.0.1:9000); the
// test sets both to the ports it picked, as a reader on other ports would, so it runs
// beside a `make run`. A command that fails, or a
// check written in the page (`[ "$STATUS" = answered ]`, a grep), fails the test; the
// outputs each page promises are checked after. Before that, the page runs with a
// mistyped key, and must stop at its first request printing the API's api_key_invalid,
// and without KEY, and must stop before any request saying to set it.
func TestDocs(t *testing.T) {
	for _, tc := range []struct {
		page string
		// env is added to the stack's environment.
		env []string
		// want are lines the page's output must contain (regardless of order).
		want []string
	}{
		{"quickstart.md", []string{"PERSONA_WORKERS=1"}, []string{
			// Step 0 lists the dev lines, each answered by the stack's dev assistant.
			" +15550100002 assistant asst_",
			`"watch_only": false`,
			`"join_url": "http://127.0.0.1:`,
			`"end_reason": "deleted"`,
			// Step 2: the assistant answers the line and hears the caller's question.
			`"inbound_mode": "assistant",`,
			`"handled_by": "assistant",`,
			`"assistant: Hello, this is Ada at Acme. How can I help you today?",`,
			`"caller: `,
			`"assistant: I heard: `,
			// Step 5 puts the line in customer_decides and gives it back to the assistant.
			`"inbound_mode": "customer_decides"`,
			"is active",
			"verified call.ended",
			"verified call.incoming",
			"answering call_",
			`"decision": "accept"`,
			`"decision_source": "webhook_response"`,
			`"end_reason": "remote_hangup"`,
			// The endpoint goes with its receiver.
			`"object":"webhook_endpoint","deleted":true}`,
		}},
		{"webhooks.md", nil, []string{
			"verified call.ended",
			"verified call.incoming",
			`"decision_source": "api"`,
			`"decision_source": "webhook_response"`,
			`"code": "call_already_answered"`,
			`{"number":1,"variables":["caller_name","company"]}`,
			`{"handled_by":"assistant","decision":"assistant","variables":{"caller_name":"Ada","company":"Acme"}}`,
			`{"decision_source":"webhook_response","variables":{"caller_name":"Grace","company":"Acme"}}`,
			`"object":"webhook_endpoint","deleted":true}`,
		}},
	} {
		t.Run(tc.page, func(t *testing.T) {
			for _, tool := range []string{"bash", "curl", "jq"} {
				if _, err := exec.LookPath(tool); err != nil {
					t.Fatalf("the docs use %s: %v (scripts/install-media-deps.sh installs it)", tool, err)
				}
			}
			src, err := os.ReadFile(filepath.Join("..", "..", "docs", tc.page))
			if err != nil {
				t.Fatal(err)
			}
			blocks := shellBlocks(string(src))
			if len(blocks) == 0 {
				t.Fatalf("%s has no sh blocks", tc.page)
			}
			s := newTestStack(t)
			s.env = append(s.env, tc.env...)
			s.start()
			receiver := fmt.Sprintf("127.0.0.1:%d", livekittest.FreePort(t, "tcp"))
			script := strings.Join(blocks, "\n")
			env := []string{"API=" + s.api, "HOOKS_ADDR=" + receiver}
			// A mistyped key stops the page at its first request, with the API's own
			// error on screen: not an empty answer that later steps run on quietly.
			out, err := runDoc(script, mistype(s.key), env...)
			if err == nil || !keyInvalid.MatchString(out) || !strings.Contains(out, "error: 401") {
				t.Errorf("with a mistyped key the page ran to %v, want it stopped with the API's api_key_invalid:\n%s", err, out)
			}
			if n := strings.Count(out, "curl: (22)"); n != 1 {
				t.Errorf("with a mistyped key curl reported %d refused requests, want 1: the first, which stops the page", n)
			}
			// Without KEY the page says what to set before any request.
			if out, err := runDoc(script, "", env...); err == nil || !strings.Contains(out, "export KEY=sk_test_") || strings.Contains(out, "curl:") {
				t.Errorf("without KEY the page ran to %v, want it stopped before any request saying to export KEY:\n%s", err, out)
			}
			out = runDocScript(t, script, s.key, env...)
			// The page cleans up after itself: no endpoint left for events to fail at
			// once its receiver is gone.
			if eps := s.mustDo(200, "GET", "/v1/webhook_endpoints", "")["data"].([]any); len(eps) != 0 {
				t.Errorf("the page left %d webhook endpoints registered: %v", len(eps), eps)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q", w)
				}
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}

// keyInvalid is the API's error body for an unknown key, as jq prints it (either way).
var keyInvalid = regexp.MustCompile(`"code": ?"api_key_invalid"`)

// mistype is key with its last character changed: well formed, and no account's.
func mistype(key string) string {
	last := "a"
	if strings.HasSuffix(key, "a") {
		last = "b"
	}
	return key[:len(key)-1] + last
}

// runDocScript runs script as runDoc does and fails the test if it fails.
func runDocScript(t *testing.T, script, key string, env ...string) string {
	t.Helper()
	out, err := runDoc(script, key, env...)
	if err != nil {
		t.Fatalf("the page's shell blocks failed: %v\n%s", err, out)
	}
	return out
}

// runDoc runs script in bash (set -euo pipefail) at the repository root with KEY set
// (unset when key is ""), in its own process group (a page starts its receiver in the
// background), and kills the group when it ends. It returns stdout and stderr together.
func runDoc(script, key string, env ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -euo pipefail\n"+script)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = slices.DeleteFunc(os.Environ(), func(v string) bool { return strings.HasPrefix(v, "KEY=") })
	if key != "" {
		cmd.Env = append(cmd.Env, "KEY="+key)
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// Background jobs inherit the output pipe; once bash is done, stop waiting for them.
	cmd.WaitDelay = time.Second
	err := cmd.Wait()
	return out.String(), err
}

// shellBlocks returns the bodies of the ```sh fenced blocks of a Markdown page, in
// order. Other blocks (```console for what a reader types elsewhere, ```json, ```go)
// are shown, not run.
func shellBlocks(md string) []string {
	var blocks []string
	var cur []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(md))
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case !in && trimmed == "```sh":
			in, cur = true, nil
		case in && trimmed == "```":
			in = false
			blocks = append(blocks, strings.Join(cur, "\n"))
		case in:
			cur = append(cur, line)
		}
	}
	return blocks
}

func TestShellBlocks(t *testing.T) {
	md := "text\n```sh\necho one\necho two\n```\n```json\n{}\n```\n```console\n$ make run\n```\n  ```sh\n  echo three\n  ```\n"
	got := shellBlocks(md)
	want := []string{"echo one\necho two", "  echo three"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("shellBlocks = %q, want %q", got, want)
	}
}

// TestDocSnippetsTakeTheirAddresses: every shell snippet of the README and docs/ works on
// other ports as pasted: the API is $API (or BRIDGELINE_API_URL) and the sample
// receiver $HOOKS_ADDR, the default addresses appearing only as ${VAR:-default}; and a
// curl whose URL has brackets (created[gte]=...) passes -g, without which curl reads
// them as a range and fails.
func TestDocSnippetsTakeTheirAddresses(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join("..", "..", "README.md"))
	hardcoded := regexp.MustCompile(`127\.0\.0\.1:(8080|9000)|localhost:(8080|9000)`)
	defaulted := regexp.MustCompile(`\$\{[A-Z_]+:-[^}]*\}`)
	bracketURL := regexp.MustCompile(`curl [^\n]*\?[^ \n]*\[`)
	for _, page := range pages {
		src, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range shellBlocks(string(src)) {
			for _, line := range strings.Split(block, "\n") {
				if hardcoded.MatchString(defaulted.ReplaceAllString(line, "")) {
					t.Errorf("%s: a snippet hard-codes an address; use $API, $HOOKS_ADDR or ${VAR:-default}:\n  %s", filepath.Base(page), line)
				}
				if bracketURL.MatchString(line) && !strings.Contains(line, "curl -g") {
					t.Errorf("%s: a curl with brackets in its URL needs -g:\n  %s", filepath.Base(page), line)
				}
			}
		}
		// Prose names a command's URL too (`curl -s "$API/v1/calls?created[gte]=..."`).
		for _, m := range bracketURL.FindAllString(string(src), -1) {
			if !strings.Contains(m, "curl -g") {
				t.Errorf("%s: a curl with brackets in its URL needs -g: %s", filepath.Base(page), m)
			}
		}
	}
}
