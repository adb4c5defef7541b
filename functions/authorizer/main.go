// Command authorizer is API Gateway's Lambda authorizer (REQUEST, payload format 2.0,
// simple responses): it finds the account of the request's API key, and API Gateway
// caches the answer per Authorization header.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/bridgeline/bridgeline/functions/internal/wire"
	"github.com/bridgeline/bridgeline/shared/httpapi"
)

func main() {
	s, err := wire.Store(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "authorizer:", err)
		os.Exit(1)
	}
	lambda.Start(httpapi.AuthorizerHandler(s))
}
