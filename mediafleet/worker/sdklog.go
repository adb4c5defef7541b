package worker

import (
	"context"
	"log/slog"

	"github.com/go-logr/logr"
	protoLogger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"
)

// SetSDKLogger routes the LiveKit SDK's logging (process-wide) into log, warnings and
// up; its default writes every connection step to stderr.
func SetSDKLogger(log *slog.Logger) {
	h := log.With("component", "lksdk").Handler()
	lksdk.SetLogger(protoLogger.LogRLogger(logr.FromSlogHandler(minLevel{h, slog.LevelWarn})))
}

// minLevel drops records below level.
type minLevel struct {
	slog.Handler
	level slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.level && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(a), m.level}
}

func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{m.Handler.WithGroup(name), m.level}
}
