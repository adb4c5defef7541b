// Package webcall holds the browser tests of web calls through the hosted join page
// (shared/joinpage): headless Chromium (Debian's) with a fake camera and a fake
// microphone that speaks a question opens a web call's join_url on the whole local stack
// (examples/call-us tests the customer's own page the same way), and so does Debian's
// stock Firefox ESR, whose fake microphone is a tone (firefox_test.go).
package webcall

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
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
	"github.com/bridgeline/bridgeline/mediafleet/speechtest"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest/sphinx"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/joinpage"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/lktoken"
	"github.com/bridgeline/bridgeline/shared/persona"
)

func TestMain(m *testing.M) {
	lksdk.SetLogger(protologger.GetDiscardLogger())
	os.Exit(m.Run())
}

const (
	greeting = "Hello, how can I help you?"
	question = "What time do you open tomorrow?"
	answer   = "We open at nine in the morning."
)

// webCall is POST /v1/sessions's answer to a web call.
type webCall struct {
	ID               string `json:"id"`
	CallID           string `json:"call_id"`
	RTCURL           string `json:"rtc_url"`
	ParticipantToken string `json:"participant_token"`
	JoinURL          string `json:"join_url"`
}

func createWebCall(t *testing.T, st *harness.Stack, assistantID, media string) webCall {
	t.Helper()
	var w webCall
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/sessions", map[string]any{"mode": "assistant", "assistant_id": assistantID,
		"media": media}, &w), http.StatusCreated, "create a web call")
	if w.JoinURL == "" {
		t.Fatalf("web call %+v has no join_url", w)
	}
	return w
}

func publish(t *testing.T, st *harness.Stack) string {
	t.Helper()
	var a struct {
		ID string `json:"id"`
	}
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants", map[string]any{"name": "Front desk", "system_prompt": "You answer calls for Test Co.",
		"greeting": greeting, "avatar_id": "ava_iris"}, &a), http.StatusCreated, "create assistant")
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants/"+a.ID+"/publish", nil, nil), http.StatusCreated, "publish")
	return a.ID
}

// captionsJS lists the page's captions without their elements.
const captionsJS = `window.joinPage.captions.map((c) => ({ segment: c.segment, speaker: c.speaker, identity: c.identity, text: c.text, final: c.final }))`

type pageCaption struct {
	Segment, Speaker, Identity, Text string
	Final                            bool
}

