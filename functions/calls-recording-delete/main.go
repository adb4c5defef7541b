// Command calls-recording-delete is the Lambda for DELETE /v1/calls/{id}/recording: the
// same handler as the local stack, behind API Gateway's authorizer, deleting from the
// recordings bucket (its role may only s3:DeleteObject there).
package main

import "github.com/bridgeline/bridgeline/functions/internal/recwire"

func main() { recwire.Start("calls-recording-delete") }
