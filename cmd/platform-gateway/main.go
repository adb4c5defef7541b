// Command platform-gateway runs the simulated calling platform (sim) as a process of its
// own, beside the media fleet: the control plane's Lambdas drive it through its signed
// control routes (shared/platform/simclient), people and tests through its /sim/ API,
// and it tells the control plane about its calls with signed notifications. Its parties
// join LiveKit rooms at the URL each dial or answer carries (the fleet's public URL).
//
// Environment:
//
//	CONTROL_PLANE_URL  the API's base URL; notifications go to $CONTROL_PLANE_URL/internal/platform/sim/events
//	SIM_SECRET         the secret both directions are signed with (template.yaml's SimSecret)
//	SIM_API_TOKEN      the credential the sim's own /sim/ API and page require (Bearer, or
//	                   Basic with it as the password); unset: /sim/ is not served
//	PORT               listen port (default 8090), on 127.0.0.1
//	LISTEN_ADDR        listen address instead of 127.0.0.1:$PORT (0.0.0.0:8090 in a container)
//	RING_DELAY         how long a dialled handle rings before it answers (Go duration, default 200ms)
//
// GET /healthz answers 200 for load balancer and container health checks.
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
	"strings"
	"syscall"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/shared/platform/simhook"
	"github.com/bridgeline/bridgeline/shared/redact"
)

func main() {
	log := slog.New(redact.Handler(slog.NewJSONHandler(os.Stderr, nil)))
	if err := run(log); err != nil {
		fmt.Fprintln(os.Stderr, "platform-gateway:", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	api := strings.TrimRight(os.Getenv("CONTROL_PLANE_URL"), "/")
	secret, token := os.Getenv("SIM_SECRET"), os.Getenv("SIM_API_TOKEN")
	if api == "" || secret == "" {
		return errors.New("set CONTROL_PLANE_URL and SIM_SECRET")
	}
	if token != "" && len(token) < 32 {
		return errors.New("SIM_API_TOKEN: must be at least 32 characters")
	}
	var ring time.Duration
	if v := os.Getenv("RING_DELAY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("RING_DELAY: not a positive duration: %q", v)
		}
		ring = d
	}
	addr := os.Getenv("LISTEN_ADDR")
	if addr == "" {
		port := os.Getenv("PORT")
		if port == "" {
			port = "8090"
		}
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	simulator, err := platformsim.New(platformsim.Config{NotifyURL: api + simhook.Path, Secret: secret, APIToken: token, RingDelay: ring, Log: log,
		ClientSDK: os.Getenv(platformsim.ClientSDKEnv)})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.Handle("/", simulator.GatewayHandler())
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	// Bounded like the local stack's server: a client that trickles its request or never
	// reads the answer does not hold a connection. A dial answers within the platform
	// client's 10 s; nothing the gateway serves streams.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Printf("platform-gateway: listening on http://%s/ (notifying %s)\n", ln.Addr(), api+simhook.Path)
	select {
	case err = <-served:
	case <-ctx.Done():
	}
	c, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	srv.Shutdown(c)
	if cerr := simulator.Close(c); cerr != nil {
		log.Warn("sim close", "err", cerr)
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
