// Package avawire opens the avatar assets bucket for the functions that keep an
// account's own avatars' files (avatars-create, avatars-get, avatars-delete,
// persona-avatar), so that only they link the S3 client, and starts them.
package avawire

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/bridgeline/bridgeline/functions/internal/apiwire"
	"github.com/bridgeline/bridgeline/functions/internal/s3wire"
	"github.com/bridgeline/bridgeline/functions/internal/wire"
	"github.com/bridgeline/bridgeline/shared/avatars"
	"github.com/bridgeline/bridgeline/shared/controlplane"
)

// FromEnv is the bucket AVATAR_ASSETS_BUCKET names (template.yaml's AvatarAssetsBucket).
// The endpoint is the SDK's: AWS_ENDPOINT_URL_S3 points it at moto, with
// S3_PATH_STYLE=true.
func FromEnv(ctx context.Context) (*avatars.S3, error) {
	client, bucket, err := s3wire.Open(ctx, "AVATAR_ASSETS_BUCKET")
	if err != nil {
		return nil, err
	}
	return &avatars.S3{Client: client, Bucket: bucket}, nil
}

// Handler is the function's route on the avatar assets a.
func Handler(ctx context.Context, function string, a avatars.Assets) (http.Handler, error) {
	cp, err := wire.New(ctx, function, nil, func(d *controlplane.Deps) { d.AvatarAssets = a })
	if err != nil {
		return nil, err
	}
	return cp.FunctionHandler(function)
}

// Start runs a /v1 avatar function under the Lambda runtime: the bucket, the function's
// route on it, API Gateway's HTTP API payload. It does not return; a function that
// cannot start exits 1, naming itself.
func Start(function string) {
	apiwire.ServeHTTPAPI(handlerOrExit(function))
}

// StartInternal is Start for persona-avatar on the private InternalApi, a REST API
// (payload 1.0): only those can be private.
func StartInternal(function string) {
	apiwire.ServeRESTAPI(handlerOrExit(function))
}

func handlerOrExit(function string) http.Handler {
	ctx := context.Background()
	a, err := FromEnv(ctx)
	if err == nil {
		var h http.Handler
		if h, err = Handler(ctx, function, a); err == nil {
			return h
		}
	}
	fmt.Fprintln(os.Stderr, function+":", err)
	os.Exit(1)
	return nil
}
