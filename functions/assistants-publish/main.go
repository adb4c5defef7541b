// Command assistants-publish is the Lambda for POST /v1/assistants/{id}/publish: the same handler as the local
// stack, behind API Gateway's authorizer.
package main

import "github.com/bridgeline/bridgeline/functions/internal/apiwire"

func main() { apiwire.Start("assistants-publish", nil) }
