// Command sip-trunks-update is the Lambda for PATCH /v1/sip_trunks/{id}: the same handler as the local
// stack, behind API Gateway's authorizer.
package main

import (
	"github.com/bridgeline/bridgeline/functions/internal/apiwire"
	"github.com/bridgeline/bridgeline/functions/internal/lkwire"
)

func main() { apiwire.Start("sip-trunks-update", lkwire.WithSIP) }
