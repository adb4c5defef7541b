// Command api-keys-delete is the Lambda for DELETE /v1/api_keys/{id}: the same handler as the local
// stack, behind API Gateway's authorizer.
package main

import "github.com/bridgeline/bridgeline/functions/internal/apiwire"

func main() { apiwire.Start("api-keys-delete", nil) }
