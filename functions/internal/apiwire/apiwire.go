// Package apiwire is the main of every function behind one of the deployment's API
// Gateway APIs: the handler functions/internal/wire builds for the function's route,
// adapted to the API's payload and handed to the Lambda runtime.
package apiwire

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/bridgeline/bridgeline/functions/internal/wire"
)

// Start runs function's route behind the public HTTP API (payload 2.0), with the LiveKit
// parts lk builds (nil: none, and the binary links no LiveKit client). It does not
// return; a function that cannot start exits 1, naming itself, which the runtime
// reports as an init error.
func Start(function string, lk wire.LiveKit) { ServeHTTPAPI(build(function, lk)) }

// StartInternal is Start behind the private InternalApi, a REST API (payload 1.0): only
// those can be private.
func StartInternal(function string, lk wire.LiveKit) { ServeRESTAPI(build(function, lk)) }

// ServeHTTPAPI serves h to the HTTP API's payload 2.0.
func ServeHTTPAPI(h http.Handler) { lambda.Start(httpadapter.NewV2(h).ProxyWithContext) }

// ServeRESTAPI serves h to a REST API's payload 1.0.
func ServeRESTAPI(h http.Handler) { lambda.Start(httpadapter.New(h).ProxyWithContext) }

func build(function string, lk wire.LiveKit) http.Handler {
	h, err := wire.Handler(context.Background(), function, lk)
	if err != nil {
		fmt.Fprintln(os.Stderr, function+":", err)
		os.Exit(1)
	}
	return h
}
