// Command session-sweeper is the scheduled Lambda that ends sessions past their maximum
// length and assistant calls no worker took (session.Service.Sweep), through the same
// conditional end as every other path, so call.ended is still emitted once; and runs the
// accounts' call retention, deleting the recordings it reaches from RECORDINGS_BUCKET.
package main

import (
	"context"

	"github.com/bridgeline/bridgeline/functions/internal/lkwire"
	"github.com/bridgeline/bridgeline/functions/internal/recwire"
	"github.com/bridgeline/bridgeline/functions/internal/wire"
	"github.com/bridgeline/bridgeline/shared/call"
)

func main() {
	wire.Start("session-sweeper", func(ctx context.Context, lk wire.LiveKit) (func(context.Context) error, error) {
		return wire.Sweeper(ctx, lk, func(ctx context.Context) (call.RecordingFiles, error) {
			files, err := recwire.FromEnv(ctx)
			if err != nil {
				return nil, err // not a typed nil in the interface
			}
			return files, nil
		})
	}, lkwire.WithSIP)
}
