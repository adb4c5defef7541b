// Command persona-agent-token is the Lambda for POST /internal/persona/agent-token on
// the private InternalApi (template.yaml), which only the fleets' VPC reaches: the same
// handler as the local stack. The route takes no API key: the handler verifies the
// persona worker's signature (the report secret), then answers a LiveKit registration
// token carrying only the agent grant, signed with the fleet's key, so that no worker
// holds the LiveKit API secret. It talks to no LiveKit server: it links none of its SDK.
package main

import "github.com/bridgeline/bridgeline/functions/internal/apiwire"

func main() { apiwire.StartInternal("persona-agent-token", nil) }
