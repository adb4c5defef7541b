package main

// The SDKs as a customer meets them, against the local stack `make run` runs (this
// package's testStack: `bridgeline dev` with the sim lines +15550100001 and
// +15550100002, the webhook delivery worker, livekit-server): the Go SDK's examples,
// which its README shows (sdk/go's TestREADMEShowsTheExamples keeps the two equal), run
// with `go test` in sdk/go, its own module; the TypeScript SDK is packed with `npm pack`,
// installed from the tarball into an empty project, and the examples of the README it
// ships compiled with `tsc --strict` and run with node.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/livekitserver/livekittest"
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
	for _, name := range []string{"Example", "ExampleClient_CreateSession", "ExampleClient_CreateSession_webCall", "ExampleClient_Assistants", "ExampleAPIError",
		"ExampleIter_All", "ExampleParse", "Example_receiver"} {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("%s did not run and pass:\n%s", name, out)
		}
	}
}

// TestTypeScriptSDKPackage installs the TypeScript SDK as a customer does, by the recipe
// of its README ("Run these examples", run verbatim from an empty folder: npm init, the
// tarball `npm pack` makes, typescript and @types/node at the versions package.json pins,
// its tsconfig.json and `npx tsc`); compiles every example of the README it ships with it
// (the browser one with the DOM library and no Node types, the CommonJS one checked as
// JavaScript against the require declarations); and runs them against a fresh stack with
// this machine's node and with Node 18, the oldest the package supports, checking what
// they print against what the API holds.
func TestTypeScriptSDKPackage(t *testing.T) {
	s := newTestStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	root := filepath.Join("..", "..")
	out, err := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "install-sdk-typescript.sh"), "--pack").Output()
	if err != nil {
		t.Fatalf("install-sdk-typescript.sh --pack: %v", err)
	}
	tarball := strings.TrimSpace(string(out))
	var sdk struct {
		Version         string            `json:"version"`
		DevDependencies map[string]string `json:"devDependencies"`
	}
	raw, err := os.ReadFile(filepath.Join(root, "sdk", "typescript", "package.json"))
	if err == nil {
		err = json.Unmarshal(raw, &sdk)
	}
	if err != nil {
		t.Fatal(err)
	}

	// The project: the README's recipe (its "Run these examples" section), run verbatim
	// from an empty folder. The recipe is taken from this repository's README: the
	// installed one is read below and must be the same.
	recipe, err := os.ReadFile(filepath.Join(root, "sdk", "typescript", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	setup := readmeSection(string(recipe), "## Run these examples")
	shell := fencedBlocks(setup, "sh")
	conf := fencedBlocks(setup, "jsonc")
	if len(shell) != 2 || len(conf) != 1 || !strings.HasPrefix(conf[0], "// tsconfig.json\n") {
		t.Fatalf("the README's \"Run these examples\" wants two sh blocks (install, compile) and a tsconfig.json block, has:\n%s", setup)
	}
	// The versions it pins are the ones the package is built and checked with.
	for _, pin := range []string{"typescript@" + sdk.DevDependencies["typescript"], "@types/node@" + sdk.DevDependencies["@types/node"]} {
		if !strings.Contains(shell[0], " "+pin) {
			t.Errorf("the README's install pins no %s (package.json's devDependencies):\n%s", pin, shell[0])
		}
	}
	proj := t.TempDir()
	run := func(env []string, name string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = proj
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run([]string{"BRIDGELINE_SDK_TGZ=" + tarball}, "bash", "-euo", "pipefail", "-c", shell[0])
	writeFile(t, filepath.Join(proj, "tsconfig.json"), conf[0])
	installed := filepath.Join(proj, "node_modules", "@bridgeline", "sdk")
	var pkg struct {
		Version string `json:"version"`
	}
	if raw, err := os.ReadFile(filepath.Join(installed, "package.json")); err != nil || json.Unmarshal(raw, &pkg) != nil || pkg.Version != sdk.Version {
		t.Fatalf("installed @bridgeline/sdk: %v %s", err, raw)
	}
	// The package ships its build, not its sources.
	for _, f := range []string{"dist/esm/index.js", "dist/esm/index.d.ts", "dist/cjs/index.js", "dist/cjs/index.d.ts",
		"dist/cjs/package.json", "dist/esm/browser.js", "README.md"} {
		if _, err := os.Stat(filepath.Join(installed, f)); err != nil {
			t.Errorf("the package lacks %s", f)
		}
	}
	if _, err := os.Stat(filepath.Join(installed, "src")); err == nil {
		t.Error("the package ships src/")
	}

	// The examples, from the README the package ships: each ```ts or ```js block whose
	// first line names its file.
	readme, err := os.ReadFile(filepath.Join(installed, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(readme) != string(recipe) {
		t.Fatal("the packed README differs from sdk/typescript/README.md: pack again")
	}
	files := exampleFiles(string(readme))
	for _, f := range []string{"assistant.ts", "session.ts", "webcall.ts", "paging.ts", "endpoint.ts", "receiver.ts", "commonjs.cjs", "page.ts"} {
		if files[f] == "" {
			t.Fatalf("the README has no %s example (has %v)", f, keys(files))
		}
	}
	if files["tsconfig.json"] != "" {
		t.Fatal("the README's tsconfig.json is not an example")
	}
	for name, src := range files {
		writeFile(t, filepath.Join(proj, name), src)
	}
	// The README's compile step, verbatim, with its tsconfig.json: every Node example
	// (page.ts excluded) into out/.
	run(nil, "bash", "-euo", "pipefail", "-c", shell[1])
	// The CommonJS one runs as it is: checked as JavaScript against the require
	// declarations.
	run(nil, filepath.Join(proj, "node_modules", ".bin", "tsc"), "--noEmit", "--strict", "--allowJs", "--checkJs", "--target", "es2022",
		"--module", "nodenext", "--types", "node", "commonjs.cjs")
	writeFile(t, filepath.Join(proj, "tsconfig.browser.json"),
		`{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2022", "module": "nodenext", "lib": ["es2022", "dom"], "types": []}, "files": ["page.ts"]}`)
	run(nil, filepath.Join(proj, "node_modules", ".bin", "tsc"), "--project", "tsconfig.browser.json")

	// Run them against the stack, as the README says, with this machine's node and with
	// the oldest the package supports (engines.node).
	out, err = exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "install-sdk-typescript.sh"), "--oldest-node").Output()
	if err != nil {
		t.Fatalf("install-sdk-typescript.sh --oldest-node: %v", err)
	}
	node18 := strings.TrimSpace(string(out))
	if v := run(nil, node18, "--version"); !strings.HasPrefix(v, "v18.") {
		t.Fatalf("the oldest node is %s", v)
	}
	s.start()
	env := []string{"BRIDGELINE_API_URL=" + s.api, "BRIDGELINE_API_KEY=" + s.key}
	for _, node := range []string{"node", node18} {
		got := run(env, node, "out/assistant.js")
		if !strings.Contains(got, "Front desk: version 1 published and active\n") ||
			!strings.Contains(got, "line +15550100001: inbound_mode assistant, assistant Front desk\n") {
			t.Errorf("%s assistant.ts printed:\n%s", node, got)
		}
		line := lineByHandle(t, s, "+15550100001")
		if line["inbound_mode"] != "assistant" || line["assistant_id"] == nil {
			t.Errorf("after assistant.ts, line +15550100001 = %v, want inbound_mode assistant with an assistant", line)
		}
		asst := s.mustDo(200, "GET", "/v1/assistants/"+line["assistant_id"].(string), "")
		if asst["name"] != "Front desk" || asst["active_version_id"] == nil {
			t.Errorf("the assigned assistant = %v, want Front desk, published", asst)
		}

		got = run(env, node, "out/session.js")
		m := regexp.MustCompile(`session (ses_\w+) \(call (call_\w+)\): ended, deleted\n`).FindStringSubmatch(got)
		if m == nil || !strings.Contains(got, "session "+m[1]+" (call "+m[2]+"): active\n") {
			t.Fatalf("%s session.ts printed:\n%s", node, got)
		}
		if ses := s.mustDo(200, "GET", "/v1/sessions/"+m[1], ""); ses["status"] != "ended" || ses["end_reason"] != "deleted" {
			t.Errorf("the session session.ts ended = %v", ses)
		}

		got = run(env, node, "out/paging.js")
		var want []string
		for _, a := range s.mustDo(200, "GET", "/v1/assistants?limit=100", "")["data"].([]any) {
			a := a.(map[string]any)
			want = append(want, fmt.Sprintf("assistant %s %s", a["id"], a["name"]))
		}
		if len(want) < 1 || !strings.Contains(got, strings.Join(want, "\n")+"\n") {
			t.Errorf("%s paging.ts printed:\n%s\nwant every assistant, newest first:\n%s", node, got, strings.Join(want, "\n"))
		}
		if !strings.Contains(got, "404 resource_not_found on id\n") || !regexp.MustCompile(`404 resource_not_found on id \[req_\w+\]\n`).MatchString(got) {
			t.Errorf("%s paging.ts's errors printed:\n%s", node, got)
		}

		got = run(env, node, "out/webcall.js")
		wm := regexp.MustCompile(`web call (ses_\w+): ended, deleted\n`).FindStringSubmatch(got)
		if wm == nil || !strings.Contains(got, "web call "+wm[1]+": ringing, caller's token true, hosted page true\n") {
			t.Fatalf("%s webcall.ts printed:\n%s", node, got)
		}
		ses := s.mustDo(200, "GET", "/v1/sessions/"+wm[1], "")
		call := s.mustDo(200, "GET", "/v1/calls/"+ses["call_id"].(string), "")
		if ses["status"] != "ended" || ses["end_reason"] != "deleted" || call["platform"] != "web" || call["handled_by"] != "assistant" ||
			call["assistant_id"] != ses["assistant_id"] {
			t.Errorf("the web call webcall.ts made: session %v, call %v", ses, call)
		}

		got = run(env, node, "commonjs.cjs")
		if !strings.Contains(got, "line +15550100001: inbound_mode assistant\n") {
			t.Errorf("%s commonjs.cjs printed:\n%s", node, got)
		}
	}
	// In a browser, createBridgeline refuses the key.
	got := run(nil, "node", "--input-type=module", "-e", `globalThis.window = {}; globalThis.document = {};
const { createBridgeline } = await import("@bridgeline/sdk");
try { createBridgeline({ baseUrl: "https://api.example.com", apiKey: "sk_live_x" }); console.log("created"); } catch (e) { console.log(e.message); }`)
	if !strings.Contains(got, "runs on your server only") {
		t.Errorf("createBridgeline in a browser: %s", got)
	}

	// endpoint.ts registers receiver.ts, which verifies the call.ended of the session
	// session.ts ends.
	port := livekittest.FreePort(t, "tcp")
	got = run(append(env, fmt.Sprintf("RECEIVER_URL=http://127.0.0.1:%d/hooks", port)), "node", "out/endpoint.js")
	sm := regexp.MustCompile(`BRIDGELINE_WEBHOOK_SECRET=(whsec_\S+)`).FindStringSubmatch(got)
	if sm == nil {
		t.Fatalf("endpoint.ts printed:\n%s", got)
	}
	recv := exec.CommandContext(ctx, node18, "out/receiver.js")
	recv.Dir = proj
	recv.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port), "BRIDGELINE_WEBHOOK_SECRET="+sm[1])
	recvOut, err := recv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	recv.Stderr = recv.Stdout
	if err := recv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { recv.Process.Kill(); recv.Wait() }()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(recvOut)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	waitListening(t, port)
	got = run(env, "node", "out/session.js")
	m := regexp.MustCompile(`\(call (call_\w+)\): ended, deleted`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("session.ts printed:\n%s", got)
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("receiver.ts exited")
			}
			if l == "call.ended "+m[1]+": deleted" {
				return
			}
		case <-deadline:
			t.Fatalf("receiver.ts printed no verified call.ended for %s within 30 s", m[1])
		}
	}
}

