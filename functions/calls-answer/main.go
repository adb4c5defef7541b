// Command calls-answer is the Lambda for POST /v1/calls/{id}/answer: the same handler as the local
// stack, behind API Gateway's authorizer.
package main

import "github.com/bridgeline/bridgeline/functions/internal/apiwire"

func main() { apiwire.Start("calls-answer", nil) }
