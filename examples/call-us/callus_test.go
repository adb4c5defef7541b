package main

import (
	"context"
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
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/examples/internal/browser"
	"github.com/bridgeline/bridgeline/mediafleet/avatar"
	"github.com/bridgeline/bridgeline/mediafleet/engines"
	"github.com/bridgeline/bridgeline/mediafleet/llm"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest/sphinx"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/persona"
)

func TestMain(m *testing.M) {
	lksdk.SetLogger(protologger.GetDiscardLogger()) // the sim parties' SDK logs
	os.Exit(m.Run())
}

// The handle the button dials: a sim handle that answers with a bot publishing a tone
// and a moving test pattern.
const deskHandle = "+15550142000"

// callUsRoom is the page's livekit-client Room.
const callUsRoom = "window.callUs.room"

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
	call := func(t *testing.T, p *browser.Page) (joinInfo, browser.RemoteMedia) {
		t.Helper()
		p.Click("#call")
		p.WaitFor("the page to join the room", `document.body.dataset.state === 'connected'`, 30*time.Second, nil)
		m := p.WaitForRemoteMedia("decoded video and audio with energy from the other party", callUsRoom, "#remote-video",
			`m.width > 0 && m.framesDecoded > 0 && m.audioEnergy > 0 && window.callUs.peak > 0.01`, 20*time.Second)
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

// TestTalkToAssistant: "Talk to our assistant" on the customer's own page is a web call.
// The backend creates it with the API key and hands the browser the same four fields; the
// page (Chromium, a fake camera, a fake microphone that asks a question once the greeting
// is over) joins, shows the avatar and its own camera, meters its microphone (reopened to
// ask), and shows captions of both sides; the assistant (real speech engines, the fake
// OpenAI-compatible model) greets and answers; Hang up ends the call, and the record read
// once call.ended exists holds both turns.
func TestTalkToAssistant(t *testing.T) {
	sdk := browser.ClientSDK(t)
	eng, err := engines.FromEnv(os.Getenv, nil)
	if err != nil {
		t.Fatalf("load the speech engines: %v", err)
	}
	t.Cleanup(func() { eng.Close() })
	st := harness.Start(t, harness.Options{})
	const greeting, question, answer = "Hello, how can I help you?", "What time do you open tomorrow?", "We open at nine in the morning."
	fake := llmtest.New(llmtest.Reply{Text: answer})
	t.Cleanup(fake.Close)
	model, err := llm.New(llm.Config{BaseURL: fake.URL(), APIKey: "test-key", Model: "fake-model"})
	if err != nil {
		t.Fatal(err)
	}
	st.StartWorker(t, func(c *worker.Config) { c.MaxJobs = 1 },
		worker.Options{NewVAD: eng.NewVAD, Recognizer: speechtest.KeepTurns(t, eng.Recognizer), Voices: eng.Voices.Voices(), Model: model})
	var a struct {
		ID string `json:"id"`
	}
	harness.Must(t, st.Do(t, "POST", "/v1/assistants", map[string]any{"name": "Acme assistant", "system_prompt": "You answer for Acme Co.",
		"greeting": greeting, "avatar_id": "ava_theo"}, &a), 201, "create assistant")
	harness.Must(t, st.Do(t, "POST", "/v1/assistants/"+a.ID+"/publish", nil, nil), 201, "publish")

	srv := NewServer(Config{APIURL: st.URL, APIKey: st.APIKey, AssistantID: a.ID, Media: "video", ClientSDK: sdk},
		slog.New(slog.DiscardHandler))
	backend := httptest.NewServer(srv.Handler())
	t.Cleanup(backend.Close)
	// The fake microphone is silent until the greeting is over; then the visitor asks.
	mic := browser.NewMicrophone(t)
	b := browser.Launch(t, mic.Arg())
	p := b.Open(backend.URL)
	p.WatchSound("window.callUs.level")
	p.Click("#assistant")
	p.WaitFor("the page to join the web call", `document.body.dataset.state === 'connected'`, 30*time.Second, nil)

	var info map[string]any
	p.Eval(`window.callUs.session`, &info)
	keys := make([]string, 0, len(info))
	for k := range info {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	raw, _ := json.Marshal(info)
	if want := []string{"expires_at", "participant_token", "rtc_url", "session_id"}; !slices.Equal(keys, want) || strings.Contains(string(raw), st.APIKey) {
		t.Errorf("the browser got %v, want only %v and never the key", keys, want)
	}
	sessionID, _ := info["session_id"].(string)
	p.WaitForRemoteMedia("the avatar's video decoded and its audio", callUsRoom, "#remote-video",
		`m.width > 0 && m.framesDecoded > 30 && m.audioEnergy > 0`, 30*time.Second)
	theo, _ := avatar.Lookup("ava_theo")
	p.CheckVideoShows("#remote-video", filepath.Join(t.TempDir(), "talk-to-assistant.png"), theo.Backdrop)
	var selfView bool
	p.Eval(`document.getElementById('self-view').dataset.live === '1' && document.getElementById('self-view').videoWidth > 0`, &selfView)
	if !selfView {
		t.Error("the page does not show its own camera")
	}

	// The question, once the greeting has been over for 1.5 s: the model gets what the
	// recogniser heard; the reply reaches the page.
	greetedAt := p.WaitForSoundAfter("the greeting at the page", 0, 20*time.Second)
	q := mic.AskAfterGreeting(p, callUsRoom, question)
	harness.WaitFor(t, 40*time.Second, "the model to be asked", func() bool { return len(fake.Requests()) > 0 })
	repliedAt := p.WaitForSoundAfter("the reply at the page", q.End(), 30*time.Second)
	// A pause in Chromium's fake microphone may split the question over two caller
	// turns: the request the reply answers holds them all.
	reqs := fake.Requests()
	var said []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "user" {
			said = append(said, m.Content)
		}
	}
	if !sphinx.Half(strings.Join(said, " "), question) {
		t.Errorf("the model was asked %q, want most words of %q", said, question)
	}
	var caps []struct {
		Speaker, Text string
		Final         bool
	}
	p.WaitFor("captions of both sides", `(() => {
  const c = window.callUs.captions.map((x) => ({ speaker: x.speaker, text: x.text, final: x.final }));
  return c.filter((x) => x.speaker === 'you' && x.final).length >= 1 && c.filter((x) => x.speaker === 'assistant' && x.final).length >= 2 && c;
})()`, 20*time.Second, &caps)
	t.Logf("from the click: greeting heard at %.0f ms, the question asked at %.0f ms, the reply at %.0f ms; captions %+v", greetedAt, q.At, repliedAt, caps)
	var micPeak float64
	p.Eval(`window.callUs.micPeak`, &micPeak)
	if micPeak < 0.01 {
		t.Errorf("the microphone meter peaked at %.4f, want the question's level", micPeak)
	}

	p.Click("#hangup")
	p.WaitFor("the page to show the end", `document.body.dataset.state === 'ended'`, 10*time.Second, nil)
	var ses sessionObj
	harness.WaitFor(t, 15*time.Second, "the session to end", func() bool {
		harness.Must(t, st.Do(t, "GET", "/v1/sessions/"+sessionID, nil, &ses), 200, "get session")
		return ses.Status == "ended"
	})
	harness.WaitFor(t, 15*time.Second, "call.ended", func() bool {
		evs, err := st.Store.ListEvents(context.Background(), st.AccountID, callevent.TypeCallEnded, listing.Query{Limit: listing.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(evs, func(e callevent.Event) bool { return eventtest.ForCall(ses.CallID)(e.Data) })
	})
	var rec struct {
		Platform   string         `json:"platform"`
		EndReason  string         `json:"end_reason"`
		Transcript []persona.Turn `json:"transcript"`
	}
	harness.Must(t, st.Do(t, "GET", "/v1/calls/"+ses.CallID, nil, &rec), 200, "get call")
	tr := rec.Transcript
	var heard []string
	for i := 1; i < len(tr)-1; i++ {
		if tr[i].Speaker == "caller" {
			heard = append(heard, tr[i].Text)
		}
	}
	if rec.Platform != "web" || rec.EndReason != "remote_hangup" || len(tr) < 3 || len(heard) != len(tr)-2 || tr[0].Text != greeting ||
		!sphinx.Half(strings.Join(heard, " "), question) || tr[len(tr)-1].Text != answer {
		t.Errorf("record on call.ended = %+v, want the web call ended by the hang-up with the greeting, the question and the answer", rec)
	}
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
		"no key":                  {"CALL_US_HANDLE": "+1555", "LIVEKIT_CLIENT_JS": "/sdk.js"},
		"no handle nor assistant": {"BRIDGELINE_API_KEY": "k", "LIVEKIT_CLIENT_JS": "/sdk.js"},
		"bad assistant id":        {"BRIDGELINE_API_KEY": "k", "CALL_US_ASSISTANT_ID": "ada", "LIVEKIT_CLIENT_JS": "/sdk.js"},
		"bad media":               {"BRIDGELINE_API_KEY": "k", "CALL_US_HANDLE": "+1555", "CALL_US_MEDIA": "smell", "LIVEKIT_CLIENT_JS": "/sdk.js"},
		"bad url":                 {"BRIDGELINE_API_KEY": "k", "CALL_US_HANDLE": "+1555", "BRIDGELINE_API_URL": "ftp://x", "LIVEKIT_CLIENT_JS": "/sdk.js"},
	} {
		if _, err := ConfigFromEnv(func(k string) string { return bad[k] }); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	assistantOnly := map[string]string{"BRIDGELINE_API_KEY": "k", "CALL_US_ASSISTANT_ID": "asst_01", "LIVEKIT_CLIENT_JS": "/sdk.js"}
	if _, err := ConfigFromEnv(func(k string) string { return assistantOnly[k] }); err != nil {
		t.Errorf("an assistant without a handle: %v", err)
	}
}
