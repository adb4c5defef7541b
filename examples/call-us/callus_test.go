package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	protologger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/examples/internal/browser"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
)

func TestMain(m *testing.M) {
	lksdk.SetLogger(protologger.GetDiscardLogger()) // the sim parties' SDK logs
	os.Exit(m.Run())
}

// The handle the button dials: a sim handle that answers with a bot publishing a tone
// and a moving test pattern.
const deskHandle = "+15550142000"

// remoteMedia reads what the page receives from the other party: the video's decoded
// size and frames, and the audio's energy.
const remoteMedia = `(async () => {
  const room = window.callUs.room;
  const v = document.getElementById('remote-video');
  const out = { width: v.videoWidth, height: v.videoHeight, framesDecoded: 0, audioEnergy: 0, peak: window.callUs.peak };
  if (!room) return out;
  for (const p of room.remoteParticipants.values()) {
    for (const pub of p.trackPublications.values()) {
      if (!pub.track) continue;
      const r = await pub.track.getRTCStatsReport();
      if (!r) continue;
      r.forEach((s) => {
        if (s.type !== 'inbound-rtp') return;
        if (s.kind === 'video') out.framesDecoded += s.framesDecoded || 0;
        if (s.kind === 'audio') out.audioEnergy += s.totalAudioEnergy || 0;
      });
    }
  }
  return out;
})()`

type media struct {
	Width, Height int
	FramesDecoded int     `json:"framesDecoded"`
	AudioEnergy   float64 `json:"audioEnergy"`
	Peak          float64 `json:"peak"`
}

type sessionObj struct {
	Status    string  `json:"status"`
	EndReason *string `json:"end_reason"`
	CallID    string  `json:"call_id"`
}

