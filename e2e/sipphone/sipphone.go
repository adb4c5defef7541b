// Package sipphone drives a real SIP phone for tests: Debian's baresip (1.0.0), one
// process per phone, with a config folder of its own, on free loopback ports. A test
// dials, answers, hangs up and presses keys through baresip's ctrl_tcp module
// (netstring-framed JSON commands), and reads the call's progress from the events the
// same socket carries: ringing, established, closed with the SIP status of a failed
// call, a REFER followed. The phone speaks a WAV file (aufile) in every call and records
// what it hears (sndfile).
//
// It lives under e2e/ because the whole-stack tests are its users; nothing shipped
// imports it. The settings that work (a spike on this machine, SIP.md): aubridge as the
// player (with alsa or null it spins a core during a call), aufile as the source, 8 kHz
// mono, g711 only, menu for REFER and keypad codes, and the status line off.
package sipphone

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/livekitsip"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/shared/freeport"
)

// Config describes one phone.
type Config struct {
	// Number is the user part of the phone's address: the caller id a bridge reports
	// for its calls, and the number a trunk dials to reach it (+15559990001).
	Number string
	// Dir is the phone's folder (config, accounts, log, recordings). Empty: a temporary
	// folder removed by Close.
	Dir string
	// Speak is the WAV file (16-bit mono; 8 kHz plays as is) the phone sends in every
	// call, from the moment it is answered; silence follows. Empty: silence only.
	Speak string
	// MaxCall is how long a call can last (default 2 minutes): baresip hangs a call up
	// when its audio source ends, so the phone speaks Speak padded with silence to this
	// length.
	MaxCall time.Duration
	// AutoAnswer answers incoming calls at once; otherwise Answer does.
	AutoAnswer bool
	// AuthUser and AuthPassword answer a digest challenge to the calls the phone places
	// (an inbound trunk's credentials).
	AuthUser, AuthPassword string
	// Video makes a video phone: it offers VP8, sends baresip's test picture (fakevideo:
	// colour bars) as its camera, and Snapshot saves what it receives.
	Video bool
	// Binary is baresip; empty: baresip on PATH.
	Binary string
}

// Phone is a running baresip.
type Phone struct {
	cfg     Config
	tmpDir  bool
	sipPort int
	cmd     *exec.Cmd
	done    chan struct{}
	conn    net.Conn

	mu        sync.Mutex
	events    []Event
	taken     []bool
	calls     map[string]bool // call ids a Call handle was made for
	changed   chan struct{}   // closed and replaced on every event or response
	responses map[string]response
	token     int
	readErr   error
}

// Event is one event baresip reported over ctrl_tcp.
type Event struct {
	// Type is baresip's: CALL_INCOMING, CALL_RINGING, CALL_PROGRESS, CALL_ESTABLISHED,
	// CALL_CLOSED, CALL_TRANSFER, CALL_DTMF_START, ...
	Type string `json:"type"`
	// CallID is baresip's id of the call.
	CallID    string `json:"id"`
	Direction string `json:"direction"`
	PeerURI   string `json:"peeruri"`
	// Param is the event's detail: the reason a call closed ("486 Busy Here",
	// "Connection reset by user"), the Refer-To of a transfer, a DTMF digit.
	Param string `json:"param"`
	// At is when the event reached the driver.
	At time.Time `json:"-"`
}

// Status is the SIP status code that closed a call, from a CALL_CLOSED event's reason
// ("486 Busy Here" is 486); 0 when the call ended otherwise (a BYE, a local hang-up).
func (e Event) Status() int {
	code, _, _ := strings.Cut(e.Param, " ")
	n, err := strconv.Atoi(code)
	if err != nil || n < 100 || n > 699 {
		return 0
	}
	return n
}

type response struct {
	OK   bool
	Data string
}

