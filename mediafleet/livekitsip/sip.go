package livekitsip

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/internal/childproc"
	"github.com/bridgeline/bridgeline/shared/freeport"
	"github.com/bridgeline/bridgeline/shared/redact"
)

// Server is a running livekit-sip process.
type Server struct {
	cfg    Config
	proc   *childproc.Process
	tmpDir bool
}

// Start writes the config, starts livekit-sip and returns once it answers a SIP OPTIONS
// on its UDP port (it opens SIP only after it has connected to Redis). Zero ports in cfg
// are chosen free. The process ends with ctx (a hard kill); Stop drains it first.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	bin, err := ResolveBinary(ctx, cfg.Binary)
	if err != nil {
		return nil, err
	}
	if cfg.SIPPort == 0 {
		p, err := FreeSIPPort(cfg.Host)
		if err != nil {
			return nil, err
		}
		cfg.SIPPort = p
	}
	if cfg.RTPPortStart == 0 {
		start, err := FreeUDPRange(DefaultRTPPorts)
		if err != nil {
			return nil, err
		}
		cfg.RTPPortStart, cfg.RTPPortEnd = start, start+DefaultRTPPorts-1
	}
	s := &Server{cfg: cfg}
	if s.cfg.Dir, s.tmpDir, err = childproc.Folder(cfg.Dir, "livekit-sip"); err != nil {
		return nil, fmt.Errorf("livekit-sip: %w", err)
	}
	body, err := s.cfg.YAML()
	if err != nil {
		return nil, err
	}
	confPath := filepath.Join(s.cfg.Dir, "livekit-sip.yaml")
	if err := os.WriteFile(confPath, body, 0o600); err != nil {
		return nil, fmt.Errorf("livekit-sip: %w", err)
	}
	// SIP_CONFIG_BODY in the environment would win over --config: the child gets the
	// environment it would inherit (exec's), without it.
	env := slices.DeleteFunc(exec.Command(bin).Environ(), func(kv string) bool { return strings.HasPrefix(kv, "SIP_CONFIG") })
	args := []string{"--config", confPath}
	if cfg.Nice != 0 {
		// nice(1) adds to the caller's niceness; the kernel's getpriority is 20-nice.
		prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
		if err != nil {
			return nil, fmt.Errorf("livekit-sip: niceness: %w", err)
		}
		if adj := cfg.Nice - (20 - prio); adj != 0 {
			nice, err := exec.LookPath("nice")
			if err != nil {
				return nil, fmt.Errorf("livekit-sip: %w", err)
			}
			bin, args = nice, append([]string{"-n", strconv.Itoa(adj), bin}, args...)
		}
	}
	// livekit-sip logs the numbers of every call at info level (fromUser, toUser, the
	// SIP URIs): each line is masked (redact.Numbers) before it reaches the log, which
	// keeps its warnings and errors, where a level cut-off would lose them.
	if s.proc, err = childproc.StartFiltered(bin, args, env, filepath.Join(s.cfg.Dir, "livekit-sip.log"), redact.Numbers); err != nil {
		return nil, fmt.Errorf("livekit-sip: %w", err)
	}
	if err := s.waitReady(ctx); err != nil {
		s.proc.Kill()
		s.removeTmp()
		return nil, fmt.Errorf("%w\n%s", err, s.LogTail(4096))
	}
	s.proc.KillWith(ctx)
	return s, nil
}

