package browser_test

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/examples/internal/browser"
)

const testPage = `<!doctype html>
<title>driver check</title>
<input id="name"><button id="go">go</button><p id="out"></p><video id="cam" autoplay muted playsinline></video>
<script>
document.getElementById('go').onclick = async () => {
  document.getElementById('out').textContent = 'hello ' + document.getElementById('name').value;
  const stream = await navigator.mediaDevices.getUserMedia({video: true, audio: true});
  document.getElementById('cam').srcObject = stream;
};
</script>`

// servePage serves html at the returned URL until the test ends.
func servePage(t *testing.T, html string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(html))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The driver opens a page, types, clicks, reads the page back, waits for the fake
// camera's frames and takes a screenshot: Chromium's (playwright-core) and Firefox's
// (puppeteer-core over WebDriver BiDi) alike.
func TestDriver(t *testing.T) {
	for _, c := range []struct {
		name   string
		launch func(t *testing.T) *browser.Browser
	}{
		{"chromium", func(t *testing.T) *browser.Browser { return browser.Launch(t) }},
		{"firefox", func(t *testing.T) *browser.Browser { return browser.LaunchFirefox(t, nil) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := servePage(t, testPage)
			p := c.launch(t).Open(url)
			p.Fill("#name", "caller")
			p.Click("#go")
			var text string
			p.Eval(`document.getElementById('out').textContent`, &text)
			if text != "hello caller" {
				t.Errorf("text = %q, want %q", text, "hello caller")
			}
			var width int
			p.WaitFor("the fake camera's frames", `document.getElementById('cam').videoWidth`, 10*time.Second, &width)
			if width <= 0 {
				t.Errorf("videoWidth = %d, want > 0", width)
			}
			var vw int
			p.SetViewport(390, 844)
			p.Eval(`window.innerWidth`, &vw)
			if vw != 390 {
				t.Errorf("innerWidth after SetViewport(390, 844) = %d", vw)
			}
			shot := filepath.Join(t.TempDir(), "driver.png")
			p.Screenshot(shot)
			if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
				t.Errorf("screenshot %s: %v", shot, err)
			}
			if reqs := p.Requests(); len(reqs) == 0 || !strings.HasPrefix(reqs[0].URL, url) {
				t.Errorf("requests = %+v, want the page's first", reqs)
			}
			p.Eval(`console.log('from the page'), 1`, nil)
			if logs := p.Logs(); !slices.Contains(logs, "log: from the page") {
				t.Errorf("logs = %q, want the page's console line", logs)
			}
		})
	}
}

// TestDriverTakesRelativePaths: driver.mjs run by hand, from the repository root, with the
// node_modules folder and the profile given relative to it, launches Chromium and
// answers, then exits cleanly when its input closes.
func TestDriverTakesRelativePaths(t *testing.T) {
	modules := browser.Setup(t)
	root, err := browser.Root()
	if err != nil {
		t.Fatal(err)
	}
	relModules, err := filepath.Rel(root, modules)
	if err != nil {
		t.Fatal(err)
	}
	profile, err := filepath.Rel(root, filepath.Join(t.TempDir(), "profile"))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.IsAbs(relModules) || filepath.IsAbs(profile) {
		t.Fatalf("want relative paths, got %s and %s", relModules, profile)
	}
	cmd := exec.Command("node", filepath.Join("examples", "internal", "browser", "driver.mjs"), relModules, profile)
	cmd.Dir = root
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	fmt.Fprintln(in, `{"id":1,"op":"open","url":"about:blank"}`)
	for _, want := range []string{`{"id":0,"value":"ready"}`, `{"id":1,"value":0}`} {
		if !lines.Scan() {
			in.Close()
			cmd.Wait()
			t.Fatalf("driver with relative paths stopped before %s; stderr:\n%s", want, stderr.String())
		}
		if lines.Text() != want {
			t.Errorf("driver answered %s, want %s; stderr:\n%s", lines.Text(), want, stderr.String())
		}
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("driver exit: %v; stderr:\n%s", err, stderr.String())
	}
}

// mediaPage stands in for a page in a LiveKit room: window.room is shaped as
// livekit-client's Room (remote participants, their publications, each track's
// getRTCStatsReport), with two participants, an unsubscribed publication, outbound and
// other statistics to leave out; the video element shows the fake camera.
const mediaPage = `<!doctype html>
<title>remote media</title>
<video id="remote" autoplay muted playsinline></video>
<script>
navigator.mediaDevices.getUserMedia({video: true}).then((s) => { document.getElementById('remote').srcObject = s; });
const track = (stats) => ({ getRTCStatsReport: async () => new Map(stats.map((s, i) => [String(i), s])) });
const participant = (pubs) => ({ trackPublications: new Map(pubs.map((p, i) => [String(i), p])) });
window.room = { remoteParticipants: new Map([
  ['a', participant([
    { track: track([{ type: 'inbound-rtp', kind: 'video', framesDecoded: 30 }, { type: 'outbound-rtp', kind: 'video', framesEncoded: 99 }]) },
    { track: track([{ type: 'inbound-rtp', kind: 'audio', totalAudioEnergy: 0.25 }, { type: 'codec' }]) },
    { track: null },
  ])],
  ['b', participant([
    { track: track([{ type: 'inbound-rtp', kind: 'video', framesDecoded: 12 }, { type: 'inbound-rtp', kind: 'audio', totalAudioEnergy: 0.5 }]) },
  ])],
]) };
</script>`

// RemoteMediaJS sums the inbound statistics of every subscribed remote track and reads
// the video element's size; before the room exists, and with no video element, it
// reads zeros.
func TestRemoteMedia(t *testing.T) {
	p := browser.Launch(t).Open(servePage(t, mediaPage))
	m := p.WaitForRemoteMedia("the fake camera in the video element", "window.room", "#remote", "m.width > 0", 10*time.Second)
	if m.Height <= 0 || m.FramesDecoded != 42 || m.AudioEnergy != 0.75 {
		t.Errorf("remote media = %+v, want a size, 42 frames decoded and audio energy 0.75", m)
	}
	if got := p.RemoteMedia("window.noRoom", ""); got != (browser.RemoteMedia{}) {
		t.Errorf("remote media without a room or a video element = %+v, want zeros", got)
	}
}
