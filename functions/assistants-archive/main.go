// Command assistants-archive is the Lambda for POST /v1/assistants/{id}/archive: the same handler as the local
// stack, behind API Gateway's authorizer.
package main

import "github.com/bridgeline/bridgeline/functions/internal/apiwire"

func main() { apiwire.Start("assistants-archive", nil) }
