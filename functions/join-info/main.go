// Command join-info is the Lambda for POST /join/info: the hosted join page asks it, on
// load, for the branding and the state of the web call its token is for
// (shared/joinpage). The route takes no API key: the token in the request's body is
// verified with LiveKit's key before anything is answered.
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
	h, err := wire.Handler(context.Background(), "join-info", nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "join-info:", err)
		os.Exit(1)
	}
	lambda.Start(httpadapter.NewV2(h).ProxyWithContext)
}
