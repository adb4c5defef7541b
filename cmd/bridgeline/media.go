package main

import (
	"context"
	"log/slog"

	"github.com/bridgeline/bridgeline/shared/config"
	"github.com/bridgeline/bridgeline/shared/httpapi"
)

// startMedia starts the media side of the local stack (livekit-server, the simulated
// platform, a persona worker) and plugs its routes and services into api before the API
// starts serving. The returned stop drains them in order.
func startMedia(ctx context.Context, cfg config.Config, s Store, api *httpapi.API, log *slog.Logger) (func(), error) {
	return func() {}, nil
}
