// Command webhook-endpoints-create is the Lambda for POST /v1/webhook_endpoints: the same handler as the local
// stack, behind API Gateway's authorizer.
package main

import "github.com/bridgeline/bridgeline/functions/internal/apiwire"

func main() { apiwire.Start("webhook-endpoints-create", nil) }
