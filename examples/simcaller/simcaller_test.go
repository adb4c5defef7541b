// Package simcaller tests the sim's browser caller page (GET /sim/, served by the sim in
// mediafleet/platformsim) in headless Chromium, on the real local stack: livekit-server,
// SQLite, the sim platform and a persona worker answering an assistant line.
package simcaller

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	protologger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/examples/internal/browser"
	"github.com/bridgeline/bridgeline/mediafleet/avatar"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
)

func TestMain(m *testing.M) {
	lksdk.SetLogger(protologger.GetDiscardLogger())
	os.Exit(m.Run())
}

// frameWatch records, for every frame the remote video presents, the colour near its
// top-left corner (backdrop on both the connecting screen and the avatar), keeping only
// changes; and the moment the line's audio level first rises above silence.
const frameWatch = `(() => {
  const v = document.getElementById('remote-video');
  const c = document.createElement('canvas');
  const g = c.getContext('2d', { willReadFrequently: true });
  window.__frames = [];
  window.__firstSound = 0;
  const far = (a, b) => Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1]) + Math.abs(a[2] - b[2]) > 24;
  const onFrame = () => {
    if (v.videoWidth > 0) {
      c.width = v.videoWidth;
      c.height = v.videoHeight;
      g.drawImage(v, 0, 0);
      const d = g.getImageData(Math.floor(c.width * 0.03), Math.floor(c.height * 0.05), 1, 1).data;
      const rgb = [d[0], d[1], d[2]];
      const last = window.__frames[window.__frames.length - 1];
      if (!last || far(last.rgb, rgb)) window.__frames.push({ t: performance.now(), rgb, w: c.width, h: c.height });
    }
    v.requestVideoFrameCallback(onFrame);
  };
  v.requestVideoFrameCallback(onFrame);
  const sound = setInterval(() => {
    if (window.simCaller.level > 0.02) {
      window.__firstSound = performance.now();
      clearInterval(sound);
    }
  }, 20);
  return true;
})()`

type frame struct {
	T    float64 `json:"t"`
	RGB  [3]int  `json:"rgb"`
	W, H int
}

func near(got [3]int, want [3]uint8) bool {
	d := 0.0
	for i := range got {
		d += math.Abs(float64(got[i]) - float64(want[i]))
	}
	return d <= 60 // VP8 and the colour conversion move a flat colour a little
}

func rgbOf(t *testing.T, hex string) [3]uint8 {
	t.Helper()
	c, ok := avatar.ParseColor(hex)
	if !ok {
		t.Fatalf("colour %q", hex)
	}
	return [3]uint8{c.R, c.G, c.B}
}

