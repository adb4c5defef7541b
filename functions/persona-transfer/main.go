// Command persona-transfer is the Lambda for POST /internal/persona/transfer: the same handler as the local
// stack. The route takes no API key: the handler verifies the sender's signature.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/bridgeline/bridgeline/functions/internal/lkwire"
	"github.com/bridgeline/bridgeline/functions/internal/wire"
)

func main() {
	h, err := wire.Handler(context.Background(), "persona-transfer", lkwire.WithSIP)
	if err != nil {
		fmt.Fprintln(os.Stderr, "persona-transfer:", err)
		os.Exit(1)
	}
	lambda.Start(httpadapter.NewV2(h).ProxyWithContext)
}
