package conversation_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoMediaImports: turn-taking builds and tests without the media stack. Neither the
// conversation nor its tests link WebRTC (pion), LiveKit, or any package with cgo (the
// codecs, the engines): they work on mediafleet/speech's contracts.
func TestNoMediaImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-test", "-deps", "-f", "{{.ImportPath}}|{{.Standard}}|{{len .CgoFiles}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if !strings.Contains(string(out), "/mediafleet/speech|") {
		t.Fatalf("go list -deps names no mediafleet/speech; the check is not listing the conversation's imports:\n%s", out)
	}
	for _, l := range lines {
		f := strings.Split(l, "|")
		path, std, cgo := f[0], f[1] == "true", f[2] != "0"
		switch {
		case strings.Contains(path, "/pion/") || strings.Contains(path, "/livekit/"):
			t.Errorf("the conversation links %s", path)
		case !std && cgo:
			t.Errorf("the conversation links %s, which uses cgo", path)
		}
	}
}
