package livekitserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/internal/childproc"
	"github.com/bridgeline/bridgeline/shared/freeport"
)

// Server is a running livekit-server process.
type Server struct {
	cfg     Config
	proc    *childproc.Process
	tmpDir  bool
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
	bin, err := ResolveBinary(ctx, cfg.Binary)
	if err != nil {
		return nil, err
	}
	if err := cfg.choosePorts(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg}
	if s.cfg.Dir, s.tmpDir, err = childproc.Folder(cfg.Dir, "livekit"); err != nil {
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
	if s.proc, err = childproc.Start(bin, []string{"--config", confPath}, nil, filepath.Join(s.cfg.Dir, "livekit-server.log")); err != nil {
		return nil, fmt.Errorf("livekit: %w", err)
	}
	if err := s.waitReady(ctx); err != nil {
		s.proc.Kill()
		return nil, fmt.Errorf("%w\n%s", err, s.LogTail(4096))
	}
	s.proc.KillWith(ctx)
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
		case <-s.proc.Done():
			return fmt.Errorf("livekit: server exited before it was ready: %v", s.proc.Err())
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
func (s *Server) LogPath() string { return s.proc.LogPath() }

// LogTail returns up to the last n bytes of the server log.
func (s *Server) LogTail(n int64) string { return s.proc.LogTail(n) }

// CPUTime is the CPU time (user and system) the server process has used so far, read
// from /proc at the kernel's clock-tick resolution (10 ms); zero where /proc has no
// such process.
func (s *Server) CPUTime() time.Duration { return s.proc.CPUTime() }

// RSS is the server process's resident memory in bytes.
func (s *Server) RSS() int64 { return s.proc.RSS() }

// Done is closed when the process has exited.
func (s *Server) Done() <-chan struct{} { return s.proc.Done() }

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
	case <-s.proc.Done():
		return nil
	default:
	}
	if wait := signalGrace - time.Since(s.readyAt); wait > 0 {
		time.Sleep(wait)
	}
	if !s.proc.Stop(ctx, syscall.SIGTERM, syscall.SIGTERM) {
		return errors.New("livekit: server did not stop; killed")
	}
	return nil
}

// ResolveBinary finds livekit-server: bin when set (what the program read from $LIVEKIT_SERVER_BIN), else
// the repository's build script's (which builds once and caches).
func ResolveBinary(ctx context.Context, bin string) (string, error) {
	bin, err := childproc.Resolve(ctx, bin, "build-livekit-server.sh")
	if err != nil {
		return "", fmt.Errorf("livekit: %w", err)
	}
	return bin, nil
}

// RepoRoot walks up from the working directory to the folder holding this module's
// go.mod.
func RepoRoot() (string, error) { return childproc.RepoRoot() }

func (c *Config) choosePorts() error {
	var err error
	if c.Port == 0 {
		if c.Port, err = FreeTCPPort(c.Host); err != nil {
			return err
		}
	}
	if c.RTCTCPPort == 0 {
		if c.RTCTCPPort, err = FreeTCPPort(c.Host); err != nil { // never Port: freeport gives no port twice
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

// FreeTCPPort is a TCP port free on host now, below the ephemeral ports (freeport).
func FreeTCPPort(host string) (int, error) { return freeport.TCP(host) }

// FreeUDPPort is a UDP port free on host now, below the ephemeral ports (freeport).
func FreeUDPPort(host string) (int, error) { return freeport.UDP(host) }
