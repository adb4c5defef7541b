// Command sessions-update is the Lambda for PATCH /v1/sessions/{id}: the same handler as the
// local stack, behind API Gateway's authorizer.
package main

import "github.com/bridgeline/bridgeline/functions/internal/apiwire"

func main() { apiwire.Start("sessions-update", nil) }
