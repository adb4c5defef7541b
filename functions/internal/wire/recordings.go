package wire

import (
	"context"
	"net/http"

	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/controlplane"
)

// RecordingsHandler is the handler of a recording function (calls-recording-get,
// calls-recording-delete): its route, on the recordings' store files (recwire.FromEnv,
// which only those functions' mains import).
func RecordingsHandler(ctx context.Context, function string, files call.RecordingFiles) (http.Handler, error) {
	cp, err := New(ctx, function, nil, func(d *controlplane.Deps) { d.Recordings = files })
	if err != nil {
		return nil, err
	}
	return cp.FunctionHandler(function)
}
