// Command echo is a minimal Lambda function for the runtimeapi tests: it returns its
// event with the invoked function's ARN, and fails when the event asks it to.
package main

import (
	"context"
	"errors"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

type event struct {
	Say  string `json:"say"`
	Fail bool   `json:"fail"`
}

type reply struct {
	Said string `json:"said"`
	ARN  string `json:"arn"`
}

func main() {
	lambda.Start(func(ctx context.Context, e event) (reply, error) {
		if e.Fail {
			return reply{}, errors.New("asked to fail")
		}
		lc, _ := lambdacontext.FromContext(ctx)
		return reply{Said: e.Say, ARN: lc.InvokedFunctionArn}, nil
	})
}
