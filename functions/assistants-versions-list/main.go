// Command assistants-versions-list is the Lambda for GET /v1/assistants/{id}/versions: the same handler as the local
// stack, behind API Gateway's authorizer.
package main

import "github.com/bridgeline/bridgeline/functions/internal/apiwire"

func main() { apiwire.Start("assistants-versions-list", nil) }