// Start writes the phone's folder, starts baresip on free 127.0.0.1 ports and connects
// to its control socket.
func Start(ctx context.Context, cfg Config) (*Phone, error) {
	if cfg.Number == "" || strings.ContainsAny(cfg.Number, "@:;<> ") {
		return nil, fmt.Errorf("sipphone: number %q is not a SIP user part", cfg.Number)
	}
	if cfg.Binary == "" {
		bin, err := exec.LookPath("baresip")
		if err != nil {
			return nil, errors.New("sipphone: baresip not found (Debian's baresip-core; scripts/install-media-deps.sh installs it)")
		}
		cfg.Binary = bin
	}
	p := &Phone{cfg: cfg, done: make(chan struct{}), changed: make(chan struct{}), responses: map[string]response{}, calls: map[string]bool{}}
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "sipphone-")
		if err != nil {
			return nil, err
		}
		p.cfg.Dir, p.tmpDir = dir, true
	}
	if err := p.writeFolder(); err != nil {
		p.removeTmp()
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(p.cfg.Dir, "baresip.log"))
	if err != nil {
		p.removeTmp()
		return nil, err
	}
	p.cmd = exec.Command(cfg.Binary, "-f", p.cfg.Dir)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		logFile.Close()
		p.removeTmp()
		return nil, fmt.Errorf("sipphone: start baresip: %w", err)
	}
	go func() {
		p.cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	if err := p.connect(ctx); err != nil {
		p.kill()
		return nil, fmt.Errorf("%w\n%s", err, p.Log())
	}
	return p, nil
}

// writeFolder writes config and accounts with free ports.
func (p *Phone) writeFolder() error {
	rec := filepath.Join(p.cfg.Dir, "rec")
	if err := os.MkdirAll(rec, 0o700); err != nil {
		return err
	}
	speak, err := p.writeSpeech()
	if err != nil {
		return err
	}
	// Every port below Linux's ephemeral range, as FreeUDPRange's: a port the kernel
	// handed out for a moment is free to hand out again, to any process's outgoing
	// connection, before baresip binds it (seen beside other tests: "ctrl_tcp: failed to
	// listen on TCP 127.0.0.1:40343 (Address already in use)"). None is another's.
	rtp, err := livekitsip.FreeUDPRange(20)
	if err != nil {
		return err
	}
	const host = "127.0.0.1" // baresip listens here
	// The SIP port and the TLS port after it are one block: freeport hands out neither
	// again, nor a port of the RTP block.
	sipPort, err := freeport.FindBlock(2, func(port int) bool {
		return freeport.TCPFree(host, port) && freeport.UDPFree(host, port) && freeport.TCPFree(host, port+1)
	})
	if err != nil {
		return err
	}
	ctrl, err := freeport.Find(func(port int) bool { return freeport.TCPFree(host, port) })
	if err != nil {
		return err
	}
	p.sipPort = sipPort
	conf := fmt.Sprintf(`poll_method		epoll
sip_listen		127.0.0.1:%d
net_interface		127.0.0.1
audio_player		aubridge,nil
audio_source		aufile,%s
audio_alert		aubridge,nil
audio_srate		8000
audio_channels		1
rtp_ports		%d-%d
module_path		/usr/lib/baresip/modules
module			g711.so
module			aufile.so
module			aubridge.so
module			sndfile.so
snd_path		%s
module_app		account.so
module_app		menu.so
module_app		ctrl_tcp.so
ctrl_tcp_listen		127.0.0.1:%d
statmode_default	off
`, sipPort, speak, rtp, rtp+19, rec, ctrl)
	if p.cfg.Video {
		conf += `module			vp8.so
module			fakevideo.so
module			snapshot.so
video_source		fakevideo,nil
video_display		fakevideo,nil
video_size		352x288
video_fps		15
video_bitrate		300000
`
	}
	if err := os.WriteFile(filepath.Join(p.cfg.Dir, "config"), []byte(conf), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(p.cfg.Dir, "accounts"), []byte(p.AccountLine()+"\n"), 0o600)
}

// writeSpeech writes what the phone says in a call: Speak, then silence up to MaxCall.
func (p *Phone) writeSpeech() (string, error) {
	pcm := tts.PCM{Rate: Rate}
	if p.cfg.Speak != "" {
		b, err := os.ReadFile(p.cfg.Speak)
		if err != nil {
			return "", fmt.Errorf("sipphone: %w", err)
		}
		if pcm, err = tts.DecodeWAV(b); err != nil {
			return "", fmt.Errorf("sipphone: %s: %w", p.cfg.Speak, err)
		}
	}
	maxCall := p.cfg.MaxCall
	if maxCall <= 0 {
		maxCall = 2 * time.Minute
	}
	if n := int(maxCall.Seconds() * float64(pcm.Rate)); len(pcm.Samples) < n {
		pcm.Samples = append(pcm.Samples, make([]int16, n-len(pcm.Samples))...)
	}
	path := filepath.Join(p.cfg.Dir, "speak.wav")
	return path, os.WriteFile(path, tts.EncodeWAV(pcm), 0o600)
}

