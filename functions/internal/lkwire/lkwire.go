// Package lkwire builds a Lambda's LiveKit client (shared/rtc/lkhttp) from its environment. Only
// the functions that talk to LiveKit import it and hand it to wire (wire.Handler(ctx,
// name, lkwire.FromEnv)); the others pass nil and link none of LiveKit's SDK.
package lkwire

import (
	"context"
	"net/http"

	"github.com/bridgeline/bridgeline/functions/internal/wire"
	"github.com/bridgeline/bridgeline/shared/config"
	"github.com/bridgeline/bridgeline/shared/rtc/lkhttp"
)

// FromEnv is a wire.LiveKit: the API key and secret wire.Config read from the Secrets
// Manager secret LIVEKIT_CREDENTIALS_ARN names (once, at start; cfg holds them), with
// LIVEKIT_URL, LIVEKIT_PUBLIC_URL and TOKEN_TTL_MINUTES. Without the secret's ARN the
// function has no LiveKit client (rooms that only know rtc_url).
func FromEnv(_ context.Context, cfg config.Config) (wire.LiveKitParts, error) {
	if !wire.LiveKitCredentialsFromSecrets() {
		return wire.LiveKitParts{}, nil
	}
	c, err := lkhttp.New(lkhttp.Config{URL: cfg.LiveKitURL, PublicURL: cfg.LiveKitPublicURL,
		APIKey: cfg.LiveKitAPIKey, APISecret: cfg.LiveKitSecret, TokenTTL: cfg.TokenTTL,
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
