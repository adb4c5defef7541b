package platformsim_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The sim is media fleet code: it may use the shared platform contract (platform,
// simhook) but not the control plane's HTTP layer, which mounts it from outside
// (httpapi.Passthrough with Patterns).
func TestSimDoesNotImportTheControlPlaneHTTPLayer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{"/shared/httpapi", "/shared/session", "/shared/apierr"} {
			if strings.HasSuffix(pkg, banned) {
				t.Errorf("platformsim links %s", pkg)
			}
		}
	}
	if !strings.Contains(string(out), "/shared/platform/simhook") {
		t.Errorf("go list -deps names no simhook; the check is not listing the sim's imports:\n%s", out)
	}
}
