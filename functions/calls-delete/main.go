// Command calls-delete is the Lambda for DELETE /v1/calls/{id}: the same handler as the
// local stack, behind API Gateway's authorizer. It deletes the call's recording from the
// recordings bucket (its role may only s3:DeleteObject there) and writes the call and
// its session redacted.
package main

import "github.com/bridgeline/bridgeline/functions/internal/recwire"

func main() { recwire.Start("calls-delete") }