// A person places a sim video call to an assistant line from the sim's page: the page
// shows the connecting screen in the account's colour, then the avatar, plays the
// greeting, and hangs up; the call record is complete.
func TestCallAssistantFromPage(t *testing.T) {
	browser.Setup(t)
	st := harness.Start(t, harness.Options{})
	st.StartWorker(t, func(c *worker.Config) {
		c.MaxJobs = 1
		// Chromium on a loaded 2-core CI machine may present its first video frame well
		// after the connecting screen's keyframe arrived; a longer dwell keeps the check
		// (connecting screen before the avatar) about the order, not the machine's speed.
		c.ConnectingDwell = 1500 * time.Millisecond
	}, worker.Options{})

	// An assistant with Theo's avatar answers line 1.
	const avatarID = "ava_theo"
	var asst struct {
		ID string `json:"id"`
	}
	harness.Must(t, st.Do(t, "POST", "/v1/assistants", map[string]any{
		"name": "Front desk", "system_prompt": "You answer calls for Test Co.", "greeting": "Hello, thanks for calling Test Co.",
		"avatar_id": avatarID, "framing": map[string]string{"shot": "medium", "position": "center"},
	}, &asst), 201, "create assistant")
	harness.Must(t, st.Do(t, "POST", "/v1/assistants/"+asst.ID+"/publish", nil, nil), 201, "publish")
	harness.Must(t, st.Do(t, "POST", "/v1/lines/"+st.Lines[harness.Line1].ID+"/assign",
		map[string]string{"assistant_id": asst.ID}, nil), 200, "assign")
	acct, err := st.Store.GetAccount(context.Background(), st.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	brand := rgbOf(t, acct.BrandColor)
	a, _ := avatar.Lookup(avatarID)
	backdrop := [3]uint8{a.Backdrop.R, a.Backdrop.G, a.Backdrop.B}

	b := browser.Launch(t)
	start := time.Now()
	p := b.Open(st.URL + "/sim/?to=" + url.QueryEscape(harness.Line1))
	p.Eval(frameWatch, nil)
	p.Click("#call")
	p.WaitFor("the page to join the room", `document.body.dataset.state === 'connected'`, 30*time.Second, nil)
	joined := time.Since(start)

	var simCallID string
	p.Eval(`window.simCaller.call.id`, &simCallID)
	sc, err := st.Sim.Get(simCallID)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Party != platformsim.PartyBrowser || sc.Status != platformsim.StatusAnswered || !sc.InRoom || sc.CallID == "" {
		t.Fatalf("sim call = %+v, want an answered browser call in the room", sc)
	}

	// Connecting screen, then the avatar.
	var frames []frame
	p.WaitFor("the avatar's backdrop in the remote video", fmt.Sprintf(`(() => {
  const f = window.__frames, b = %v;
  return f.some((x) => Math.abs(x.rgb[0]-b[0]) + Math.abs(x.rgb[1]-b[1]) + Math.abs(x.rgb[2]-b[2]) <= 60) && f;
})()`, jsArray(backdrop)), 30*time.Second, &frames)
	connectingAt, avatarAt := -1, -1
	for i, f := range frames {
		if connectingAt < 0 && near(f.RGB, brand) {
			connectingAt = i
		}
		if avatarAt < 0 && near(f.RGB, backdrop) {
			avatarAt = i
		}
	}
	if connectingAt < 0 || avatarAt < connectingAt {
		t.Fatalf("frames seen %+v: want the connecting screen %v before the avatar %v", frames, brand, backdrop)
	}
	if f := frames[avatarAt]; f.W <= 0 || f.H <= 0 {
		t.Errorf("avatar frame size %dx%d", f.W, f.H)
	}

	// The greeting: sound after the connecting screen showed, with energy in the stats.
	var firstSound float64
	p.WaitFor("the greeting's audio", `window.__firstSound`, 20*time.Second, &firstSound)
	if firstSound < frames[connectingAt].T {
		t.Errorf("sound at %.0f ms, before the connecting screen at %.0f ms", firstSound, frames[connectingAt].T)
	}
	if energy := p.RemoteMedia("window.simCaller.room", "").AudioEnergy; energy <= 0 {
		t.Errorf("totalAudioEnergy = %v, want > 0", energy)
	}
	shot := filepath.Join(t.TempDir(), "sim-caller.png")
	p.Screenshot(shot)
	t.Logf("joined after %v; greeting heard after %v; screenshot %s", joined.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), shot)

	// Hang up from the page.
	p.Click("#hangup")
	p.WaitFor("the page to show the end", `document.body.dataset.state === 'ended'`, 10*time.Second, nil)
	harness.WaitFor(t, 15*time.Second, "the sim call to end", func() bool {
		c, err := st.Sim.Get(simCallID)
		return err == nil && c.Status == platformsim.StatusEnded && c.EndedBy == platformsim.EndedByRemote
	})
	var rec struct {
		Status      string  `json:"status"`
		HandledBy   string  `json:"handled_by"`
		AssistantID *string `json:"assistant_id"`
		VersionID   *string `json:"version_id"`
		EndReason   *string `json:"end_reason"`
		EndedBy     *string `json:"ended_by"`
		DurationMS  *int64  `json:"duration_ms"`
		Metrics     *struct {
			ConnectingScreenMS *int64 `json:"connecting_screen_ms"`
			FirstGreetingMS    *int64 `json:"first_greeting_audio_ms"`
		} `json:"metrics"`
	}
	var raw json.RawMessage
	deadline := time.Now().Add(20 * time.Second)
	for {
		st.Do(t, "GET", "/v1/calls/"+sc.CallID, nil, &raw)
		json.Unmarshal(raw, &rec)
		if rec.Status == "ended" && rec.Metrics != nil && rec.Metrics.FirstGreetingMS != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no completed call record within 20 s; last: %s", raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("call record: %s", raw)
	if rec.HandledBy != "assistant" || rec.AssistantID == nil || *rec.AssistantID != asst.ID || rec.VersionID == nil ||
		rec.EndReason == nil || *rec.EndReason != "remote_hangup" || rec.EndedBy == nil || *rec.EndedBy != "remote" ||
		rec.DurationMS == nil || *rec.DurationMS <= 0 || rec.Metrics.ConnectingScreenMS == nil {
		t.Errorf("call record = %s", raw)
	}
}

func jsArray(c [3]uint8) string { return fmt.Sprintf("[%d,%d,%d]", c[0], c[1], c[2]) }