// waitReady returns once livekit-sip answers OPTIONS over UDP and accepts a TCP
// connection: it opens its TCP listener a moment after the UDP one, and a phone that
// dials over TCP in between is refused.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		err := Options(ctx, s.SIPAddr())
		if err == nil {
			var c net.Conn
			if c, err = (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", s.SIPAddr()); err == nil {
				c.Close()
				return nil
			}
		}
		select {
		case <-s.proc.Done():
			return fmt.Errorf("livekit-sip: exited before it was ready: %v", s.proc.Err())
		case <-ctx.Done():
			return fmt.Errorf("livekit-sip: not ready at %s (SIP OPTIONS over UDP, then TCP): %v", s.SIPAddr(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Options sends one SIP OPTIONS over UDP to addr and wants a 200 OK within a second:
// what a SIP provider's health probe does.
func Options(ctx context.Context, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "udp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	local := c.LocalAddr().String()
	id := randHex(8)
	req := "OPTIONS sip:" + addr + " SIP/2.0\r\n" +
		"Via: SIP/2.0/UDP " + local + ";rport;branch=z9hG4bK" + id + "\r\n" +
		"Max-Forwards: 70\r\n" +
		"From: <sip:probe@" + local + ">;tag=" + id + "\r\n" +
		"To: <sip:" + addr + ">\r\n" +
		"Call-ID: " + id + "@bridgeline\r\n" +
		"CSeq: 1 OPTIONS\r\n" +
		"Content-Length: 0\r\n\r\n"
	if _, err := c.Write([]byte(req)); err != nil {
		return err
	}
	buf := make([]byte, 4096)
	n, err := c.Read(buf)
	if err != nil {
		return err
	}
	status, _, _ := strings.Cut(string(buf[:n]), "\r\n")
	if !strings.HasPrefix(status, "SIP/2.0 200") {
		return fmt.Errorf("OPTIONS answered %q", status)
	}
	return nil
}

// Config returns the config the bridge runs with, ports filled in.
func (s *Server) Config() Config { return s.cfg }

// SIPAddr is host:port where phones and trunks send SIP (UDP and TCP).
func (s *Server) SIPAddr() string { return net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.cfg.SIPPort)) }

// LogPath is the file the bridge's output goes to.
func (s *Server) LogPath() string { return s.proc.LogPath() }

// LogTail returns up to the last n bytes of the log.
func (s *Server) LogTail(n int64) string { return s.proc.LogTail(n) }

// PID is the bridge's process id.
func (s *Server) PID() int { return s.proc.PID() }

// CPUTime is the CPU time the bridge has used so far (10 ms resolution).
func (s *Server) CPUTime() time.Duration { return s.proc.CPUTime() }

// RSS is the bridge's resident memory in bytes.
func (s *Server) RSS() int64 { return s.proc.RSS() }

// Done is closed when the process has exited.
func (s *Server) Done() <-chan struct{} { return s.proc.Done() }

// Stop asks the bridge to drain (SIGTERM: it stops taking calls and waits for the ones
// in progress, checking every 5 s), ends every call (SIGINT) when ctx ends, and kills it
// if that does not work either. It removes a temporary Dir.
func (s *Server) Stop(ctx context.Context) error {
	defer s.removeTmp()
	if !s.proc.Stop(ctx, syscall.SIGTERM, syscall.SIGINT) {
		return errors.New("livekit-sip: did not stop; killed")
	}
	return nil
}

func (s *Server) removeTmp() {
	if s.tmpDir {
		os.RemoveAll(s.cfg.Dir)
	}
}

// ResolveBinary finds livekit-sip: bin when set (what the program read from $LIVEKIT_SIP_BIN), else
// the repository's build script's (which builds once and caches).
func ResolveBinary(ctx context.Context, bin string) (string, error) {
	bin, err := childproc.Resolve(ctx, bin, "build-livekit-sip.sh")
	if err != nil {
		return "", fmt.Errorf("livekit-sip: %w", err)
	}
	return bin, nil
}

// FreeSIPPort is a port free for both UDP and TCP on host, and on every interface, now,
// from freeport's range (never an ephemeral one, which an outgoing connection may take).
func FreeSIPPort(host string) (int, error) {
	p, err := freeport.Find(func(p int) bool { return freeport.TCPFree(host, p) && freeport.UDPFree(host, p) })
	if err != nil {
		return 0, fmt.Errorf("livekit-sip: no SIP port free for both UDP and TCP: %w", err)
	}
	return p, nil
}

// FreeUDPRange is the first port, even, of a block of n UDP ports all free on every
// interface now (media sockets bind 0.0.0.0), from freeport's range.
func FreeUDPRange(n int) (int, error) {
	start, err := freeport.FindBlock(n, func(p int) bool {
		if p%2 != 0 {
			return false
		}
		for q := p; q < p+n; q++ {
			if !freeport.UDPFree("0.0.0.0", q) {
				return false
			}
		}
		return true
	})
	if err != nil {
		return 0, fmt.Errorf("livekit-sip: no block of %d free UDP ports: %w", n, err)
	}
	return start, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
