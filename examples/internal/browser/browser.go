// Package browser lets Go tests use a real headless browser the way a person uses a
// page: open it, click, type, read what it shows, wait for something to happen and take
// a screenshot. Launch starts Chromium (Debian's, at /usr/bin/chromium) and runs
// driver.mjs with node, which talks to it through playwright-core; LaunchFirefox starts
// Debian's stock Firefox ESR and runs firefox.mjs, which talks to it through
// puppeteer-core over WebDriver BiDi. Both drivers answer the same commands (serve.mjs),
// so a Page is the same whichever browser shows it. scripts/install-browser.sh installs
// them (--firefox the second); Setup and SetupFirefox run it.
package browser

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// installed is one install script's result, run once per test binary.
type installed struct {
	once    sync.Once
	modules string
	err     error
}

var chromium, firefox installed

// Root is the repository's root: the nearest folder above the working directory that
// holds go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("browser: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Setup runs scripts/install-browser.sh once per test binary and returns the
// node_modules folder it installed (playwright-core, livekit-client). Short tests skip.
func Setup(t testing.TB) string {
	t.Helper()
	return chromium.run(t)
}

// SetupFirefox runs scripts/install-browser.sh --firefox once per test binary
// (firefox-esr, pulseaudio and puppeteer-core) and returns the node_modules folder it
// installed. Short tests skip.
func SetupFirefox(t testing.TB) string {
	t.Helper()
	return firefox.run(t, "--firefox")
}

// run runs scripts/install-browser.sh with args the first time.
func (in *installed) run(t testing.TB, args ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("drives a real browser")
	}
	in.once.Do(func() {
		root, err := Root()
		if err != nil {
			in.err = err
			return
		}
		cmd := exec.Command("bash", append([]string{filepath.Join(root, "scripts", "install-browser.sh")}, args...)...)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			in.err = fmt.Errorf("scripts/install-browser.sh %s: %w", strings.Join(args, " "), err)
			return
		}
		in.modules = strings.TrimSpace(string(out))
	})
	if in.err != nil {
		t.Fatal(in.err)
	}
	return in.modules
}

// ClientSDK is the path of livekit-client's browser bundle (UMD, global LivekitClient)
// in the installed node_modules.
func ClientSDK(t testing.TB) string {
	return filepath.Join(Setup(t), "livekit-client", "dist", "livekit-client.umd.js")
}

// Browser is one browser (Chromium or Firefox) with a fresh profile, driven by one node
// process.
type Browser struct {
	t      testing.TB
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *lockedWriter
	next   int
	done   chan struct{}
}

// Launch starts Chromium for the test; it is closed when the test ends. args are added
// to Chromium's command line (FakeMicrophone makes one).
func Launch(t testing.TB, args ...string) *Browser {
	t.Helper()
	extra, err := json.Marshal(append([]string{}, args...))
	if err != nil {
		t.Fatal(err)
	}
	return launch(t, "chromium", "driver.mjs", Setup(t), string(extra), "")
}

// LaunchFirefox starts Firefox for the test; it is closed when the test ends. It runs
// with Firefox's fake camera and microphone (a test picture and a 1 kHz tone), no
// permission prompt, and sound that plays without a click, into a sound server of its
// own (SoundServer); prefs are Firefox preferences added to those, or overriding them
// (FirefoxBlocksMedia).
func LaunchFirefox(t testing.TB, prefs map[string]any) *Browser {
	t.Helper()
	modules := SetupFirefox(t)
	if prefs == nil {
		prefs = map[string]any{}
	}
	extra, err := json.Marshal(prefs)
	if err != nil {
		t.Fatal(err)
	}
	return launch(t, "firefox", "firefox.mjs", modules, string(extra), "PULSE_SERVER="+SoundServer(t))
}

