// Command sip-gateway runs the SIP platform's gateway (mediafleet/sipgateway) as a
// process of its own, beside livekit-sip on each SIP node (infra/sip-fleet.yaml, a
// sidecar in the bridge's task): livekit-sip's ws_url points at it, it passes the
// bridge's room joins through to livekit-server, holds an inbound call's join while the
// control plane routes the call, and tells the control plane how each call goes, with
// notifications signed with the SIP secret.
//
// Environment:
//
//	LIVEKIT_URL         livekit-server, where joins go on (wss://... the LiveKit fleet's PublicURL)
//	LIVEKIT_API_KEY     LiveKit's API key and secret: the bridge's join tokens verify with them
//	LIVEKIT_API_SECRET
//	CONTROL_PLANE_URL   the API's base URL; notifications go to $CONTROL_PLANE_URL/internal/platform/sip/events
//	SIP_SECRET          the secret notifications are signed with (template.yaml's SIPSecret)
//	LISTEN_ADDR         listen address (default 127.0.0.1:8091: only the bridge on the same host joins through it)
//
// GET /healthz answers 200; `sip-gateway health` asks it (at LISTEN_ADDR) and exits 0
// when it answers 200, 1 otherwise: the container's health check. On SIGTERM it stops
// taking new connections and keeps the open ones for up to DRAIN_SECONDS (default 30):
// in the fleet's task livekit-sip, which depends on it, has stopped (drained) first.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/sipgateway"
	"github.com/bridgeline/bridgeline/shared/platform/sip"
	"github.com/bridgeline/bridgeline/shared/redact"
)

// defaultListen is where the bridge on the same host reaches the gateway.
const defaultListen = "127.0.0.1:8091"

func main() {
	if len(os.Args) == 2 && os.Args[1] == "health" {
		if err := health(os.Getenv); err != nil {
			fmt.Fprintln(os.Stderr, "sip-gateway health:", err)
			os.Exit(1)
		}
		return
	}
	log := slog.New(redact.Handler(slog.NewJSONHandler(os.Stderr, nil)))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv, log, func(addr, notify string) {
		fmt.Printf("sip-gateway: listening on http://%s/ (notifying %s)\n", addr, notify)
	}); err != nil {
		fmt.Fprintln(os.Stderr, "sip-gateway:", err)
		os.Exit(1)
	}
}

// config is the gateway's configuration read from the environment: a missing or
// malformed variable is an error naming it.
func config(getenv func(string) string, log *slog.Logger) (sipgateway.Config, string, time.Duration, error) {
	api := strings.TrimRight(getenv("CONTROL_PLANE_URL"), "/")
	cfg := sipgateway.Config{LiveKitURL: getenv("LIVEKIT_URL"), APIKey: getenv("LIVEKIT_API_KEY"),
		APISecret: getenv("LIVEKIT_API_SECRET"), NotifyURL: api + sip.Path, Secret: getenv("SIP_SECRET"), Log: log}
	var missing []string
	for _, v := range []struct{ name, val string }{{"LIVEKIT_URL", cfg.LiveKitURL}, {"LIVEKIT_API_KEY", cfg.APIKey},
		{"LIVEKIT_API_SECRET", cfg.APISecret}, {"CONTROL_PLANE_URL", api}, {"SIP_SECRET", cfg.Secret}} {
		if v.val == "" {
			missing = append(missing, v.name)
		}
	}
	if len(missing) > 0 {
		return cfg, "", 0, fmt.Errorf("set %s", strings.Join(missing, ", "))
	}
	if !strings.HasPrefix(api, "https://") && !strings.HasPrefix(api, "http://") {
		return cfg, "", 0, fmt.Errorf("CONTROL_PLANE_URL: want an http(s) URL, not %q", api)
	}
	if len(cfg.Secret) < 32 {
		return cfg, "", 0, errors.New("SIP_SECRET: must be at least 32 characters")
	}
	addr := getenv("LISTEN_ADDR")
	if addr == "" {
		addr = defaultListen
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return cfg, "", 0, fmt.Errorf("LISTEN_ADDR: %w", err)
	}
	drain := 30 * time.Second
	if v := getenv("DRAIN_SECONDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return cfg, "", 0, fmt.Errorf("DRAIN_SECONDS: not a whole number of seconds: %q", v)
		}
		drain = time.Duration(n) * time.Second
	}
	return cfg, addr, drain, nil
}

// health asks the gateway at LISTEN_ADDR for /healthz: nil when it answers 200.
func health(getenv func(string) string) error {
	addr := getenv("LISTEN_ADDR")
	if addr == "" {
		addr = defaultListen
	}
	c := &http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get("http://" + addr + "/healthz")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /healthz: %s", resp.Status)
	}
	return nil
}

// run serves the gateway until ctx ends, then drains; listening reports the address.
func run(ctx context.Context, getenv func(string) string, log *slog.Logger, listening func(addr, notify string)) error {
	cfg, addr, drain, err := config(getenv, log)
	if err != nil {
		return err
	}
	gw, err := sipgateway.New(cfg)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.Handle("/", gw.Handler())
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		gw.Close()
		return err
	}
	// A signal connection lives as long as its call: no read or write timeout; only the
	// headers of a request are bounded.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	listening(ln.Addr().String(), cfg.NotifyURL)
	select {
	case err = <-served:
	case <-ctx.Done():
	}
	// Shutdown does not wait for hijacked (WebSocket) connections: the drain does, then
	// Close drops what is left and waits for the notifications in flight.
	c, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	srv.Shutdown(c)
	gw.Drain(c)
	gw.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
