// Command call-us is a customer's "call us" button, end to end: a web page with a "Call
// us" button that starts a video call with the customer's team, a "Talk to our assistant"
// button that starts a web call with its Bridgeline assistant, and this small backend
// behind them. The backend holds the Bridgeline API key and starts a hosted session per
// click (POST /v1/sessions: dialling CALL_US_HANDLE, or a web call with
// CALL_US_ASSISTANT_ID); the page joins the session's room with the LiveKit browser SDK
// using only the returned rtc_url and participant_token, turns on the camera and
// microphone, shows and meters the other side and our microphone, shows the assistant's
// live captions, and hangs up.
//
//	BRIDGELINE_API_KEY=sk_test_... CALL_US_HANDLE=+15550142000 CALL_US_ASSISTANT_ID=asst_... go run ./examples/call-us
//
// See README.md beside this file.
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
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "call-us:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := ConfigFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: NewServer(cfg, log).Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Printf("call-us: open http://%s (Call us: %q, Talk to our assistant: %q, through %s)\n", ln.Addr(), cfg.Handle, cfg.AssistantID, cfg.APIURL)
	select {
	case <-ctx.Done():
	case err := <-errc:
		return err
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
