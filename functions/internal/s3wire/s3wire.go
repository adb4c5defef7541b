// Package s3wire opens the S3 bucket a function's environment names, for the packages
// that give a function a bucket (recwire, avawire), so that only their functions link
// the S3 client.
package s3wire

import (
	"context"
	"fmt"
	"os"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Open returns a client and the bucket the environment variable env names. The endpoint
// is the SDK's: AWS_ENDPOINT_URL_S3 points it at moto, with S3_PATH_STYLE=true.
func Open(ctx context.Context, env string) (*s3.Client, string, error) {
	bucket := os.Getenv(env)
	if bucket == "" {
		return nil, "", fmt.Errorf("%s is not set", env)
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("aws config: %w", err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = os.Getenv("S3_PATH_STYLE") == "true" })
	return client, bucket, nil
}
