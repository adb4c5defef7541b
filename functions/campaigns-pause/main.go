// Command campaigns-pause is the Lambda for POST /v1/campaigns/{id}/pause: the same handler as the local
// stack, behind API Gateway's authorizer.
package main

import "github.com/bridgeline/bridgeline/functions/internal/apiwire"

func main() { apiwire.Start("campaigns-pause", nil) }
