// Command campaigns-start is the Lambda for POST /v1/campaigns/{id}/start: the same handler as the local
// stack, behind API Gateway's authorizer.
package main

import "github.com/bridgeline/bridgeline/functions/internal/apiwire"

func main() { apiwire.Start("campaigns-start", nil) }
