// Command webhook-deliver is the Lambda on the delivery queue: it fans events from the
// EventBridge rule out to the account's webhook endpoints and makes each attempt, with
// retries as delayed queue messages (events/awsbus).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/bridgeline/bridgeline/functions/internal/wire"
)

func main() {
	h, err := wire.Deliverer(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "webhook-deliver:", err)
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}
