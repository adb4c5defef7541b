// Command persona-report is the Lambda for POST /internal/persona/report on the private
// InternalApi (template.yaml), which only the fleets' VPC reaches: the same handler as
// the local stack. The route takes no API key: the handler verifies the sender's signature.
package main

import (
	"github.com/bridgeline/bridgeline/functions/internal/apiwire"
	"github.com/bridgeline/bridgeline/functions/internal/lkwire"
)

func main() { apiwire.StartInternal("persona-report", lkwire.FromEnv) }
