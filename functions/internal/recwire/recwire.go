// Package recwire opens the recordings bucket for the recording functions
// (calls-recording-get, calls-recording-delete), so that only they link the S3 client,
// and starts them (Start: what their mains share).
package recwire

import (
	"context"
	"fmt"
	"os"

	"github.com/bridgeline/bridgeline/functions/internal/apiwire"
	"github.com/bridgeline/bridgeline/functions/internal/s3wire"
	"github.com/bridgeline/bridgeline/functions/internal/wire"
	"github.com/bridgeline/bridgeline/shared/recordings"
)

// FromEnv is the bucket RECORDINGS_BUCKET names (template.yaml's RecordingsBucket). The
// endpoint is the SDK's: AWS_ENDPOINT_URL_S3 points it at moto, with S3_PATH_STYLE=true.
func FromEnv(ctx context.Context) (*recordings.S3, error) {
	client, bucket, err := s3wire.Open(ctx, "RECORDINGS_BUCKET")
	if err != nil {
		return nil, err
	}
	return &recordings.S3{Client: client, Bucket: bucket}, nil
}

// Start runs a recording function under the Lambda runtime: the bucket RECORDINGS_BUCKET
// names, the function's route on it (wire.RecordingsHandler), API Gateway's HTTP API
// payload. It does not return; a function that cannot start exits 1, naming itself.
func Start(function string) {
	ctx := context.Background()
	files, err := FromEnv(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, function+":", err)
		os.Exit(1)
	}
	h, err := wire.RecordingsHandler(ctx, function, files)
	if err != nil {
		fmt.Fprintln(os.Stderr, function+":", err)
		os.Exit(1)
	}
	apiwire.ServeHTTPAPI(h)
}
