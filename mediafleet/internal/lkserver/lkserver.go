// Package lkserver starts a real livekit-server for the media fleet's tests: loopback
// only, random free ports, room auto-creation off, one API key.
//
// It is a stopgap until the shared launcher in mediafleet/livekit lands.
package lkserver

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Server is a running livekit-server.
type Server struct {
	URL       string // ws://127.0.0.1:port
	HTTPURL   string // http://127.0.0.1:port
	APIKey    string
	APISecret string
	cmd       *exec.Cmd
	log       *bytes.Buffer
}

// Start builds (once) and starts livekit-server; the test's cleanup stops it.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin := Binary(tb)
	port, tcpPort := freeTCP(tb), freeTCP(tb)
	udpPort := freeUDP(tb)
	s := &Server{
		URL:       fmt.Sprintf("ws://127.0.0.1:%d", port),
		HTTPURL:   fmt.Sprintf("http://127.0.0.1:%d", port),
		APIKey:    "APItest",
		APISecret: "test-secret-test-secret-test-secret-0123",
		log:       &bytes.Buffer{},
	}
	conf := fmt.Sprintf(`port: %d
bind_addresses: ["127.0.0.1"]
rtc:
  tcp_port: %d
  udp_port: %d
  use_external_ip: false
  node_ip: 127.0.0.1
  enable_loopback_candidate: true
keys:
  %s: %s
room:
  auto_create: false
  empty_timeout: 30
  departure_timeout: 5
logging:
  level: warn
`, port, tcpPort, udpPort, s.APIKey, s.APISecret)
	dir := tb.TempDir()
	path := filepath.Join(dir, "livekit.yaml")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		tb.Fatal(err)
	}
	s.cmd = exec.Command(bin, "--config", path)
	s.cmd.Stdout = s.log
	s.cmd.Stderr = s.log
	if err := s.cmd.Start(); err != nil {
		tb.Fatalf("start livekit-server: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	tb.Cleanup(func() {
		_ = s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-exited
		}
		if tb.Failed() && os.Getenv("LIVEKIT_LOG") != "" {
			tb.Logf("livekit-server log:\n%s", s.log.String())
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.HTTPURL+"/", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case err := <-exited:
			tb.Fatalf("livekit-server exited: %v\n%s", err, s.log.String())
		case <-ctx.Done():
			tb.Fatalf("livekit-server did not come up\n%s", s.log.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Binary returns the path of the pinned livekit-server build, building it on first use.
func Binary(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("LIVEKIT_SERVER_BIN"); p != "" {
		return p
	}
	root := repoRoot(tb)
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "build-livekit-server.sh"))
	cmd.Dir = root
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("build livekit-server: %v\n%s", err, errb.String())
	}
	return strings.TrimSpace(string(out))
}

func repoRoot(tb testing.TB) string {
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}

func freeTCP(tb testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func freeUDP(tb testing.TB) int {
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}
