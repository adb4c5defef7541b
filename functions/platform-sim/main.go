// Command platform-sim is the Lambda for POST /internal/platform/sim/events on the private
// InternalApi (template.yaml), which only the fleets' VPC reaches: the same handler as
// the local stack. The route takes no API key: the handler verifies the sim gateway's signature (simhook).
package main

import (
	"github.com/bridgeline/bridgeline/functions/internal/apiwire"
	"github.com/bridgeline/bridgeline/functions/internal/lkwire"
)

func main() { apiwire.StartInternal("platform-sim", lkwire.FromEnv) }
