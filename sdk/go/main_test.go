package bridgeline_test

import (
	"os"
	"testing"

	"github.com/bridgeline/bridgeline/sdk/go/internal/apitest"
)

// TestMain skips the examples, which create assistants and sessions, unless
// BRIDGELINE_API_URL and BRIDGELINE_API_KEY name an API to run them against.
func TestMain(m *testing.M) {
	apitest.SkipWithoutAPI("sdk/go", "^Example")
	os.Exit(m.Run())
}
