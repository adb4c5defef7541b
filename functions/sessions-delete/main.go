// Command sessions-delete is the Lambda for DELETE /v1/sessions/{id}: the same handler as the local
// stack, behind API Gateway's authorizer.
package main

import (
	"github.com/bridgeline/bridgeline/functions/internal/apiwire"
	"github.com/bridgeline/bridgeline/functions/internal/lkwire"
)

func main() { apiwire.Start("sessions-delete", lkwire.WithSIP) }
