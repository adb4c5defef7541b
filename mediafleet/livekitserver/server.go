package livekitserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Server is a running livekit-server process.
type Server struct {
	cfg     Config
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
	tmpDir  bool
	logPath string
	readyAt time.Time
}

// signalGrace is how long livekit-server ignores a shutdown signal after it starts
// answering HTTP: it marks itself running only after a fixed 100 ms pause, and a SIGTERM
// before that is dropped (pkg/service/server.go; unchanged from v1.8.4 to v1.11.0).
const signalGrace = 200 * time.Millisecond

// Start writes the config, starts livekit-server and returns once it answers HTTP on its
// port. Zero ports in cfg are chosen free on the bind address. The process ends with ctx
// (a hard kill); Stop drains it first.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	bin := cfg.Binary
	if bin == "" {
		var err error
		if bin, err = ResolveBinary(ctx); err != nil {
			return nil, err
		}
	}
	if err := cfg.choosePorts(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, done: make(chan struct{})}
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "livekit-")
		if err != nil {
			return nil, fmt.Errorf("livekit: %w", err)
		}
		s.cfg.Dir, s.tmpDir = dir, true
	} else if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("livekit: %w", err)
	}
	body, err := s.cfg.YAML()
	if err != nil {
		return nil, err
	}
	confPath := filepath.Join(s.cfg.Dir, "livekit.yaml")
	if err := os.WriteFile(confPath, body, 0o600); err != nil {
		return nil, fmt.Errorf("livekit: %w", err)
	}
	s.logPath = filepath.Join(s.cfg.Dir, "livekit-server.log")
	logFile, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("livekit: %w", err)
	}
	// Not CommandContext: Stop must be able to send SIGTERM and wait for the drain.
	s.cmd = exec.Command(bin, "--config", confPath)
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	// Its own process group, so a Ctrl-C in the terminal reaches only the parent, which
	// then stops the server in order.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("livekit: start %s: %w", bin, err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		logFile.Close()
		close(s.done)
	}()
	if err := s.waitReady(ctx); err != nil {
		s.kill()
		return nil, fmt.Errorf("%w\n%s", err, s.LogTail(4096))
	}
	go func() {
		select {
		case <-ctx.Done():
			s.kill()
		case <-s.done:
		}
	}()
	return s, nil
}

func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.HTTPURL()+"/", nil)
		if resp, err := client.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				s.readyAt = time.Now()
				return nil
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("livekit: server exited before it was ready: %v", s.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("livekit: server not ready at %s: %w", s.HTTPURL(), ctx.Err())
		case <-tick.C:
		}
	}
}

// Config returns the config the server runs with, ports filled in.
func (s *Server) Config() Config { return s.cfg }

// HTTPURL is the server API base (Twirp room service): http://host:port.
func (s *Server) HTTPURL() string {
	return "http://" + net.JoinHostPort(s.cfg.Host, fmt.Sprint(s.cfg.Port))
}

// WSURL is what clients connect to: ws://host:port.
func (s *Server) WSURL() string {
	return "ws://" + net.JoinHostPort(s.cfg.Host, fmt.Sprint(s.cfg.Port))
}

// LogPath is the file the server's output goes to.
func (s *Server) LogPath() string { return s.logPath }

// LogTail returns up to the last n bytes of the server log.
func (s *Server) LogTail(n int64) string {
	f, err := os.Open(s.logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		f.Seek(st.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// CPUTime is the CPU time (user and system) the server process has used so far, read
// from /proc at the kernel's clock-tick resolution (10 ms); zero where /proc has no
// such process.
func (s *Server) CPUTime() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces, inside parentheses):
	// state is field 3, utime field 14 and stime field 15.
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// Done is closed when the process has exited.
func (s *Server) Done() <-chan struct{} { return s.done }

// Stop asks the server to drain (SIGTERM: it waits for participants to leave), forces it
// (a second SIGTERM) when ctx ends, and kills it if that does not work either. It
// removes a temporary Dir.
func (s *Server) Stop(ctx context.Context) error {
	defer func() {
		if s.tmpDir {
			os.RemoveAll(s.cfg.Dir)
		}
	}()
	select {
	case <-s.done:
		return nil
	default:
	}
	if wait := signalGrace - time.Since(s.readyAt); wait > 0 {
		time.Sleep(wait)
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return nil
	case <-time.After(5 * time.Second):
	}
	s.kill()
	return errors.New("livekit: server did not stop; killed")
}

func (s *Server) kill() {
	s.cmd.Process.Kill()
	<-s.done
}

// ResolveBinary finds livekit-server: $LIVEKIT_SERVER_BIN, else the repository's build
// script (which builds once and caches).
func ResolveBinary(ctx context.Context) (string, error) {
	if p := os.Getenv("LIVEKIT_SERVER_BIN"); p != "" {
		return p, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "build-livekit-server.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("livekit: build-livekit-server.sh: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
}

// RepoRoot walks up from the working directory to the folder holding this module's
// go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/bridgeline/bridgeline\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("livekit: repository root not found above the working directory")
		}
		dir = parent
	}
}

func (c *Config) choosePorts() error {
	var err error
	if c.Port == 0 {
		if c.Port, err = FreeTCPPort(c.Host); err != nil {
			return err
		}
	}
	if c.RTCTCPPort == 0 {
		if c.RTCTCPPort, err = FreeTCPPort(c.Host); err != nil {
			return err
		}
	}
	if c.RTCUDPPort == 0 {
		if c.RTCUDPPort, err = FreeUDPPort(c.Host); err != nil {
			return err
		}
	}
	return nil
}

// FreeTCPPort is a TCP port free on host now (the listener that found it is closed).
func FreeTCPPort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("livekit: free tcp port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// FreeUDPPort is a UDP port free on host now.
func FreeUDPPort(host string) (int, error) {
	c, err := net.ListenPacket("udp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("livekit: free udp port: %w", err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port, nil
}