// TestJoinPage: a visitor opens a web call's join_url in Chromium: the page shows the
// account's branding and a Start button that asks for the microphone and the camera; the
// assistant's video (the avatar) plays and the greeting is heard; once it is over, the
// fake microphone asks a question, the fake OpenAI-compatible model receives what the
// recogniser heard, the reply's audio reaches the page, and captions of both sides
// appear; Hang up ends the call, and the record read once call.ended exists holds both
// turns.
func TestJoinPage(t *testing.T) {
	browser.Setup(t)
	st, fake, asst := assistantStack(t)

	// The fake microphone is silent until the greeting is over; then the visitor asks.
	mic := browser.NewMicrophone(t)
	b := browser.Launch(t, mic.Arg())
	w := createWebCall(t, st, asst, "video")
	if !strings.HasPrefix(w.JoinURL, st.URL+joinpage.Path+"#token=") {
		t.Fatalf("join_url %q, want the stack's own page with the token in the fragment", w.JoinURL)
	}
	p := b.Open(w.JoinURL)
	checkReady(t, p)

	p.WatchSound("window.joinPage.remoteLevel")
	p.Click("#start")
	p.WaitFor("the page to join the call", `document.body.dataset.state === 'connected'`, 30*time.Second, nil)
	// LiveKit accepted the token: the page shows the account's name from it now.
	var brandName string
	p.Eval(`document.getElementById('brand').textContent`, &brandName)
	if brandName != "Test Co" {
		t.Errorf("in the call the page names %q, want the account's name Test Co", brandName)
	}
	m := p.WaitForRemoteMedia("the assistant's video decoded and its audio", "window.joinPage.room", "#remote-video",
		`m.width > 0 && m.framesDecoded > 30 && m.audioEnergy > 0`, 30*time.Second)
	t.Logf("the page decodes %dx%d video (%d frames), audio energy %.3g", m.Width, m.Height, m.FramesDecoded, m.AudioEnergy)
	greetedAt := p.WaitForSoundAfter("the greeting at the page", 0, 20*time.Second)
	av, _ := avatar.Lookup("ava_iris")
	p.CheckVideoShows("#remote-video", shotPath(t, "join-page.png"), av.Backdrop)

	// The question, once the greeting has been over for 1.5 s: the model gets what the
	// recogniser heard; the reply reaches the page.
	q := mic.AskAfterGreeting(p, "window.joinPage.room", question)
	harness.WaitFor(t, 30*time.Second, "the model to be asked", func() bool { return len(fake.Requests()) > 0 })
	reqs := fake.Requests()
	asked := reqs[0].Messages[len(reqs[0].Messages)-1]
	if asked.Role != "user" || !sphinx.Half(asked.Content, question) {
		t.Errorf("the model was asked %+v, want most words of %q", asked, question)
	}
	repliedAt := p.WaitForSoundAfter("the reply at the page", q.End(), 30*time.Second)
	t.Logf("from Start: greeting heard at %.0f ms, the question asked at %.0f ms, the reply at %.0f ms", greetedAt, q.At, repliedAt)
	// The microphone was silent until the question, which came on a capture opened anew
	// (restartTrack): the visitor's level meter follows it.
	var peak float64
	p.Eval(`window.joinPage.peak`, &peak)
	if peak < 0.01 {
		t.Errorf("the microphone meter peaked at %.4f after the question, want the reopened capture metered", peak)
	}

	var caps []pageCaption
	p.WaitFor("captions of both sides", `(() => {
  const c = `+captionsJS+`;
  const you = c.filter((x) => x.speaker === 'you' && x.final), them = c.filter((x) => x.speaker === 'assistant' && x.final);
  return you.length >= 1 && them.length >= 2 && c;
})()`, 20*time.Second, &caps)
	t.Logf("captions: %+v", caps)
	var you, them []pageCaption
	for _, c := range caps {
		if c.Speaker == "you" {
			you = append(you, c)
		} else {
			them = append(them, c)
		}
	}
	if you[0].Text != asked.Content {
		t.Errorf("the caller's caption %q, want the words the model was asked %q", you[0].Text, asked.Content)
	}
	if !sphinx.Half(you[0].Text, question) || them[0].Text != greeting || !strings.Contains(them[1].Text, "nine in the morning") {
		t.Errorf("captions %+v, want the greeting, the question and the answer", caps)
	}
	var shownLines []string
	p.Eval(`Array.from(document.querySelectorAll('#captions li')).map((li) => li.textContent)`, &shownLines)
	if !slices.ContainsFunc(shownLines, func(l string) bool { return strings.HasPrefix(l, "You: ") }) ||
		!slices.ContainsFunc(shownLines, func(l string) bool { return strings.HasPrefix(l, "Front desk: ") }) {
		t.Errorf("caption lines on the page %q, want the visitor's and the assistant's", shownLines)
	}

	checkTokenKept(t, p, st, w)

	// Hang up: the call ends, and its record on call.ended holds both turns.
	rec := hangUp(t, p, st, w)
	// The question may reach the record as more than one caller turn: a stall of
	// Chromium's packets longer than the worker waits for late audio (2 s) is a pause to
	// the recogniser, which then ends the turn there (the first part is what the model
	// was asked).
	tr := rec.Transcript
	asking := len(tr) >= 3 && !slices.ContainsFunc(tr[1:len(tr)-1], func(turn persona.Turn) bool { return turn.Speaker != persona.SpeakerCaller })
	if rec.Platform != "web" || rec.Status != "ended" || rec.EndReason != "remote_hangup" || !asking ||
		tr[0].Text != greeting || !sphinx.Half(tr[1].Text, question) || tr[len(tr)-1].Text != answer {
		t.Errorf("record on call.ended = %+v, want the web call ended by the hang-up with the greeting, the question and the answer", rec)
	} else if tr[1].Text != asked.Content {
		t.Errorf("the record's first caller turn %q, want the words the model was asked %q", tr[1].Text, asked.Content)
	}
}

