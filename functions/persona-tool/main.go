// Command persona-tool is the Lambda for POST /internal/persona/tool on the private
// InternalApi (template.yaml), which only the fleets' VPC reaches: the same handler as
// the local stack. The route takes no API key: the handler verifies the persona worker's signature, then
// posts the tool call to the customer's URL, signed with the assistant's tool secret.
package main

import "github.com/bridgeline/bridgeline/functions/internal/apiwire"

func main() { apiwire.StartInternal("persona-tool", nil) }
