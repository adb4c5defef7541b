package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"
)

// startPprof serves Go's runtime profiles (heap, goroutines, CPU) on PPROF_ADDR when it
// is set, for the soak (soak/) and for finding what holds memory on a long-running local
// stack. Off by default; the address must be a loopback one, since profiles show
// internals and a CPU profile costs the process. It stops with ctx.
func startPprof(ctx context.Context, log *slog.Logger) error {
	addr := os.Getenv("PPROF_ADDR")
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("PPROF_ADDR: %w", err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("PPROF_ADDR: %q is not a loopback address", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("PPROF_ADDR: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: loopbackOnly(mux), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("pprof server", "err", err)
		}
	}()
	context.AfterFunc(ctx, func() { srv.Close() })
	log.Info("pprof on", "addr", ln.Addr().String())
	return nil
}
