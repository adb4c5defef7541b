// Command lines-delete is the Lambda for DELETE /v1/lines/{id}: the same handler as the local
// stack, behind API Gateway's authorizer.
package main

import (
	"github.com/bridgeline/bridgeline/functions/internal/apiwire"
	"github.com/bridgeline/bridgeline/functions/internal/lkwire"
)

func main() { apiwire.Start("lines-delete", lkwire.WithSIP) }
