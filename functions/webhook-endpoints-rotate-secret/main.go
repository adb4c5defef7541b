// Command webhook-endpoints-rotate-secret is the Lambda for POST /v1/webhook_endpoints/{id}/rotate_secret: the same handler as the local
// stack, behind API Gateway's authorizer.
package main

import "github.com/bridgeline/bridgeline/functions/internal/apiwire"

func main() { apiwire.Start("webhook-endpoints-rotate-secret", nil) }
