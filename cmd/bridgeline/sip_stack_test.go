package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/livekitsip"
)

// `bridgeline dev` with its SIP bridge: Redis, livekit-server on it and livekit-sip on
// the given SIP port (UDP and TCP, 127.0.0.1), said in its output; stopping the stack
// stops them all.
func TestSIPBridgeOnTheStack(t *testing.T) {
	s := newTestStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	bin, err := livekitsip.ResolveBinary(ctx, os.Getenv("LIVEKIT_SIP_BIN"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("livekit-sip is required in CI (make deps builds it): %v", err)
		}
		t.Skipf("livekit-sip not available: %v", err)
	}
	port, err := livekitsip.FreeSIPPort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	rtp, err := livekitsip.FreeUDPRange(40)
	if err != nil {
		t.Fatal(err)
	}
	// The video bridge's ports too: its defaults (5080, 10200-10399) are one stack's per
	// machine, and a `make run` beside the test holds them.
	videoPort, err := livekitsip.FreeSIPPort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	videoRTP, err := livekitsip.FreeUDPRange(40)
	if err != nil {
		t.Fatal(err)
	}
	s.env = append(s.env, "LIVEKIT_SIP_BIN="+bin, "SIP_PORT="+strconv.Itoa(port), "SIP_RTP_PORTS="+strconv.Itoa(rtp)+"-"+strconv.Itoa(rtp+39),
		"SIP_VIDEO_PORT="+strconv.Itoa(videoPort), "SIP_VIDEO_RTP_PORTS="+strconv.Itoa(videoRTP)+"-"+strconv.Itoa(videoRTP+39))
	s.start()
	sipAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if !strings.Contains(s.logs(), "SIP bridge (livekit-sip) on "+sipAddr+", UDP and TCP") {
		t.Errorf("the stack does not say where the SIP bridge is:\n%s", s.logs())
	}
	if err := livekitsip.Options(ctx, sipAddr); err != nil {
		t.Fatalf("SIP OPTIONS to the stack's bridge: %v", err)
	}
	var data string
	for _, kv := range s.env {
		if v, ok := strings.CutPrefix(kv, "BRIDGELINE_DATA="); ok {
			data = v
		}
	}
	conf, err := os.ReadFile(filepath.Join(data, "redis", "redis.conf"))
	if err != nil {
		t.Fatal(err)
	}
	var redisAddr string
	for _, line := range strings.Split(string(conf), "\n") {
		if p, ok := strings.CutPrefix(line, "port "); ok {
			redisAddr = net.JoinHostPort("127.0.0.1", p)
		}
	}
	if c, err := net.Dial("tcp", redisAddr); err != nil {
		t.Errorf("the stack's Redis at %q: %v", redisAddr, err)
	} else {
		c.Close()
	}

	s.stop()
	if err := livekitsip.Options(ctx, sipAddr); err == nil {
		t.Error("the SIP bridge still answers after the stack stopped")
	}
	if c, err := net.Dial("tcp", redisAddr); err == nil {
		c.Close()
		t.Error("Redis still listens after the stack stopped")
	}
}