// Snapshot asks a video phone to save the next frame it receives as a PNG at path
// (baresip's snapshot module writes it when the frame comes).
func (p *Phone) Snapshot(ctx context.Context, path string) error {
	_, err := p.command(ctx, "snapshot_recv", path)
	return err
}

// AccountLine is the phone's line in baresip's accounts file.
func (p *Phone) AccountLine() string {
	mode := "manual"
	if p.cfg.AutoAnswer {
		mode = "auto"
	}
	line := fmt.Sprintf("<sip:%s@127.0.0.1>;regint=0;answermode=%s", p.cfg.Number, mode)
	if p.cfg.AuthUser != "" {
		line += ";auth_user=" + p.cfg.AuthUser + ";auth_pass=" + p.cfg.AuthPassword
	}
	return line
}

// connect dials the control socket (baresip opens it once its modules are loaded) and
// starts reading it.
func (p *Phone) connect(ctx context.Context) error {
	addr := p.ctrlAddr()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			p.conn = c
			go p.read(bufio.NewReader(c))
			return nil
		}
		select {
		case <-p.done:
			return errors.New("sipphone: baresip exited at start")
		case <-ctx.Done():
			return fmt.Errorf("sipphone: control socket %s: %w", addr, err)
		case <-time.After(30 * time.Millisecond):
		}
	}
}

