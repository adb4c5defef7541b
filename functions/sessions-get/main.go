// Command sessions-get is the Lambda for GET /v1/sessions/{id}: the same handler as the local
// stack, behind API Gateway's authorizer.
package main

import "github.com/bridgeline/bridgeline/functions/internal/apiwire"

func main() { apiwire.Start("sessions-get", nil) }
