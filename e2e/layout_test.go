// Package e2e_test keeps the tree's walls: the tests that need the media stack (cgo
// codecs, livekit-server, the sim, persona workers, the Lambda processes) live under
// e2e/, so every package under shared/, events/ and functions/ builds and tests without
// cgo and without the media fleet.
package e2e_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/functions/functiontest"
)

// domain are the trees whose tests must build without cgo or the media stack.
var domain = []string{"./shared/...", "./events/...", "./functions/..."}

// upward are the trees a domain package, or its tests, must not import: the media fleet
// and the binaries and tests that assemble the whole stack.
var upward = []string{"mediafleet", "cmd", "e2e", "examples", "soak"}

const module = "github.com/bridgeline/bridgeline/"

// TestDomainTestsNeedNoCgo: go list -test -deps over shared/, events/ and functions/
// names no package outside the standard library with cgo files and none of the upward
// trees, so `go test ./shared/...` needs no libvpx, Opus or flite, and no media code.
func TestDomainTestsNeedNoCgo(t *testing.T) {
	for _, root := range domain {
		t.Run(strings.Trim(root, "./"), func(t *testing.T) {
			lines := functiontest.GoList(t, "-test", "-deps", "-f", "{{.ImportPath}}|{{.Standard}}|{{len .CgoFiles}}", root)
			if len(lines) < 50 {
				t.Fatalf("go list -test -deps %s listed only %d packages: the check saw nothing", root, len(lines))
			}
			for _, l := range lines {
				f := strings.Split(l, "|")
				if len(f) != 3 {
					t.Fatalf("go list line %q", l)
				}
				path, std, cgo := f[0], f[1] == "true", f[2] != "0"
				if std {
					continue
				}
				if cgo {
					t.Errorf("%s (with its tests) needs cgo: %s; move the test that needs it to e2e/", root, path)
				}
				for _, up := range upward {
					if rel, ok := strings.CutPrefix(path, module); ok && (rel == up || strings.HasPrefix(rel, up+"/")) {
						t.Errorf("%s (with its tests) imports %s; move the test that needs it to e2e/", root, path)
					}
				}
			}
		})
	}
}

// leaves are the shared/ packages the event contract and its transport may use: helpers
// with no domain in them.
var leaves = []string{"shared/apierr", "shared/egress", "shared/ident", "shared/listing"}

// TestEventsHoldNoDomain: events/ is the event contract and its transport (signing,
// delivery, the relay, the AWS bus); what they deliver for (endpoints, decisions,
// sessions) is the domain's, in shared/, which imports events/ and never the reverse.
func TestEventsHoldNoDomain(t *testing.T) {
	lines := functiontest.GoList(t, "-deps", "-f", "{{.ImportPath}}", "./events/...")
	if len(lines) < 20 {
		t.Fatalf("go list -deps ./events/... listed only %d packages: the check saw nothing", len(lines))
	}
	for _, path := range lines {
		rel, ok := strings.CutPrefix(path, module)
		if !ok || !strings.HasPrefix(rel, "shared/") || slices.Contains(leaves, rel) {
			continue
		}
		t.Errorf("events/ imports %s, a domain package; declare what the transport needs in events/ and let shared/ adapt to it", rel)
	}
}
