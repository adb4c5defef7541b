// Package apitest is what the SDK's test packages share: the examples that call the API
// run only when BRIDGELINE_API_URL and BRIDGELINE_API_KEY name one (cmd/bridgeline's
// TestGoSDKExamples runs them against a fresh local stack).
package apitest

import (
	"flag"
	"fmt"
	"os"
)

// SkipWithoutAPI adds pattern (the examples that call the API) to -test.skip unless
// BRIDGELINE_API_URL and BRIDGELINE_API_KEY are set. Call it from TestMain, before m.Run.
func SkipWithoutAPI(pkg, pattern string) {
	if !flag.Parsed() {
		flag.Parse()
	}
	if os.Getenv("BRIDGELINE_API_URL") != "" && os.Getenv("BRIDGELINE_API_KEY") != "" {
		return
	}
	skip := flag.Lookup("test.skip")
	if s := skip.Value.String(); s != "" {
		pattern = s + "|" + pattern
	}
	skip.Value.Set(pattern)
	fmt.Fprintf(os.Stderr, "%s: examples that call the API skipped: set BRIDGELINE_API_URL and BRIDGELINE_API_KEY to run them\n", pkg)
}
