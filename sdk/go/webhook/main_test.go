package webhook_test

import (
	"os"
	"testing"

	"github.com/bridgeline/bridgeline/sdk/go/internal/apitest"
)

// TestMain skips Example_receiver, which registers an endpoint and ends a session, unless
// BRIDGELINE_API_URL and BRIDGELINE_API_KEY name an API to run it against; the other
// examples and tests need none.
func TestMain(m *testing.M) {
	apitest.SkipWithoutAPI("sdk/go/webhook", "^Example_receiver$")
	os.Exit(m.Run())
}
