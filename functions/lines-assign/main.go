// Command lines-assign is the Lambda for POST /v1/lines/{id}/assign: the same handler as the local
// stack, behind API Gateway's authorizer.
package main

import "github.com/bridgeline/bridgeline/functions/internal/apiwire"

func main() { apiwire.Start("lines-assign", nil) }
