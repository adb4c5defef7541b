// Command persona-report is the Lambda for POST /internal/persona/report on the private
// InternalApi (template.yaml), which only the fleets' VPC reaches: the same handler as
// the local stack. The route takes no API key: the handler verifies the sender's signature.
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
	h, err := wire.Handler(context.Background(), "persona-report", lkwire.FromEnv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "persona-report:", err)
		os.Exit(1)
	}
	// InternalApi is a REST API (payload 1.0): only those can be private.
	lambda.Start(httpadapter.New(h).ProxyWithContext)
}
