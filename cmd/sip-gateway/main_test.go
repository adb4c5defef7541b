package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

// env is a complete configuration, overridden per case.
func env(over map[string]string) func(string) string {
	base := map[string]string{"LIVEKIT_URL": "wss://media.example.test", "LIVEKIT_API_KEY": "APIkey",
		"LIVEKIT_API_SECRET": strings.Repeat("s", 32), "CONTROL_PLANE_URL": "https://api.example.test/",
		"SIP_SECRET": strings.Repeat("k", 32), "LISTEN_ADDR": "127.0.0.1:0"}
	for k, v := range over {
		base[k] = v
	}
	return func(k string) string { return base[k] }
}

// A missing or malformed setting stops the gateway with an error naming it.
func TestConfigRefusesBadSettings(t *testing.T) {
	for _, tc := range []struct {
		over map[string]string
		want string
	}{
		{map[string]string{"SIP_SECRET": "", "LIVEKIT_URL": ""}, "set LIVEKIT_URL, SIP_SECRET"},
		{map[string]string{"SIP_SECRET": "short"}, "SIP_SECRET: must be at least 32"},
		{map[string]string{"CONTROL_PLANE_URL": "api.example.test"}, "CONTROL_PLANE_URL: want an http(s) URL"},
		{map[string]string{"LISTEN_ADDR": "8091"}, "LISTEN_ADDR"},
		{map[string]string{"DRAIN_SECONDS": "-1"}, "DRAIN_SECONDS"},
		{map[string]string{"LIVEKIT_URL": "media.example.test"}, "LiveKit URL"},
	} {
		err := run(context.Background(), env(tc.over), slog.New(slog.DiscardHandler), func(string, string) {})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run with %v = %v, want an error with %q", tc.over, err, tc.want)
		}
	}
}

// The gateway notifies the control plane's SIP receiver, answers its health check on
// the address it listens on, and stops when told to.
func TestServesUntilStopped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	type started struct{ addr, notify string }
	up := make(chan started, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, env(nil), slog.New(slog.DiscardHandler), func(addr, notify string) { up <- started{addr, notify} })
	}()
	var s started
	select {
	case s = <-up:
	case err := <-done:
		t.Fatalf("run = %v before listening", err)
	case <-time.After(10 * time.Second):
		t.Fatal("not listening after 10 s")
	}
	if s.notify != "https://api.example.test/internal/platform/sip/events" {
		t.Errorf("notifies %s, want the control plane's SIP receiver", s.notify)
	}
	if !strings.HasPrefix(s.addr, "127.0.0.1:") {
		t.Errorf("listens on %s, want loopback", s.addr)
	}
	if err := health(env(map[string]string{"LISTEN_ADDR": s.addr})); err != nil {
		t.Errorf("health check = %v, want nil", err)
	}
	resp, err := http.Get("http://" + s.addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz = %d, want 200", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run after stop = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10 s after the stop")
	}
	if err := health(env(map[string]string{"LISTEN_ADDR": s.addr})); err == nil {
		t.Error("health check of a stopped gateway = nil, want an error")
	}
}
