// Command session-sweeper is the scheduled Lambda that ends sessions past their maximum
// length and assistant calls no worker took (session.Service.Sweep), through the same
// conditional end as every other path, so call.ended is still emitted once.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/bridgeline/bridgeline/functions/internal/lkwire"
	"github.com/bridgeline/bridgeline/functions/internal/wire"
)

func main() {
	h, err := wire.Sweeper(context.Background(), lkwire.WithSIP)
	if err != nil {
		fmt.Fprintln(os.Stderr, "session-sweeper:", err)
		os.Exit(1)
	}
	lambda.Start(h)
}
