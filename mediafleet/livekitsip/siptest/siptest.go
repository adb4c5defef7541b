// Package siptest starts the real SIP engine for a test: Redis, livekit-server on that
// Redis and livekit-sip beside it, all on free loopback ports, stopped when the test
// ends. A test without the binaries skips (fails in CI, where make deps builds them).
package siptest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/livekitserver"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver/livekittest"
	"github.com/bridgeline/bridgeline/mediafleet/livekitsip"
	"github.com/bridgeline/bridgeline/mediafleet/redisserver"
)

// Engine is a running SIP engine.
type Engine struct {
	Redis   *redisserver.Server
	LiveKit *livekitserver.Server
	SIP     *livekitsip.Server
}

// Options change what Start runs.
type Options struct {
	// LiveKit is livekit-server's config (webhooks, timeouts); keys, ports, Dir and
	// Redis are filled in.
	LiveKit livekitserver.Config
	// SIP is livekit-sip's; keys, Redis, ports and Dir are filled in, and WSURL when
	// empty (livekit-server's; set it to put a gateway between them).
	SIP livekitsip.Config
}

// Start runs the engine for t, or skips t under -short or without the binaries (outside
// CI).
func Start(t testing.TB, opts Options) *Engine {
	t.Helper()
	if testing.Short() {
		t.Skip("runs livekit-server, livekit-sip and Redis")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		need(t, "redis-server is not installed: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	bin, err := livekitsip.ResolveBinary(ctx, os.Getenv("LIVEKIT_SIP_BIN"))
	if err != nil {
		need(t, "livekit-sip is not available: %v", err)
	}
	e := &Engine{}
	dir := t.TempDir()
	e.Redis, err = redisserver.Start(context.Background(), redisserver.Config{Dir: dir + "/redis"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		e.Redis.Stop(c)
	})
	lk := opts.LiveKit
	lk.RedisAddress, lk.RedisPassword = e.Redis.Addr(), e.Redis.Password()
	e.LiveKit = livekittest.Start(t, lk)
	sc := opts.SIP
	cfg := e.LiveKit.Config()
	sc.Binary, sc.Dir = bin, dir+"/sip"
	sc.APIKey, sc.APISecret = cfg.APIKey, cfg.APISecret
	if sc.WSURL == "" {
		sc.WSURL = e.LiveKit.WSURL()
	}
	sc.RedisAddress, sc.RedisPassword = e.Redis.Addr(), e.Redis.Password()
	if sc.LogLevel == "" {
		sc.LogLevel = "debug"
	}
	if sc.Nice == 0 {
		sc.Nice = livekitsip.TestNice
	}
	e.SIP, err = livekitsip.Start(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	// Registered last, so run first: the bridge hangs its calls up before the server and
	// Redis go.
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := e.SIP.Stop(c); err != nil {
			t.Logf("stop livekit-sip: %v", err)
		}
		if t.Failed() {
			t.Logf("livekit-sip log tail:\n%s", e.SIP.LogTail(6000))
		}
	})
	return e
}

func need(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format+" (make deps installs it)", args...)
	}
	t.Skipf(format, args...)
}
