package browser_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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

// The driver opens a page, types, clicks, reads the page back, waits for the fake
// camera's frames and takes a screenshot.
func TestDriver(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(testPage))
	}))
	defer srv.Close()

	b := browser.Launch(t)
	p := b.Open(srv.URL)
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
	shot := filepath.Join(t.TempDir(), "driver.png")
	p.Screenshot(shot)
	if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
		t.Errorf("screenshot %s: %v", shot, err)
	}
}
