// Package livekittest starts a real livekit-server for a test and stops it when the test
// ends.
package livekittest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/livekitserver"
)

// Start runs livekit-server on free 127.0.0.1 ports with fresh keys. cfg may set webhook
// URLs and timeouts; its keys, ports and Dir are filled in when empty. The server is
// stopped in t.Cleanup: drained for up to a second (livekit-server looks for remaining
// participants only every 5 s, and a test has no use for a long drain), then forced.
// Under -short (`make check`, which starts no server) it skips the test instead.
func Start(t testing.TB, cfg livekitserver.Config) *livekitserver.Server {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: needs livekit-server")
	}
	if cfg.APIKey == "" {
		cfg.APIKey = "APItest" + randHex(6)
		cfg.APISecret = randHex(32)
	}
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	if cfg.Binary == "" {
		cfg.Binary = os.Getenv("LIVEKIT_SERVER_BIN")
	}
	// The process lives until Cleanup stops it, so it gets a background context.
	s, err := livekitserver.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start livekit-server: %v", err)
	}
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := s.Stop(stopCtx); err != nil {
			t.Logf("stop livekit-server: %v\n%s", err, s.LogTail(2048))
		}
		if t.Failed() {
			t.Logf("livekit-server log tail:\n%s", s.LogTail(4096))
		}
	})
	return s
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)[:n]
}

// FreePort is a port free on 127.0.0.1 for network "tcp" or "udp", for the servers a test
// starts (a stack's API, livekit-server's RTC ports).
func FreePort(t testing.TB, network string) int {
	t.Helper()
	find := livekitserver.FreeTCPPort
	if network == "udp" {
		find = livekitserver.FreeUDPPort
	}
	port, err := find("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return port
}
