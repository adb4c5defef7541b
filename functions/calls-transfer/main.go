// Command calls-transfer is the Lambda for POST /v1/calls/{id}/transfer: the same handler as the local
// stack, behind API Gateway's authorizer.
package main

import (
	"github.com/bridgeline/bridgeline/functions/internal/apiwire"
	"github.com/bridgeline/bridgeline/functions/internal/lkwire"
)

func main() { apiwire.Start("calls-transfer", lkwire.WithSIP) }
