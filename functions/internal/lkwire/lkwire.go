// Package lkwire builds a Lambda's LiveKit client (shared/rtc/lkhttp) from its environment. Only
// the functions that talk to LiveKit import it and hand it to wire (wire.Handler(ctx,
// name, lkwire.FromEnv)); the others pass nil and link none of LiveKit's SDK.
package lkwire

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"

	"github.com/bridgeline/bridgeline/functions/internal/wire"
	"github.com/bridgeline/bridgeline/shared/config"
	"github.com/bridgeline/bridgeline/shared/rtc/lkhttp"
)

// FromEnv is a wire.LiveKit: LIVEKIT_CREDENTIALS_ARN names the Secrets Manager secret
// holding api_key and api_secret (read once at start); cfg gives LIVEKIT_URL,
// LIVEKIT_PUBLIC_URL and TOKEN_TTL_MINUTES. Without the secret's ARN the function has no
// LiveKit client (rooms that only know rtc_url).
func FromEnv(ctx context.Context, cfg config.Config) (wire.LiveKitParts, error) {
	arn := os.Getenv("LIVEKIT_CREDENTIALS_ARN")
	if arn == "" {
		return wire.LiveKitParts{}, nil
	}
	secret, err := wire.Secret(ctx, arn)
	if err != nil {
		return wire.LiveKitParts{}, fmt.Errorf("read LiveKit credentials: %w", err)
	}
	var creds struct {
		APIKey    string `json:"api_key"`
		APISecret string `json:"api_secret"`
	}
	if err := json.Unmarshal([]byte(secret), &creds); err != nil {
		return wire.LiveKitParts{}, fmt.Errorf("LiveKit credentials secret: %w", err)
	}
	c, err := lkhttp.New(lkhttp.Config{URL: cfg.LiveKitURL, PublicURL: cfg.LiveKitPublicURL,
		APIKey: creds.APIKey, APISecret: creds.APISecret, TokenTTL: cfg.TokenTTL,
		HTTPClient: &http.Client{Timeout: wire.LiveKitTimeout}})
	if err != nil {
		return wire.LiveKitParts{}, err
	}
	return wire.LiveKitParts{Rooms: c, Verifier: c}, nil
}

// WithSIP is FromEnv with LiveKit's SIP API too: the functions that keep LiveKit's SIP
// trunks and dispatch rules in step with the customers' trunks and lines (and the
// sweeper's reconcile), and calls-transfer, which refers a SIP call.
func WithSIP(ctx context.Context, cfg config.Config) (wire.LiveKitParts, error) {
	parts, err := FromEnv(ctx, cfg)
	if err != nil || parts.Rooms == nil {
		return parts, err
	}
	if c, ok := parts.Rooms.(*lkhttp.Client); ok {
		parts.SIP = c
	}
	return parts, nil
}
