// Command assistants-activate is the Lambda for POST /v1/assistants/{id}/activate: the same handler as the local
// stack, behind API Gateway's authorizer.
package main

import "github.com/bridgeline/bridgeline/functions/internal/apiwire"

func main() { apiwire.Start("assistants-activate", nil) }
