package wire

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
)

// Start is the main of a function whose handler wire builds with its LiveKit client
// (Transfers, Sweeper): it builds the handler and hands it to the Lambda runtime. A
// handler that cannot be built (configuration, secrets) stops the process with the
// reason, named after the function, which the runtime reports as an init error.
func Start[H any](name string, build func(context.Context, LiveKit) (H, error), lk LiveKit) {
	h, err := build(context.Background(), lk)
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
	lambda.Start(h)
}
