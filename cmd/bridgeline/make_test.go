package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestMakeTargetsInstallWhatTheyNeed: `make run` installs what the SQLite stack runs and
// nothing only tests or another store use (DynamoDB Local, the Chromium and the Firefox
// the browser tests drive); `make run-dynamodb` adds DynamoDB Local; `make test`
// installs everything. Read from `make -n`, which prints each target's commands without
// running them.
func TestMakeTargetsInstallWhatTheyNeed(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	plan := func(target string) string {
		t.Helper()
		out, err := exec.Command("make", "-n", "-C", "../..", target).CombinedOutput()
		if err != nil {
			t.Fatalf("make -n %s: %v\n%s", target, err, out)
		}
		return string(out)
	}
	run, dynamo, test := plan("run"), plan("run-dynamodb"), plan("test")
	for _, want := range []string{"build-livekit-server.sh", "install-speech-models.sh", "install-browser.sh --page", "build-join-page.sh"} {
		for name, p := range map[string]string{"run": run, "run-dynamodb": dynamo, "test": test} {
			if !strings.Contains(p, want) && !(name == "test" && want == "install-browser.sh --page") {
				t.Errorf("make %s does not run %s", name, want)
			}
		}
	}
	if strings.Contains(run, "dynamodb-local.sh") {
		t.Errorf("make run installs DynamoDB Local:\n%s", run)
	}
	if strings.Contains(strings.ReplaceAll(run, "install-browser.sh --page", ""), "install-browser.sh") || strings.Contains(run, "--firefox") {
		t.Errorf("make run installs a test browser:\n%s", run)
	}
	if !strings.Contains(dynamo, "dynamodb-local.sh install") {
		t.Errorf("make run-dynamodb does not install DynamoDB Local:\n%s", dynamo)
	}
	if !strings.Contains(test, "dynamodb-local.sh install") || !strings.Contains(test, "install-browser.sh >") || !strings.Contains(test, "install-browser.sh --firefox >") {
		t.Errorf("make test does not install DynamoDB Local and the test browsers:\n%s", test)
	}
}
