// Command join-page is the Lambda for GET /join/{file}: the hosted join page of web calls
// and its files (shared/joinpage), the same handler as the local stack's. The route
// takes no API key: the page holds nothing secret, and the participant token a visitor
// brings stays in the address's fragment, which no request carries.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/bridgeline/bridgeline/functions/internal/wire"
	"github.com/bridgeline/bridgeline/shared/joinpage/assets"
)

func main() {
	h, err := wire.PageHandler(context.Background(), assets.FS)
	if err != nil {
		fmt.Fprintln(os.Stderr, "join-page:", err)
		os.Exit(1)
	}
	lambda.Start(httpadapter.NewV2(h).ProxyWithContext)
}
