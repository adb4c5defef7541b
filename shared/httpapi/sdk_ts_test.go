package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/webhook"
)

// TestTypeScriptSDKAgainstTheStack builds sdk/typescript with its pinned packages
// (scripts/install-sdk-typescript.sh) and runs its stack check (test/stack.ts) in Node
// against the real handler stack on SQLite: a create whose answer is lost is retried with
// the same Idempotency-Key and replayed, lists page, errors are typed, and verifyWebhook
// accepts exactly what events/webhook signs.
func TestTypeScriptSDKAgainstTheStack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the TypeScript SDK with npm packages")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", "../../scripts/install-sdk-typescript.sh").Output()
	if err != nil {
		t.Fatalf("install-sdk-typescript.sh: %v", err)
	}
	dest := strings.TrimSpace(string(out))
	// Build a copy inside the install folder, so that its imports resolve to the
	// node_modules there.
	work, err := os.MkdirTemp(dest, "stack-test.")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(work)
	if out, err := exec.CommandContext(ctx, "cp", "-r", "../../sdk/typescript/tsconfig.json", "../../sdk/typescript/src",
		"../../sdk/typescript/test", work).CombinedOutput(); err != nil {
		t.Fatalf("copy the SDK: %v\n%s", err, out)
	}
	build := filepath.Join(work, "build")
	tsc := exec.CommandContext(ctx, filepath.Join(dest, "node_modules", ".bin", "tsc"), "--project", filepath.Join(work, "tsconfig.json"),
		"--noEmit", "false", "--outDir", build)
	if out, err := tsc.CombinedOutput(); err != nil {
		t.Fatalf("tsc: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(build, "package.json"), []byte(`{"type":"module"}`), 0o644); err != nil {
		t.Fatal(err)
	}

	st := newStack(t, nil)
	srv := httptest.NewServer(st.handler)
	defer srv.Close()
	secret, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	body := `{"id":"evt_01jd3f4g5h6j7k8m9n0p1q2r3t","type":"call.ended","created_at":"2026-11-22T07:01:00.000Z",` +
		`"data":{"call_id":"call_01jd3f4g5h6j7k8m9n0p1q2r3t","direction":"inbound","from":"+15550100009","to":"+15550100001",` +
		`"media":"video","handled_by":"customer","started_at":"2026-11-22T07:00:00.000Z","answered_at":null,` +
		`"ended_at":"2026-11-22T07:01:00.000Z","duration_ms":0,"end_reason":"declined","ended_by":"customer"}}`
	h := http.Header{}
	if err := webhook.SetHeaders(h, []string{secret}, "evt_01jd3f4g5h6j7k8m9n0p1q2r3t", time.Now(), []byte(body)); err != nil {
		t.Fatal(err)
	}
	hdrs := map[string]string{}
	for k := range h {
		hdrs[strings.ToLower(k)] = h.Get(k)
	}
	hj, _ := json.Marshal(hdrs)

	node := exec.CommandContext(ctx, "node", filepath.Join(build, "test", "stack.js"))
	node.Env = append(os.Environ(), "BRIDGELINE_URL="+srv.URL, "BRIDGELINE_KEY="+st.key,
		"WEBHOOK_SECRET="+secret, "WEBHOOK_HEADERS="+string(hj), "WEBHOOK_BODY="+body)
	got, err := node.CombinedOutput()
	if err != nil || strings.TrimSpace(string(got)) != "ok" {
		t.Fatalf("node test/stack.js: %v\n%s", err, got)
	}
}
