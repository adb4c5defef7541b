// Package recwire opens the recordings bucket for the recording functions
// (calls-recording-get, calls-recording-delete), so that only they link the S3 client.
package recwire

import (
	"context"
	"errors"
	"fmt"
	"os"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/bridgeline/bridgeline/shared/recordings"
)

// FromEnv is the bucket RECORDINGS_BUCKET names (template.yaml's RecordingsBucket). The
// endpoint is the SDK's: AWS_ENDPOINT_URL_S3 points it at moto, with S3_PATH_STYLE=true.
func FromEnv(ctx context.Context) (*recordings.S3, error) {
	bucket := os.Getenv("RECORDINGS_BUCKET")
	if bucket == "" {
		return nil, errors.New("RECORDINGS_BUCKET is not set")
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("aws config: %w", err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = os.Getenv("S3_PATH_STYLE") == "true" })
	return &recordings.S3{Client: client, Bucket: bucket}, nil
}