// SoundServer starts a PulseAudio server of the test's own, with one null sink (a sound
// card that plays into nothing, in real time), and returns its address; it is stopped
// when the test ends. Firefox on Linux plays through PulseAudio only, and without a
// sound card its Web Audio never runs: an AudioContext stays "suspended", so a page's
// level meters read nothing (Chromium's headless build has an audio output of its own).
// A visitor's browser has speakers; this gives the test's Firefox some.
func SoundServer(t testing.TB) string {
	t.Helper()
	// A unix socket's path is at most 107 bytes: a short folder, not t.TempDir().
	dir, err := os.MkdirTemp("", "pulse")
	if err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(dir, "native")
	cmd := exec.Command("pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no",
		"--log-target=stderr", "--load=module-null-sink sink_name=bridgeline_null",
		"--load=module-native-protocol-unix auth-anonymous=1 socket="+socket)
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_RUNTIME_DIR="+dir)
	logs := &lockedWriter{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		t.Fatalf("start pulseaudio (scripts/install-browser.sh --firefox installs it): %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		os.RemoveAll(dir)
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(socket); err == nil {
			return "unix:" + socket
		}
		select {
		case <-exited:
			t.Fatalf("pulseaudio exited at start:\n%s", logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("pulseaudio made no socket within 10 s:\n%s", logs.String())
		}
	}
}

// FirefoxBlocksMedia are the preferences of a Firefox whose user refused the
// microphone and the camera to every site: getUserMedia fails with NotAllowedError.
var FirefoxBlocksMedia = map[string]any{
	"media.navigator.permission.disabled": false,
	"permissions.default.microphone":      2,
	"permissions.default.camera":          2,
}

// launch runs driver (in this folder) with node; env, when set, is added to its
// environment, which the browser inherits.
func launch(t testing.TB, name, driver, modules, extra, env string) *Browser {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	profile := filepath.Join(t.TempDir(), "profile")
	cmd := exec.Command("node", filepath.Join(root, "examples", "internal", "browser", driver), modules, profile, extra)
	if env != "" {
		cmd.Env = append(os.Environ(), env)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedWriter{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	b := &Browser{t: t, cmd: cmd, in: in, out: sc, stderr: stderr, done: make(chan struct{})}
	go func() { cmd.Wait(); close(b.done) }()
	t.Cleanup(b.close)
	var ready string
	if err := b.read(0, 30*time.Second, &ready); err != nil {
		t.Fatalf("launch %s: %v", name, err)
	}
	return b
}

// FakeMicrophone is the Chromium argument that makes wav (16-bit PCM) what the page's
// microphone captures, played once from when the page opens the microphone, then
// silence. Launch already runs Chromium with a fake capture device and no permission
// prompt.
func FakeMicrophone(wav string) string {
	return "--use-file-for-fake-audio-capture=" + wav + "%noloop"
}

// lockedWriter keeps the driver's stderr for error messages.
type lockedWriter struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// close asks the driver to close the browser and waits for it, killing it past a bound.
func (b *Browser) close() {
	b.in.Close() // the driver closes the browser when its input ends
	select {
	case <-b.done:
	case <-time.After(15 * time.Second):
		b.cmd.Process.Kill()
		<-b.done
	}
}

type reply struct {
	ID    int             `json:"id"`
	Value json.RawMessage `json:"value"`
	Error string          `json:"error"`
}

// do sends one command and decodes its answer into out (nil skips).
func (b *Browser) do(op string, args map[string]any, limit time.Duration, out any) error {
	b.next++
	cmd := map[string]any{"id": b.next, "op": op}
	for k, v := range args {
		cmd[k] = v
	}
	line, err := json.Marshal(cmd)
	if err != nil {
		return err
	}
	if _, err := b.in.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("driver gone: %w", err)
	}
	return b.read(b.next, limit, out)
}

// read waits up to limit for the answer with id.
func (b *Browser) read(id int, limit time.Duration, out any) error {
	type result struct {
		r   reply
		err error
	}
	ch := make(chan result, 1)
	go func() {
		if !b.out.Scan() {
			err := b.out.Err()
			if err == nil {
				err = io.EOF
			}
			ch <- result{err: fmt.Errorf("driver ended: %v; its stderr:\n%s", err, b.stderr.String())}
			return
		}
		var r reply
		err := json.Unmarshal(b.out.Bytes(), &r)
		ch <- result{r: r, err: err}
	}()
	select {
	case res := <-ch:
		if res.err != nil {
			return res.err
		}
		if res.r.ID != id {
			return fmt.Errorf("driver answered %d, want %d", res.r.ID, id)
		}
		if res.r.Error != "" {
			return errors.New(res.r.Error)
		}
		if out != nil {
			return json.Unmarshal(res.r.Value, out)
		}
		return nil
	case <-time.After(limit):
		// The driver is stuck; kill it so the reader goroutine ends.
		b.cmd.Process.Kill()
		return fmt.Errorf("no answer from the driver within %v", limit)
	}
}

// Page is one tab. Its methods fail the test it was opened in, or the one For gave it.
type Page struct {
	b *Browser
	t testing.TB
	n int
}

// For returns the page bound to t (a subtest), so its failures stop t.
func (p *Page) For(t testing.TB) *Page {
	return &Page{b: p.b, t: t, n: p.n}
}

// Open opens url in a new tab and waits for it to load.
func (b *Browser) Open(url string) *Page {
	b.t.Helper()
	p := &Page{b: b, t: b.t}
	if err := b.do("open", map[string]any{"url": url}, 30*time.Second, &p.n); err != nil {
		b.t.Fatalf("open %s: %v", url, err)
	}
	return p
}

// Click clicks the element that selector names.
func (p *Page) Click(selector string) {
	p.t.Helper()
	if err := p.b.do("click", map[string]any{"page": p.n, "selector": selector}, 20*time.Second, nil); err != nil {
		p.fatalf("click %s: %v", selector, err)
	}
}

// Fill types value into the input that selector names.
func (p *Page) Fill(selector, value string) {
	p.t.Helper()
	if err := p.b.do("fill", map[string]any{"page": p.n, "selector": selector, "value": value}, 20*time.Second, nil); err != nil {
		p.fatalf("fill %s: %v", selector, err)
	}
}

// Eval evaluates a JavaScript expression in the page (a promise is awaited) and decodes
// its value into out (nil skips).
func (p *Page) Eval(expr string, out any) {
	p.t.Helper()
	if err := p.b.do("eval", map[string]any{"page": p.n, "expr": expr}, 30*time.Second, out); err != nil {
		p.fatalf("eval %s: %v", expr, err)
	}
}

// WaitFor evaluates expr (a promise is awaited) every 100 ms until its value is truthy,
// decodes that value into out (nil skips), and fails the test with what after limit.
func (p *Page) WaitFor(what, expr string, limit time.Duration, out any) {
	p.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		var v json.RawMessage
		if err := p.b.do("eval", map[string]any{"page": p.n, "expr": expr}, 30*time.Second, &v); err != nil {
			p.fatalf("waiting for %s: %v", what, err)
		}
		if truthy(v) {
			if out != nil {
				if err := json.Unmarshal(v, out); err != nil {
					p.fatalf("waiting for %s: decode %s: %v", what, v, err)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			p.fatalf("timed out after %v waiting for %s (last value %s)", limit, what, v)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// truthy is JavaScript's truthiness of a JSON value.
func truthy(v json.RawMessage) bool {
	switch s := strings.TrimSpace(string(v)); s {
	case "", "null", "false", "0", `""`:
		return false
	}
	return true
}

// SetViewport resizes the page's window (a phone's screen: 390x844).
func (p *Page) SetViewport(width, height int) {
	p.t.Helper()
	if err := p.b.do("viewport", map[string]any{"page": p.n, "width": width, "height": height}, 10*time.Second, nil); err != nil {
		p.fatalf("viewport %dx%d: %v", width, height, err)
	}
}

// Screenshot saves a PNG of the page at path.
func (p *Page) Screenshot(path string) {
	p.t.Helper()
	if err := p.b.do("screenshot", map[string]any{"page": p.n, "path": path}, 20*time.Second, nil); err != nil {
		p.fatalf("screenshot: %v", err)
	}
}

// Request is a request a page made: its URL (as the browser sent it), the kind of
// resource, and the Referer it carried.
type Request struct {
	URL     string `json:"url"`
	Type    string `json:"type"`
	Referer string `json:"referer"`
}

// Requests returns every request the page made so far.
func (p *Page) Requests() []Request {
	p.t.Helper()
	var out []Request
	if err := p.b.do("requests", map[string]any{"page": p.n}, 10*time.Second, &out); err != nil {
		p.fatalf("requests: %v", err)
	}
	return out
}

// CheckVideoShows takes a screenshot (saved at path) and fails the test unless the video
// element selector names is on top (nothing covers its centre) and shows a picture: not
// one colour (a stalled or black video), and at least a fifth of it near backdrop (the
// colour that fills most of what the video should show: an avatar's backdrop).
func (p *Page) CheckVideoShows(selector, path string, backdrop color.Color) {
	p.t.Helper()
	var r struct {
		X, Y, Width, Height float64
		OnTop               bool
	}
	p.Eval(fmt.Sprintf(`(() => {
  const v = document.querySelector(%q), r = v.getBoundingClientRect();
  const top = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
  return { x: r.x, y: r.y, width: r.width, height: r.height, onTop: top === v };
})()`, selector), &r)
	if !r.OnTop {
		p.t.Errorf("something covers %s", selector)
	}
	p.Screenshot(path)
	raw, err := os.ReadFile(path)
	if err != nil {
		p.t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		p.t.Fatal(err)
	}
	rect := image.Rect(int(r.X), int(r.Y), int(r.X+r.Width), int(r.Y+r.Height)).Intersect(img.Bounds())
	if rect.Dx() < 100 || rect.Dy() < 100 {
		p.t.Fatalf("%s covers %v of the screenshot: too small to judge", selector, rect)
	}
	br, bg, bb, _ := backdrop.RGBA()
	near := func(a, b uint32) bool { d := int(a>>8) - int(b>>8); return d < 24 && d > -24 }
	var sum, sq float64
	colours := map[uint32]bool{}
	n, onBackdrop := 0, 0
	for y := rect.Min.Y; y < rect.Max.Y; y += 2 {
		for x := rect.Min.X; x < rect.Max.X; x += 2 {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			l := 0.299*float64(cr>>8) + 0.587*float64(cg>>8) + 0.114*float64(cb>>8)
			sum += l
			sq += l * l
			colours[(cr>>11)<<10|(cg>>11)<<5|cb>>11] = true
			if near(cr, br) && near(cg, bg) && near(cb, bb) {
				onBackdrop++
			}
			n++
		}
	}
	mean := sum / float64(n)
	sd := math.Sqrt(sq/float64(n) - mean*mean)
	share := float64(onBackdrop) / float64(n)
	p.t.Logf("screenshot %s: %s at %v, luminance mean %.0f sd %.1f, %d colours, %.0f%% the expected backdrop", path, selector, rect, mean, sd, len(colours), 100*share)
	if sd < 10 || len(colours) < 20 || share < 0.2 {
		p.t.Errorf("%s does not show the picture: luminance sd %.1f, %d colours, %.0f%% the backdrop", selector, sd, len(colours), 100*share)
	}
}

// Logs returns the page's console lines and uncaught errors so far.
func (p *Page) Logs() []string {
	var lines []string
	if err := p.b.do("logs", map[string]any{"page": p.n}, 10*time.Second, &lines); err != nil {
		return []string{"(logs unavailable: " + err.Error() + ")"}
	}
	return lines
}

// fatalf fails the test with the page's console, which usually says why.
func (p *Page) fatalf(format string, args ...any) {
	p.t.Helper()
	p.t.Fatalf("%s\npage console:\n  %s", fmt.Sprintf(format, args...), strings.Join(p.Logs(), "\n  "))
}