// One stack for the package: the API, livekit-server, SQLite and the sim, with this
// example's backend in front of it and the page in headless Chromium.
func TestCallUs(t *testing.T) {
	sdk := browser.ClientSDK(t)
	st := harness.Start(t, harness.Options{})
	srv := NewServer(Config{APIURL: st.URL, APIKey: st.APIKey, Handle: deskHandle, Media: "video", ClientSDK: sdk},
		slog.New(slog.DiscardHandler))
	backend := httptest.NewServer(srv.Handler())
	t.Cleanup(backend.Close)
	b := browser.Launch(t)
	p := b.Open(backend.URL)

	// call places a call from the page and waits until it sees and hears the other side.
	call := func(t *testing.T, p *browser.Page) (joinInfo, media) {
		t.Helper()
		p.Click("#call")
		p.WaitFor("the page to join the room", `document.body.dataset.state === 'connected'`, 30*time.Second, nil)
		var m media
		p.WaitFor("decoded video and audio with energy from the other party", `(async () => {
  const m = await (`+remoteMedia+`);
  return m.width > 0 && m.framesDecoded > 0 && m.audioEnergy > 0 && m.peak > 0.01 && m;
})()`, 20*time.Second, &m)
		var info map[string]any
		p.Eval(`window.callUs.session`, &info)
		keys := make([]string, 0, len(info))
		for k := range info {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if want := []string{"expires_at", "participant_token", "rtc_url", "session_id"}; !slices.Equal(keys, want) {
			t.Errorf("the browser got %v, want only %v", keys, want)
		}
		raw, _ := json.Marshal(info)
		if strings.Contains(string(raw), st.APIKey) {
			t.Error("the API key reached the browser")
		}
		var ji joinInfo
		json.Unmarshal(raw, &ji)
		return ji, m
	}
	session := func(t *testing.T, id string) sessionObj {
		t.Helper()
		var s sessionObj
		harness.Must(t, st.Do(t, "GET", "/v1/sessions/"+id, nil, &s), 200, "get session")
		return s
	}

	t.Run("hang up from the page", func(t *testing.T) {
		p := p.For(t)
		start := time.Now()
		ji, m := call(t, p)
		t.Logf("joined and receiving %dx%d video (%d frames), audio energy %.3g, after %v",
			m.Width, m.Height, m.FramesDecoded, m.AudioEnergy, time.Since(start).Round(time.Millisecond))
		s := session(t, ji.SessionID)
		if s.Status != "active" {
			t.Errorf("session status = %q, want active", s.Status)
		}
		// The other party sees and hears the page's fake camera and microphone.
		harness.WaitFor(t, 15*time.Second, "the sim party to decode the page's video and hear it", func() bool {
			c, ok := st.Sim.ByCallID(s.CallID)
			return ok && c.Frames > 0 && c.Heard
		})
		shot := filepath.Join(t.TempDir(), "call-us.png")
		p.Screenshot(shot)
		t.Logf("screenshot: %s", shot)

		p.Click("#hangup")
		p.WaitFor("the page to show the end", `document.body.dataset.state === 'ended'`, 10*time.Second, nil)
		harness.WaitFor(t, 10*time.Second, "the session to end", func() bool { return session(t, ji.SessionID).Status == "ended" })
		if s := session(t, ji.SessionID); s.EndReason == nil || *s.EndReason != "deleted" {
			t.Errorf("end_reason = %v, want deleted", s.EndReason)
		}
		harness.WaitFor(t, 10*time.Second, "the sim party to leave", func() bool {
			c, ok := st.Sim.ByCallID(s.CallID)
			return ok && c.Status == platformsim.StatusEnded
		})
	})

	t.Run("DELETE from the API disconnects the page", func(t *testing.T) {
		p := p.For(t)
		ji, _ := call(t, p)
		harness.Must(t, st.Do(t, "DELETE", "/v1/sessions/"+ji.SessionID, nil, nil), 200, "delete session")
		var reason string
		p.WaitFor("the page to see the disconnect", `document.body.dataset.state === 'ended' && window.callUs.disconnectReason`, 10*time.Second, &reason)
		if reason != "ROOM_DELETED" {
			t.Errorf("disconnect reason = %q, want ROOM_DELETED", reason)
		}
		// The session is over for the backend too: hanging up again is refused upstream
		// or already forgotten, and never reopens anything.
		if s := session(t, ji.SessionID); s.Status != "ended" {
			t.Errorf("session status = %q, want ended", s.Status)
		}
	})

	t.Run("the backend keeps the key and its sessions to itself", func(t *testing.T) {
		for _, path := range []string{"/", "/app.js", "/style.css"} {
			resp, err := http.Get(backend.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || strings.Contains(string(body), st.APIKey) || strings.Contains(string(body), "sk_test_") {
				t.Errorf("GET %s = %d, or it shows a key", path, resp.StatusCode)
			}
		}
		for _, c := range []struct {
			body string
			want int
		}{
			{`{"session_id":"ses_01notoneofours0000000000"}`, 404},
			{`{}`, 400},
			{`not json`, 400},
		} {
			resp, err := http.Post(backend.URL+"/api/hangup", "application/json", strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Errorf("POST /api/hangup %s = %d, want %d", c.body, resp.StatusCode, c.want)
			}
		}
	})
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{"BRIDGELINE_API_KEY": "sk_test_x", "CALL_US_HANDLE": "+1555", "LIVEKIT_CLIENT_JS": "/sdk.js"}
	cfg, err := ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:3000" || cfg.APIURL != "http://127.0.0.1:8080" || cfg.Media != "video" {
		t.Errorf("defaults = %+v", cfg)
	}
	for name, bad := range map[string]map[string]string{
		"no key":    {"CALL_US_HANDLE": "+1555", "LIVEKIT_CLIENT_JS": "/sdk.js"},
		"no handle": {"BRIDGELINE_API_KEY": "k", "LIVEKIT_CLIENT_JS": "/sdk.js"},
		"bad media": {"BRIDGELINE_API_KEY": "k", "CALL_US_HANDLE": "+1555", "CALL_US_MEDIA": "smell", "LIVEKIT_CLIENT_JS": "/sdk.js"},
		"bad url":   {"BRIDGELINE_API_KEY": "k", "CALL_US_HANDLE": "+1555", "BRIDGELINE_API_URL": "ftp://x", "LIVEKIT_CLIENT_JS": "/sdk.js"},
	} {
		if _, err := ConfigFromEnv(func(k string) string { return bad[k] }); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
