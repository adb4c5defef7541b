// Command join-info is the Lambda for POST /join/info: the hosted join page asks it, on
// load, for the branding and the state of the web call its token is for
// (shared/joinpage). The route takes no API key: the token in the request's body is
// verified with LiveKit's key before anything is answered.
package main

import "github.com/bridgeline/bridgeline/functions/internal/apiwire"

func main() { apiwire.Start("join-info", nil) }
