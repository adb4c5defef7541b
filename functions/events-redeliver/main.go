// Command events-redeliver is the Lambda for POST /v1/events/{id}/redeliver: the same handler as the local
// stack, behind API Gateway's authorizer.
package main

import "github.com/bridgeline/bridgeline/functions/internal/apiwire"

func main() { apiwire.Start("events-redeliver", nil) }
