// Command platform-sip is the Lambda for POST /internal/platform/sip/events on the private
// InternalApi (template.yaml), which only the fleets' VPC reaches: the SIP gateway's
// notifications (cmd/sip-gateway, beside livekit-sip on the SIP fleet), with the same
// handler as the local stack. The route takes no API key: the handler verifies the
// gateway's signature (simhook's scheme, with the SIP secret), and answers an inbound
// call's notification with the room to join the call into, or its refusal. It holds
// LiveKit's SIP API: a call it ends (hung up, refused after answering) leaves through it.
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
	h, err := wire.Handler(context.Background(), "platform-sip", lkwire.WithSIP)
	if err != nil {
		fmt.Fprintln(os.Stderr, "platform-sip:", err)
		os.Exit(1)
	}
	// InternalApi is a REST API (payload 1.0): only those can be private.
	lambda.Start(httpadapter.New(h).ProxyWithContext)
}
