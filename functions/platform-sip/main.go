// Command platform-sip is the Lambda for POST /internal/platform/sip/events on the private
// InternalApi (template.yaml), which only the fleets' VPC reaches: the SIP gateway's
// notifications (cmd/sip-gateway, beside livekit-sip on the SIP fleet), with the same
// handler as the local stack. The route takes no API key: the handler verifies the
// gateway's signature (simhook's scheme, with the SIP secret), and answers an inbound
// call's notification with the room to join the call into, or its refusal. It holds
// LiveKit's SIP API: a call it ends (hung up, refused after answering) leaves through it.
package main

import (
	"github.com/bridgeline/bridgeline/functions/internal/apiwire"
	"github.com/bridgeline/bridgeline/functions/internal/lkwire"
)

func main() { apiwire.StartInternal("platform-sip", lkwire.WithSIP) }
