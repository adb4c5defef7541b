package redisserver_test

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/redisserver"
)

func TestStartRequiresAuthAndStops(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is required in CI (scripts/install-media-deps.sh installs it)")
		}
		t.Skip("redis-server not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := redisserver.Start(ctx, redisserver.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.Addr(), "127.0.0.1:") || len(s.Password()) < 32 {
		t.Errorf("Addr() = %q, Password() of %d characters; want loopback and a long random password", s.Addr(), len(s.Password()))
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping() = %v", err)
	}
	// Without AUTH, Redis refuses commands.
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte("*1\r\n$4\r\nPING\r\n"))
	line, err := bufio.NewReader(c).ReadString('\n')
	c.Close()
	if err != nil || !strings.HasPrefix(line, "-NOAUTH") {
		t.Errorf("PING without AUTH = %q, %v; want -NOAUTH", line, err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop() = %v", err)
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("redis-server still running after Stop")
	}
	if c, err := net.Dial("tcp", s.Addr()); err == nil {
		c.Close()
		t.Error("redis-server still listening after Stop")
	}
}
