package speech_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoMediaImports: the contract is a leaf. Besides the standard library it links only
// tts (PCM, itself standard library only), and nothing with cgo, so whatever imports it
// for the contract alone (the conversation, the engines' interfaces) links no media.
func TestNoMediaImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}} {{len .CgoFiles}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 10 {
		t.Fatalf("go list -deps listed %d packages: the check saw nothing", len(lines))
	}
	allowed := map[string]bool{
		"github.com/bridgeline/bridgeline/mediafleet/speech": true,
		"github.com/bridgeline/bridgeline/mediafleet/tts":    true,
	}
	for _, l := range lines {
		f := strings.Fields(l)
		path, std, cgo := f[0], f[1] == "true", f[2] != "0"
		switch {
		case !std && !allowed[path]:
			t.Errorf("speech links %s", path)
		case !std && cgo:
			t.Errorf("speech links %s, which uses cgo", path)
		}
	}
}
