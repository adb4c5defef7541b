package redact

import (
	"context"
	"fmt"
	"log/slog"
)

// Handler wraps h so that no phone number reaches the log: the message and every string,
// error and Stringer attribute (in groups too) go through Numbers. Every process's logger
// is built with it (the local stack, each Lambda, the SIP and platform gateways, the
// persona worker), so a number in an error's text or a field nobody thought of is masked
// as well as the fields that name one (from, to, handle, destination: Number).
func Handler(h slog.Handler) slog.Handler { return maskHandler{h} }

type maskHandler struct{ h slog.Handler }

func (m maskHandler) Enabled(ctx context.Context, l slog.Level) bool { return m.h.Enabled(ctx, l) }

func (m maskHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, Numbers(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(maskAttr(a))
		return true
	})
	return m.h.Handle(ctx, out)
}

func (m maskHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	masked := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		masked[i] = maskAttr(a)
	}
	return maskHandler{m.h.WithAttrs(masked)}
}

func (m maskHandler) WithGroup(name string) slog.Handler { return maskHandler{m.h.WithGroup(name)} }

func maskAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Numbers(v.String()))
	case slog.KindGroup:
		g := v.Group()
		masked := make([]any, len(g))
		for i, ga := range g {
			masked[i] = maskAttr(ga)
		}
		return slog.Group(a.Key, masked...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, Numbers(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, Numbers(x.String()))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
