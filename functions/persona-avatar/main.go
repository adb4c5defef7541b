// Command persona-avatar is the Lambda for POST /internal/persona/avatar on the private
// InternalApi (template.yaml), which only the fleets' VPC reaches: the same handler as
// the local stack. The route takes no API key: the handler verifies the persona worker's
// signature (the report secret), then answers the sheet of the account's own avatar with
// GET URLs of its parts presigned for 15 minutes, so that the fleet reads the images
// without any permission on the bucket.
package main

import "github.com/bridgeline/bridgeline/functions/internal/avawire"

func main() { avawire.StartInternal("persona-avatar") }
