package webcall

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/examples/internal/browser"
	"github.com/bridgeline/bridgeline/mediafleet/avatar"
)

// TestJoinPageFirefox: a visitor opens a web call's join_url in Firefox (Debian's stock
// ESR, driven over WebDriver BiDi): the page shows the account's branding and the
// microphone prompt, Start opens Firefox's microphone and camera (its fake devices: a
// test picture and a 1 kHz tone, so no question can be asked: the tone reaches the
// page's own meter instead), the assistant's video plays (frames decoded, a screenshot
// of the avatar), the greeting is heard (its audio at the page) and its caption appears;
// Hang up ends the call, and the record read once call.ended exists says so.
func TestJoinPageFirefox(t *testing.T) {
	browser.SetupFirefox(t)
	st, _, asst := assistantStack(t)
	b := browser.LaunchFirefox(t, nil)
	w := createWebCall(t, st, asst, "video")
	p := b.Open(w.JoinURL)
	checkReady(t, p)

	p.WatchSound("window.joinPage.remoteLevel")
	p.Click("#start")
	p.WaitFor("the page to join the call", `document.body.dataset.state === 'connected'`, 30*time.Second, nil)
	m := p.WaitForRemoteMedia("the assistant's video decoded and its audio", "window.joinPage.room", "#remote-video",
		`m.width > 0 && m.framesDecoded > 30 && m.audioEnergy > 0`, 30*time.Second)
	t.Logf("Firefox decodes %dx%d video (%d frames), audio energy %.3g", m.Width, m.Height, m.FramesDecoded, m.AudioEnergy)
	greetedAt := p.WaitForSoundAfter("the greeting at the page", 0, 20*time.Second)
	t.Logf("from Start: greeting heard at %.0f ms", greetedAt)
	av, _ := avatar.Lookup("ava_iris")
	p.CheckVideoShows("#remote-video", shotPath(t, "join-page-firefox.png"), av.Backdrop)

	var caps []pageCaption
	p.WaitFor("the greeting's caption", `(() => {
  const c = `+captionsJS+`;
  return c.some((x) => x.speaker === 'assistant' && x.final) && c;
})()`, 20*time.Second, &caps)
	t.Logf("captions: %+v", caps)
	if i := slices.IndexFunc(caps, func(c pageCaption) bool { return c.Speaker == "assistant" && c.Final }); caps[i].Text != greeting {
		t.Errorf("the assistant's first caption %q, want the greeting %q", caps[i].Text, greeting)
	}
	// On a phone's screen (390x844) the page fits, Hang up is on the screen, and the
	// avatar still shows.
	p.SetViewport(390, 844)
	var got fit
	p.Eval(fmt.Sprintf(fitsJS, "hangup"), &got)
	if !got.Scroll || !got.Stage || !got.Button {
		t.Errorf("Firefox on a 390x844 screen in the call: %+v, want no sideways scroll, the stage and Hang up on the screen", got)
	}
	p.CheckVideoShows("#remote-video", shotPath(t, "join-page-firefox-phone.png"), av.Backdrop)

	var mic struct {
		Peak  float64
		Width string
	}
	p.Eval(`({ peak: window.joinPage.peak, width: document.getElementById('level').style.width })`, &mic)
	t.Logf("the page's microphone meter: peak %.3f, bar %s", mic.Peak, mic.Width)
	if mic.Peak < 0.01 {
		t.Errorf("the page's microphone meter peaked at %.3f: Firefox's microphone (a tone) did not reach it", mic.Peak)
	}

	checkTokenKept(t, p, st, w)

	rec := hangUp(t, p, st, w)
	if rec.Platform != "web" || rec.Status != "ended" || rec.EndReason != "remote_hangup" || len(rec.Transcript) == 0 || rec.Transcript[0].Text != greeting {
		t.Errorf("record on call.ended = %+v, want the web call ended by the hang-up, the greeting first", rec)
	}
}
