package functions_test

// What the shipped binaries link: no test code anywhere, and LiveKit's SDK (with the
// gRPC, Redis and CEL packages it brings) only in the functions that talk to LiveKit.
// Go links every imported package's init and globals, so the import graph is what
// counts.

import (
	"slices"
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/functions/functiontest"
)

// liveKitFunctions are the functions that talk to LiveKit (rooms, dispatch, tokens, or
// checking its signatures): their mains pass lkwire.FromEnv to wire.
var liveKitFunctions = []string{
	"calls-transfer", "lines-create", "lines-delete", "livekit-webhook", "persona-report", "persona-transfer",
	"platform-sim", "session-sweeper", "sessions-create", "sessions-delete", "sessions-tokens",
	"sip-trunks-create", "sip-trunks-delete", "sip-trunks-update",
}

// heavy are the module paths a function without LiveKit must not link.
var heavy = []string{"github.com/livekit/", "google.golang.org/grpc", "github.com/redis/", "github.com/google/cel-go", "cel.dev/"}

// TestShippedBinariesLinkNoTestCode: nothing under cmd/ or functions/ links the testing
// package or a test helper package (one whose name ends in "test", like storetest), apart
// from functions/functiontest, the test helper of this folder's own tests.
func TestShippedBinariesLinkNoTestCode(t *testing.T) {
	roots := []string{"./cmd/..."}
	for _, p := range functiontest.GoList(t, "./functions/...") {
		if !strings.HasSuffix(p, "/functiontest") {
			roots = append(roots, p)
		}
	}
	lines := functiontest.GoList(t, append([]string{"-deps", "-f", "{{.ImportPath}} {{.Standard}}"}, roots...)...)
	if len(lines) < 100 {
		t.Fatalf("go list -deps listed only %d packages: the check saw nothing", len(lines))
	}
	for _, l := range lines {
		path, std, _ := strings.Cut(l, " ")
		last := path[strings.LastIndex(path, "/")+1:]
		switch {
		case path == "testing" || strings.HasPrefix(path, "testing/"):
			t.Errorf("a shipped binary links %s", path)
		case std == "false" && strings.HasSuffix(last, "test"):
			t.Errorf("a shipped binary links the test package %s", path)
		}
	}
}

// TestLiveKitOnlyWhereNeeded: a function outside liveKitFunctions links no LiveKit,
// gRPC, Redis or CEL package; each function in it links the LiveKit client (else it
// belongs out of the list), which is lkhttp's: no function links livekit/protocol.
func TestLiveKitOnlyWhereNeeded(t *testing.T) {
	names := functiontest.Names(t)
	for _, n := range liveKitFunctions {
		if !slices.Contains(names, n) {
			t.Errorf("liveKitFunctions names %s, which is no function", n)
		}
	}
	deps := map[string][]string{}
	for _, l := range functiontest.GoList(t, "-f", "{{.ImportPath}} {{join .Deps \" \"}}", "./functions/...") {
		f := strings.Fields(l)
		if name, ok := strings.CutPrefix(f[0], "github.com/bridgeline/bridgeline/functions/"); ok && !strings.Contains(name, "/") {
			deps[name] = f[1:]
		}
	}
	for _, name := range names {
		d, ok := deps[name]
		if !ok {
			t.Errorf("go list gave no dependencies for %s", name)
			continue
		}
		if slices.Contains(liveKitFunctions, name) && !slices.Contains(d, "github.com/bridgeline/bridgeline/shared/rtc/lkhttp") {
			t.Errorf("%s is in liveKitFunctions but links no LiveKit client (shared/rtc/lkhttp)", name)
		}
		var bad []string
		for _, p := range d {
			if slices.ContainsFunc(heavy, func(h string) bool { return strings.HasPrefix(p, h) }) {
				bad = append(bad, p)
			}
		}
		if len(bad) > 0 {
			t.Errorf("%s links %d LiveKit, gRPC, Redis or CEL packages, e.g. %v", name, len(bad), bad[:min(4, len(bad))])
		}
	}
}
