package httpapi

import (
	"context"
	"net/http"

	"github.com/bridgeline/bridgeline/shared/session"
)

// withKeyMode is the request's context, marked when its key is an sk_test_ one: the
// session service lets test keys place calls only through the sim platform, which it
// can tell only once the line is chosen.
func withKeyMode(r *http.Request) context.Context {
	if liveKey(r) {
		return r.Context()
	}
	return session.WithTestKey(r.Context())
}