// readmeSection is md's section under heading, up to the next heading of its level.
func readmeSection(md, heading string) string {
	_, rest, ok := strings.Cut(md, "\n"+heading+"\n")
	if !ok {
		return ""
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// fencedBlocks returns the contents of md's ```lang blocks, in order.
func fencedBlocks(md, lang string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+regexp.QuoteMeta(lang)+"\n(.*?)```").FindAllStringSubmatch(md, -1) {
		out = append(out, m[1])
	}
	return out
}

// exampleFiles returns the README's ```ts and ```js blocks by the file their first line
// names ("// receiver.ts").
func exampleFiles(md string) map[string]string {
	files := map[string]string{}
	re := regexp.MustCompile("(?s)```(?:ts|js)\n// ([\\w.-]+\\.(?:ts|cjs|mjs|js))\n(.*?)```")
	for _, m := range re.FindAllStringSubmatch(md, -1) {
		files[m[1]] = "// " + m[1] + "\n" + m[2]
	}
	return files
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func lineByHandle(t *testing.T, s *testStack, handle string) map[string]any {
	t.Helper()
	for _, l := range s.mustDo(200, "GET", "/v1/lines", "")["data"].([]any) {
		if l := l.(map[string]any); l["handle"] == handle {
			return l
		}
	}
	t.Fatalf("no line %s", handle)
	return nil
}

func waitListening(t *testing.T, port int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on 127.0.0.1:%d", port)
		}
	}
}
