// Command sessions-tokens is the Lambda for POST /v1/sessions/{id}/tokens: the same handler as the local
// stack, behind API Gateway's authorizer.
package main

import (
	"github.com/bridgeline/bridgeline/functions/internal/apiwire"
	"github.com/bridgeline/bridgeline/functions/internal/lkwire"
)

func main() { apiwire.Start("sessions-tokens", lkwire.FromEnv) }
