// Package redisserver runs a real redis-server for the local stack and for tests: the
// Redis that livekit-server and livekit-sip share (room routing, agent dispatch, SIP
// trunks and dispatch rules, and the psrpc bus between the two). It listens on loopback
// only, requires AUTH with a password made per start, keeps nothing on disk, and stops
// when Stop is called or its parent dies.
package redisserver

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/internal/childproc"
)

// Config is what a local Redis needs; every field has a default.
type Config struct {
	// Binary is the redis-server executable; empty: redis-server on PATH (Debian's
	// redis-server package, which scripts/install-media-deps.sh installs).
	Binary string
	// Dir holds the log; empty: a temporary directory removed by Stop.
	Dir string
	// Host is the bind address; default 127.0.0.1.
	Host string
	// Port is the TCP port; zero picks a free one.
	Port int
	// Password is the AUTH password; empty makes a random one.
	Password string
}

// Server is a running redis-server.
type Server struct {
	cfg    Config
	proc   *childproc.Process
	tmpDir bool
}

// Start runs redis-server and returns once it answers an authenticated PING.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.Binary == "" {
		bin, err := exec.LookPath("redis-server")
		if err != nil {
			return nil, errors.New("redis: redis-server not found (scripts/install-media-deps.sh installs it)")
		}
		cfg.Binary = bin
	}
	if cfg.Password == "" {
		b := make([]byte, 24)
		rand.Read(b)
		cfg.Password = hex.EncodeToString(b)
	}
	if cfg.Port == 0 {
		l, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, "0"))
		if err != nil {
			return nil, fmt.Errorf("redis: free port: %w", err)
		}
		cfg.Port = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	s := &Server{cfg: cfg}
	var err error
	if s.cfg.Dir, s.tmpDir, err = childproc.Folder(cfg.Dir, "redis"); err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	// The password goes through a config file (0600), not the command line, which every
	// local user can read in /proc.
	conf := strings.Join([]string{
		"bind " + s.cfg.Host,
		"port " + strconv.Itoa(s.cfg.Port),
		"requirepass " + s.cfg.Password,
		`save ""`,
		"appendonly no",
		"dir " + s.cfg.Dir,
		"protected-mode yes",
	}, "\n") + "\n"
	confPath := filepath.Join(s.cfg.Dir, "redis.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	if s.proc, err = childproc.Start(s.cfg.Binary, []string{confPath}, nil, filepath.Join(s.cfg.Dir, "redis.log")); err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	if err := s.waitReady(ctx); err != nil {
		s.proc.Kill()
		return nil, fmt.Errorf("%w\n%s", err, s.proc.LogTail(2048))
	}
	return s, nil
}

func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		err := s.Ping(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-s.proc.Done():
			return fmt.Errorf("redis: exited before it was ready: %v", s.proc.Err())
		case <-ctx.Done():
			return fmt.Errorf("redis: not ready at %s: %v", s.Addr(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Ping sends AUTH and PING over a new connection and wants +OK and +PONG.
func (s *Server) Ping(ctx context.Context) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", s.Addr())
	if err != nil {
		return err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	fmt.Fprintf(c, "*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n*1\r\n$4\r\nPING\r\n", len(s.cfg.Password), s.cfg.Password)
	r := bufio.NewReader(c)
	for _, want := range []string{"+OK", "+PONG"} {
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if got := strings.TrimSpace(line); got != want {
			return fmt.Errorf("redis: answered %q, want %q", got, want)
		}
	}
	return nil
}

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.cfg.Port)) }

// Password is the AUTH password.
func (s *Server) Password() string { return s.cfg.Password }

// Done is closed when the process has exited.
func (s *Server) Done() <-chan struct{} { return s.proc.Done() }

// Stop ends redis-server (SIGTERM; nothing to save) and removes a temporary Dir.
func (s *Server) Stop(ctx context.Context) error {
	defer func() {
		if s.tmpDir {
			os.RemoveAll(s.cfg.Dir)
		}
	}()
	if !s.proc.Stop(ctx, syscall.SIGTERM, syscall.SIGKILL) {
		return errors.New("redis: did not stop; killed")
	}
	return nil
}
