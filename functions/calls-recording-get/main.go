// Command calls-recording-get is the Lambda for GET /v1/calls/{id}/recording: the same
// handler as the local stack, behind API Gateway's authorizer, presigning a GET of the
// recordings bucket (its role may only s3:GetObject there).
package main

import "github.com/bridgeline/bridgeline/functions/internal/recwire"

func main() { recwire.Start("calls-recording-get") }
