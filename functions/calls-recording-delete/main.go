// Command calls-recording-delete is the Lambda for DELETE /v1/calls/{id}/recording: the
// same handler as the local stack, behind API Gateway's authorizer, deleting from the
// recordings bucket (its role may only s3:DeleteObject there).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/bridgeline/bridgeline/functions/internal/recwire"
	"github.com/bridgeline/bridgeline/functions/internal/wire"
)

func main() {
	ctx := context.Background()
	files, err := recwire.FromEnv(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "calls-recording-delete:", err)
		os.Exit(1)
	}
	h, err := wire.RecordingsHandler(ctx, "calls-recording-delete", files)
	if err != nil {
		fmt.Fprintln(os.Stderr, "calls-recording-delete:", err)
		os.Exit(1)
	}
	lambda.Start(httpadapter.NewV2(h).ProxyWithContext)
}
