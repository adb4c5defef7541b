// Command api-keys-create is the Lambda for POST /v1/api_keys: the same handler as the local
// stack, behind API Gateway's authorizer.
package main

import "github.com/bridgeline/bridgeline/functions/internal/apiwire"

func main() { apiwire.Start("api-keys-create", nil) }
