// Command sip-trunks-create is the Lambda for POST /v1/sip_trunks: the same handler as the local
// stack, behind API Gateway's authorizer.
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
	h, err := wire.Handler(context.Background(), "sip-trunks-create", lkwire.WithSIP)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sip-trunks-create:", err)
		os.Exit(1)
	}
	lambda.Start(httpadapter.NewV2(h).ProxyWithContext)
}