// callRecord is the part of GET /v1/calls/{id} the join page's tests check.
type callRecord struct {
	Platform, Status string
	EndReason        string         `json:"end_reason"`
	Transcript       []persona.Turn `json:"transcript"`
}

// hangUp presses Hang up, waits for the page to show the end and for call.ended, and
// returns the call's record then.
func hangUp(t *testing.T, p *browser.Page, st *harness.Stack, w webCall) callRecord {
	t.Helper()
	p.Click("#hangup")
	p.WaitFor("the page to show the end", `document.body.dataset.state === 'ended'`, 10*time.Second, nil)
	waitEnded(t, st, w.CallID)
	var rec callRecord
	harness.Must(t, st.Do(t, http.MethodGet, "/v1/calls/"+w.CallID, nil, &rec), http.StatusOK, "GET call")
	return rec
}

// checkTokenKept: the token went to LiveKit (which it authenticates with) and to no
// request to the API's host: not in an address, not in a Referer.
func checkTokenKept(t *testing.T, p *browser.Page, st *harness.Stack, w webCall) {
	t.Helper()
	for _, r := range p.Requests() {
		if strings.HasPrefix(r.URL, st.URL) && r.Type != "document" && (strings.Contains(r.URL, w.ParticipantToken) || strings.Contains(r.Referer, w.ParticipantToken)) {
			t.Errorf("the page sent the token to the API's host: %+v", r)
		}
		if strings.Contains(r.URL, "/favicon.ico") {
			t.Errorf("the browser asked for %s (a 404): the page names its own icon", r.URL)
		}
	}
}

// assistantStack starts the whole stack with a persona worker on the real speech
// engines and the fake model (answering answer), and publishes the assistant the calls
// go to.
func assistantStack(t *testing.T) (*harness.Stack, *llmtest.Server, string) {
	t.Helper()
	eng, err := engines.FromEnv(os.Getenv, nil)
	if err != nil {
		t.Fatalf("load the speech engines: %v", err)
	}
	t.Cleanup(func() { eng.Close() })
	st := harness.Start(t, harness.Options{})
	fake := llmtest.New(llmtest.Reply{Text: answer})
	t.Cleanup(fake.Close)
	model, err := llm.New(llm.Config{BaseURL: fake.URL(), APIKey: "test-key", Model: "fake-model"})
	if err != nil {
		t.Fatal(err)
	}
	st.StartWorker(t, func(c *worker.Config) { c.MaxJobs = 1 },
		worker.Options{NewVAD: eng.NewVAD, Recognizer: speechtest.KeepTurns(t, eng.Recognizer), Voices: eng.Voices.Voices(), Model: model})
	return st, fake, publish(t, st)
}

// checkReady waits for the join page to be ready, and checks it shows, before Start,
// the account's name and the assistant's (from /join/info, which verified the token),
// in the page and the tab's title, an icon of its own, the microphone prompt and
// Start, with the token out of the address bar.
func checkReady(t *testing.T, p *browser.Page) {
	t.Helper()
	p.WaitFor("the page to be ready", `document.body.dataset.state === 'ready'`, 10*time.Second, nil)
	var shown struct {
		Brand, Who, Title, Icon, Hash, Hint string
		Start                               bool
	}
	p.Eval(`({ brand: document.getElementById('brand').textContent, who: document.getElementById('who').textContent,
  title: document.title, icon: document.getElementById('favicon').href,
  hash: location.hash, hint: document.getElementById('mic-hint').textContent,
  start: !document.getElementById('start').hidden })`, &shown)
	if shown.Brand != "Test Co" || shown.Who != "with Front desk" || shown.Title != "Test Co — Front desk" ||
		!strings.HasPrefix(shown.Icon, "data:image/png") || shown.Hash != "" || !shown.Start || !strings.Contains(shown.Hint, "microphone") {
		t.Errorf("ready page shows %+v, want the company and the assistant (page and title), an icon, the token out of the address bar, Start and the microphone prompt", shown)
	}
}

// shotPath is where a screenshot goes: $SCREENSHOT_DIR to keep it, else the test's
// temporary folder.
func shotPath(t *testing.T, name string) string {
	if d := os.Getenv("SCREENSHOT_DIR"); d != "" {
		return filepath.Join(d, name)
	}
	return filepath.Join(t.TempDir(), name)
}

