// Command persona-agent-token is the Lambda for POST /internal/persona/agent-token on
// the private InternalApi (template.yaml), which only the fleets' VPC reaches: the same
// handler as the local stack. The route takes no API key: the handler verifies the
// persona worker's signature (the report secret), then answers a LiveKit registration
// token carrying only the agent grant, signed with the fleet's key, so that no worker
// holds the LiveKit API secret. It talks to no LiveKit server: it links none of its SDK.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/bridgeline/bridgeline/functions/internal/wire"
)

func main() {
	h, err := wire.Handler(context.Background(), "persona-agent-token", nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "persona-agent-token:", err)
		os.Exit(1)
	}
	// InternalApi is a REST API (payload 1.0): only those can be private.
	lambda.Start(httpadapter.New(h).ProxyWithContext)
}