func (p *Phone) ctrlAddr() string {
	b, _ := os.ReadFile(filepath.Join(p.cfg.Dir, "config"))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "ctrl_tcp_listen"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// read parses netstrings (<length>:<json>,) until the socket closes.
func (p *Phone) read(r *bufio.Reader) {
	err := func() error {
		for {
			n, err := r.ReadString(':')
			if err != nil {
				return err
			}
			size, err := strconv.Atoi(n[:len(n)-1])
			if err != nil || size < 0 || size > 1<<20 {
				return fmt.Errorf("sipphone: bad netstring length %q", n)
			}
			body := make([]byte, size+1)
			if _, err := io.ReadFull(r, body); err != nil {
				return err
			}
			if body[size] != ',' {
				return errors.New("sipphone: netstring without its comma")
			}
			p.handle(body[:size])
		}
	}()
	p.mu.Lock()
	p.readErr = err
	p.notifyLocked()
	p.mu.Unlock()
}

func (p *Phone) handle(msg []byte) {
	var m struct {
		Event    bool   `json:"event"`
		Response bool   `json:"response"`
		Token    string `json:"token"`
		OK       bool   `json:"ok"`
		Data     string `json:"data"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case m.Response:
		p.responses[m.Token] = response{OK: m.OK, Data: m.Data}
	case m.Event:
		var ev Event
		json.Unmarshal(msg, &ev)
		ev.At = time.Now()
		p.events = append(p.events, ev)
		p.taken = append(p.taken, false)
	}
	p.notifyLocked()
}

func (p *Phone) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// command sends one ctrl_tcp command and waits for baresip's answer.
func (p *Phone) command(ctx context.Context, name, params string) (string, error) {
	p.mu.Lock()
	p.token++
	token := "t" + strconv.Itoa(p.token)
	p.mu.Unlock()
	b, _ := json.Marshal(map[string]string{"command": name, "params": params, "token": token})
	if _, err := fmt.Fprintf(p.conn, "%d:%s,", len(b), b); err != nil {
		return "", fmt.Errorf("sipphone: %s: %w", name, err)
	}
	for {
		p.mu.Lock()
		r, ok := p.responses[token]
		changed, readErr := p.changed, p.readErr
		p.mu.Unlock()
		switch {
		case ok && !r.OK:
			return "", fmt.Errorf("sipphone: %s %s: %s", name, params, strings.TrimSpace(r.Data))
		case ok:
			return r.Data, nil
		case readErr != nil:
			return "", fmt.Errorf("sipphone: %s: control socket: %w", name, readErr)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return "", fmt.Errorf("sipphone: %s: %w", name, ctx.Err())
		}
	}
}

// URI is where the phone takes calls: sip:<number>@127.0.0.1:<port>.
func (p *Phone) URI() string { return fmt.Sprintf("sip:%s@127.0.0.1:%d", p.cfg.Number, p.sipPort) }

// Address is host:port of the phone's SIP listener (UDP and TCP).
func (p *Phone) Address() string { return fmt.Sprintf("127.0.0.1:%d", p.sipPort) }

// Number is the phone's number.
func (p *Phone) Number() string { return p.cfg.Number }

// Dir is the phone's folder.
func (p *Phone) Dir() string { return p.cfg.Dir }

// Call is one call of the phone, known by baresip's call id.
type Call struct {
	p  *Phone
	ID string
	// Peer is the other side's URI as baresip names it.
	Peer string
}

// Dial places a call to uri (sip:+15550100001@127.0.0.1:5060; add ;transport=tcp for
// TCP) and returns it once baresip reports it (ringing, answered or already failed). Its
// progress arrives as its events: call.Next(ctx, "CALL_ESTABLISHED", "CALL_CLOSED").
func (p *Phone) Dial(ctx context.Context, uri string) (*Call, error) {
	if !strings.HasPrefix(uri, "sip:") || strings.ContainsAny(uri, " \r\n") {
		return nil, fmt.Errorf("sipphone: %q is not a sip: URI", uri)
	}
	p.mu.Lock()
	from := len(p.events)
	p.mu.Unlock()
	if _, err := p.command(ctx, "dial", uri); err != nil {
		return nil, err
	}
	return p.newCall(ctx, from, func(ev Event) bool { return ev.Direction == "outgoing" && ev.PeerURI == uri })
}

// Incoming waits for a call to the phone that no earlier Incoming returned.
func (p *Phone) Incoming(ctx context.Context) (*Call, error) {
	return p.newCall(ctx, 0, func(ev Event) bool { return ev.Direction == "incoming" })
}

// Outgoing waits for a call from the phone that neither Dial nor an earlier Outgoing
// returned: the call to a transfer target the phone placed when it followed a REFER.
func (p *Phone) Outgoing(ctx context.Context) (*Call, error) {
	return p.newCall(ctx, 0, func(ev Event) bool { return ev.Direction == "outgoing" })
}

// newCall waits for the first event from index from on that names a call not yet
// handed out and matches, and hands that call out.
func (p *Phone) newCall(ctx context.Context, from int, match func(Event) bool) (*Call, error) {
	for {
		p.mu.Lock()
		for _, ev := range p.events[from:] {
			if ev.CallID != "" && !p.calls[ev.CallID] && match(ev) {
				p.calls[ev.CallID] = true
				p.mu.Unlock()
				return &Call{p: p, ID: ev.CallID, Peer: ev.PeerURI}, nil
			}
		}
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-p.done:
			return nil, errors.New("sipphone: baresip exited waiting for a call")
		case <-ctx.Done():
			return nil, fmt.Errorf("sipphone: no new call: %w (events so far: %s)", ctx.Err(), p.eventSummary())
		}
	}
}

// Next waits for the first event of the call of one of types that no earlier Next
// returned, and returns it. Events of other types stay for later calls.
func (c *Call) Next(ctx context.Context, types ...string) (Event, error) {
	return c.p.next(ctx, func(ev Event) bool { return ev.CallID == c.ID && slices.Contains(types, ev.Type) })
}

// Closed waits for the call to end and returns its CALL_CLOSED event (Status is the SIP
// status of a failed call).
func (c *Call) Closed(ctx context.Context) (Event, error) { return c.Next(ctx, "CALL_CLOSED") }

// Answer accepts the ringing incoming call.
func (p *Phone) Answer(ctx context.Context) error {
	_, err := p.command(ctx, "accept", "")
	return err
}

// Hangup ends the current call (BYE, or CANCEL while it rings, or a decline while it
// rings here).
func (p *Phone) Hangup(ctx context.Context) error {
	_, err := p.command(ctx, "hangup", "")
	return err
}

// SendDTMF presses keys (0-9, *, #, A-D) in the current call, one RFC 4733
// telephone-event at a time with gap between them.
func (p *Phone) SendDTMF(ctx context.Context, digits string, gap time.Duration) error {
	for i, d := range digits {
		if !strings.ContainsRune("0123456789*#ABCD", d) {
			return fmt.Errorf("sipphone: %q is not a keypad digit", d)
		}
		if i > 0 {
			select {
			case <-time.After(gap):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if _, err := p.command(ctx, "sndcode", string(d)); err != nil {
			return err
		}
	}
	return nil
}

// Next waits for the first event of the phone, of any call, of one of types that no
// earlier Next returned, and returns it. Events of other types stay for later calls.
func (p *Phone) Next(ctx context.Context, types ...string) (Event, error) {
	return p.next(ctx, func(ev Event) bool { return slices.Contains(types, ev.Type) })
}

func (p *Phone) next(ctx context.Context, match func(Event) bool) (Event, error) {
	for {
		p.mu.Lock()
		for i, ev := range p.events {
			if !p.taken[i] && match(ev) {
				p.taken[i] = true
				p.mu.Unlock()
				return ev, nil
			}
		}
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-p.done:
			return Event{}, errors.New("sipphone: baresip exited waiting for an event")
		case <-ctx.Done():
			return Event{}, fmt.Errorf("sipphone: no such event: %w (events so far: %s)", ctx.Err(), p.eventSummary())
		}
	}
}

// Events is every event so far.
func (p *Phone) Events() []Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.events)
}

func (p *Phone) eventSummary() string {
	var s []string
	for _, ev := range p.Events() {
		s = append(s, ev.Type+"["+ev.CallID+"]("+ev.Param+")")
	}
	return strings.Join(s, " ")
}

// Recording is one call's audio files, written by sndfile while the call runs.
type Recording struct {
	// Heard is what the phone received (decoded), Sent what it sent (before encoding).
	Heard, Sent string
}

// Recordings lists the calls' audio files, oldest first. sndfile names them after the
// second the call's audio started, so two calls starting within one second share a
// pair of files: the later one overwrites it.
func (p *Phone) Recordings() ([]Recording, error) {
	heard, err := filepath.Glob(filepath.Join(p.cfg.Dir, "rec", "dump-*-dec.wav"))
	if err != nil {
		return nil, err
	}
	slices.Sort(heard)
	out := make([]Recording, 0, len(heard))
	for _, h := range heard {
		out = append(out, Recording{Heard: h, Sent: strings.TrimSuffix(h, "-dec.wav") + "-enc.wav"})
	}
	return out, nil
}

// Heard reads the audio of the phone's latest call (so far, if it still runs).
func (p *Phone) Heard() (tts.PCM, error) {
	recs, err := p.Recordings()
	if err != nil {
		return tts.PCM{}, err
	}
	if len(recs) == 0 {
		return tts.PCM{}, errors.New("sipphone: no recording yet")
	}
	b, err := os.ReadFile(recs[len(recs)-1].Heard)
	if err != nil {
		return tts.PCM{}, err
	}
	return tts.DecodeWAV(b)
}

// Log is baresip's output so far.
func (p *Phone) Log() string {
	b, _ := os.ReadFile(filepath.Join(p.cfg.Dir, "baresip.log"))
	return string(b)
}

// PID is baresip's process id.
func (p *Phone) PID() int { return p.cmd.Process.Pid }

// Close quits baresip (its calls end with a BYE), kills it if it has not gone within
// 3 s, and removes a temporary folder.
func (p *Phone) Close() {
	defer p.removeTmp()
	select {
	case <-p.done:
		return
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if p.conn != nil {
		p.command(ctx, "quit", "")
		p.conn.Close()
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		p.kill()
	}
}

func (p *Phone) kill() {
	p.cmd.Process.Kill()
	<-p.done
	if p.conn != nil {
		p.conn.Close()
	}
}

func (p *Phone) removeTmp() {
	if p.tmpDir {
		os.RemoveAll(p.cfg.Dir)
	}
}