// waitEnded waits until call.ended of the call is in the store: written with the
// worker's final report, so the record is complete then.
func waitEnded(t *testing.T, st *harness.Stack, callID string) {
	t.Helper()
	harness.WaitFor(t, 15*time.Second, "call.ended", func() bool {
		evs, err := st.Store.ListEvents(context.Background(), st.AccountID, callevent.TypeCallEnded, listing.Query{Limit: listing.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(evs, func(e callevent.Event) bool { return eventtest.ForCall(callID)(e.Data) })
	})
}

// TestJoinPageSaysWhatWentWrong: in Chromium and in Firefox, a link without a token,
// with a malformed one, with an expired one, and for a call that is over each says so,
// and offers no Start or offers it only to fail plainly; on a phone's screen the page
// fits and its buttons are reachable. In a Firefox whose user blocked the microphone,
// Start says so and is offered again.
func TestJoinPageSaysWhatWentWrong(t *testing.T) {
	browser.Setup(t)
	browser.SetupFirefox(t)
	st := harness.Start(t, harness.Options{})
	asst := publish(t, st)
	t.Run("chromium", func(t *testing.T) { saysWhatWentWrong(t, st, asst, "chromium", browser.Launch(t)) })
	t.Run("firefox", func(t *testing.T) { saysWhatWentWrong(t, st, asst, "firefox", browser.LaunchFirefox(t, nil)) })
	t.Run("firefox microphone blocked", func(t *testing.T) {
		w := createWebCall(t, st, asst, "video")
		p := browser.LaunchFirefox(t, browser.FirefoxBlocksMedia).Open(w.JoinURL)
		p.WaitFor("the page to be ready", `document.body.dataset.state === 'ready'`, 10*time.Second, nil)
		p.Click("#start")
		p.WaitFor("the page to say the microphone is blocked", `document.body.dataset.state === 'failed'`, 10*time.Second, nil)
		var got struct {
			Status string
			Start  bool
		}
		p.Eval(`({ status: document.getElementById('status').textContent, start: !document.getElementById('start').hidden })`, &got)
		if !strings.Contains(got.Status, "blocked the microphone") || !got.Start {
			t.Errorf("the page says %+v, want that the browser blocked the microphone, and Start offered again", got)
		}
	})
}

// fitsJS tells whether the page fits its window: no sideways scroll, and the stage and
// the button whose id fills %q wholly on the screen.
const fitsJS = `(() => {
  const vw = window.innerWidth, vh = window.innerHeight;
  const inside = (id) => { const r = document.getElementById(id).getBoundingClientRect(); return r.width > 0 && r.left >= 0 && r.right <= vw && r.bottom <= vh; };
  return { scroll: document.documentElement.scrollWidth <= vw, stage: inside('stage'), button: inside(%q) };
})()`

type fit struct{ Scroll, Stage, Button bool }

// saysWhatWentWrong runs TestJoinPageSaysWhatWentWrong's cases in b, the browser name
// names.
func saysWhatWentWrong(t *testing.T, st *harness.Stack, asst, name string, b *browser.Browser) {
	status := func(p *browser.Page) string {
		var s string
		p.Eval(`document.getElementById('status').textContent`, &s)
		return s
	}
	expectFailed := func(t *testing.T, url, says string) {
		t.Helper()
		p := b.Open(url).For(t)
		p.WaitFor("the page to say what went wrong", `document.body.dataset.state === 'failed'`, 10*time.Second, nil)
		if got := status(p); !strings.Contains(got, says) {
			t.Errorf("the page says %q, want %q", got, says)
		}
	}
	t.Run("no token", func(t *testing.T) { expectFailed(t, st.URL+joinpage.Path, "carries no call") })
	t.Run("malformed token", func(t *testing.T) {
		expectFailed(t, joinpage.URL(st.URL+joinpage.Path, "not-a-token"), "not a valid call link")
	})
	t.Run("expired token", func(t *testing.T) {
		// A real token of the stack's LiveKit key for a live web call's room, its
		// lifetime over.
		w := createWebCall(t, st, asst, "audio")
		lkc := st.LiveKit.Config()
		yes := true
		at := time.Now().Add(-30 * time.Minute)
		tok, err := lktoken.Sign(lkc.APIKey, lkc.APISecret, lktoken.Claims{RegisteredClaims: jwt.RegisteredClaims{Subject: "customer-expired"},
			Video: &lktoken.VideoGrant{RoomJoin: true, Room: w.ID, CanPublish: &yes, CanSubscribe: &yes}}, at, 10*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		expectFailed(t, joinpage.URL(st.URL+joinpage.Path, tok), "expired")
	})
	t.Run("forged token", func(t *testing.T) {
		// A token for a live web call's room, signed with a secret that is not the
		// stack's, naming another business: the page never shows that name, before
		// Start or after LiveKit refused the token.
		w := createWebCall(t, st, asst, "audio")
		yes := true
		tok, err := lktoken.Sign(st.LiveKit.Config().APIKey, strings.Repeat("x", 32), lktoken.Claims{
			RegisteredClaims: jwt.RegisteredClaims{Subject: "customer-forged"},
			Video:            &lktoken.VideoGrant{RoomJoin: true, Room: w.ID, CanPublish: &yes, CanSubscribe: &yes},
			Attributes:       map[string]string{"bridgeline.brand_name": "Evil Bank", "bridgeline.brand_color": "#ff0000"}},
			time.Now(), 10*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		p := b.Open(joinpage.URL(st.URL+joinpage.Path, tok)).For(t)
		// The page's server refuses the token (its signature): no name, no Start.
		p.WaitFor("the page to refuse the link", `document.body.dataset.state === 'failed'`, 10*time.Second, nil)
		var got struct {
			Name, Title, Status string
			Start               bool
		}
		p.Eval(`({ name: document.getElementById('brand').textContent, title: document.title,
  status: document.getElementById('status').textContent, start: !document.getElementById('start').hidden })`, &got)
		if got.Name != "Call" || strings.Contains(got.Title, "Evil") || got.Start || !strings.Contains(got.Status, "not a valid call link") {
			t.Errorf("a forged token's page shows %+v, want no name from it, no Start, and that the link is not valid", got)
		}
	})
	t.Run("call over", func(t *testing.T) {
		w := createWebCall(t, st, asst, "audio")
		harness.Must(t, st.Do(t, http.MethodDelete, "/v1/sessions/"+w.ID, nil, nil), http.StatusOK, "DELETE")
		p := b.Open(w.JoinURL).For(t)
		// On load, with no Start to press first.
		p.WaitFor("the page to say the call is over", `document.body.dataset.state === 'ended'`, 10*time.Second, nil)
		var start bool
		p.Eval(`!document.getElementById('start').hidden`, &start)
		if got := status(p); !strings.HasPrefix(got, "This call has ended.") || start {
			t.Errorf("the page says %q (Start shown: %v), want that the call has ended and no Start", got, start)
		}
	})
	t.Run("a phone's screen", func(t *testing.T) {
		w := createWebCall(t, st, asst, "video")
		p := b.Open(w.JoinURL).For(t)
		p.SetViewport(390, 844)
		p.WaitFor("the page to be ready", `document.body.dataset.state === 'ready'`, 10*time.Second, nil)
		var got fit
		p.Eval(fmt.Sprintf(fitsJS, "start"), &got)
		if !got.Scroll || !got.Stage || !got.Button {
			t.Errorf("on a 390x844 screen before the call: %+v, want no sideways scroll, the stage and Start on the screen", got)
		}
		p.Click("#start")
		p.WaitFor("the page to join", `document.body.dataset.state === 'connected'`, 30*time.Second, nil)
		p.Eval(fmt.Sprintf(fitsJS, "hangup"), &got)
		if !got.Scroll || !got.Stage || !got.Button {
			t.Errorf("on a 390x844 screen in the call: %+v, want no sideways scroll, the stage and Hang up on the screen", got)
		}
		shot := shotPath(t, "join-page-phone-"+name+".png")
		p.Screenshot(shot)
		t.Logf("phone screenshot: %s", shot)
		p.Click("#hangup")
		p.WaitFor("the page to show the end", `document.body.dataset.state === 'ended'`, 10*time.Second, nil)
	})
}
