// Package web is the calling platform of web calls: the caller is a browser (or any
// LiveKit client) that joins the session's room with the token POST /v1/sessions
// returned, so no platform leg is ever dialled. A web call's record names this platform
// ("web"); the session service asks its Kind, as it asks a line's, whether a key may
// place the call. There is no adapter: nothing is dialled, answered or hung up on a
// platform, and deleting the room ends the caller's connection.
package web

import (
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/platform"
)

// Name is the platform a web call's record names.
const Name = "web"

// Kind is the web's platform.Kind: it dials no handle, cannot transfer, and takes
// sk_test_ keys (no call leaves Bridgeline: the caller comes to it).
type Kind struct{}

var _ platform.Kind = Kind{}

// Name is "web".
func (Kind) Name() string { return Name }

// CheckHandle refuses every handle: a web call dials nothing.
func (Kind) CheckHandle(string) error {
	return apierr.Invalid("platform_handle", "a web call dials nothing: leave platform_handle out "+
		"(mode assistant with an assistant_id and no platform_handle is a web call)")
}

// CanTransfer is false: the caller's browser is the call.
func (Kind) CanTransfer() bool { return false }

// TestKeys is true: a web call places no call on any network.
func (Kind) TestKeys() bool { return true }
