// Command call-transfers is the Lambda on the transfer queue: calls-transfer records an
// API transfer pending, answers 202 and queues it, and this function runs it (LiveKit's
// TransferSIPParticipant, a SIP REFER that waits up to 40 s for the destination, longer
// than API Gateway lets calls-transfer run) and records the outcome in the call
// (session.Service.RunTransfer).
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
	h, err := wire.Transfers(context.Background(), lkwire.WithSIP)
	if err != nil {
		fmt.Fprintln(os.Stderr, "call-transfers:", err)
		os.Exit(1)
	}
	lambda.Start(h)
}
