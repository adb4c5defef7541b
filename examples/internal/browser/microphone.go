package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Microphone is Chromium's fake microphone (FakeMicrophone) as a test speaks into it: its
// file is silence until the test asks a question (AskAfterGreeting), which writes the
// question into the file and reopens the page's microphone, so that Chromium plays the
// file anew. A question at a fixed time after the microphone opened came, on a busy
// machine, before an assistant's greeting or over it (from Start to the greeting took 4
// to 40 s at load 10-34 on 2 cores); asked once the greeting is over, it never meets it.
type Microphone struct {
	t    testing.TB
	path string
}

// NewMicrophone makes the microphone's file, a second of silence, in the test's
// temporary folder.
func NewMicrophone(t testing.TB) *Microphone {
	t.Helper()
	m := &Microphone{t: t, path: filepath.Join(t.TempDir(), "microphone.wav")}
	m.write(tts.EncodeWAV(tts.PCM{Rate: 48000, Samples: make([]int16, 48000)}))
	return m
}

// Arg is the Chromium argument (Launch) that makes this the page's microphone.
func (m *Microphone) Arg() string { return FakeMicrophone(m.path) }

func (m *Microphone) write(wav []byte) {
	m.t.Helper()
	if err := os.WriteFile(m.path, wav, 0o644); err != nil {
		m.t.Fatal(err)
	}
}

// Question is a question the microphone asked, on the page's sound clock (WatchSound).
type Question struct {
	// At is the time just before the page's microphone reopened, in ms.
	At float64
	// Spoken is how long the file plays until the question's speech ends.
	Spoken time.Duration
}

// End is the earliest the question's speech can have ended, in ms: At, and Spoken.
func (q Question) End() float64 { return q.At + float64(q.Spoken.Milliseconds()) }

// questionLead and questionTail are the silences before and after the question in the
// microphone's file.
const (
	questionLead = time.Second
	questionTail = 500 * time.Millisecond
)

// greetingOver is how long the page must have heard nothing after the greeting before
// the question is asked.
const greetingOver = 1500 * time.Millisecond

// askJS reopens the microphone of the page's livekit-client Room (the expression
// filling %s): restartTrack stops the track and captures anew with getUserMedia,
// published in its place, so Chromium's fake microphone plays its file from the start.
// Its value is the time on the page's sound clock just before.
const askJS = `(async () => {
  const at = performance.now() - window.__t0;
  await (%s).localParticipant.getTrackPublication('microphone').track.restartTrack();
  return at;
})()`

// AskAfterGreeting waits until the page, having heard the other side (WatchSound), has
// heard nothing for 1.5 s (the greeting is over: 20 s at most), and then asks text: spoken by flite in the sim
// caller's voice after a second of silence, into the microphone of the page's
// livekit-client Room, which room (a JavaScript expression) names.
func (m *Microphone) AskAfterGreeting(p *Page, room, text string) Question {
	m.t.Helper()
	p.WaitForQuiet("the greeting to end", greetingOver, 20*time.Second)
	wav, err := callerbot.SpokenWAV(context.Background(), persona.SimCallerVoice, text, questionLead, questionTail)
	if err != nil {
		m.t.Fatal(err)
	}
	pcm, err := tts.DecodeWAV(wav)
	if err != nil {
		m.t.Fatal(err)
	}
	m.write(wav)
	q := Question{Spoken: time.Duration(len(pcm.Samples))*time.Second/time.Duration(pcm.Rate) - questionTail}
	p.Eval(fmt.Sprintf(askJS, room), &q.At)
	return q
}

// WatchSound starts the page's sound clock (0 is now) and keeps, every 20 ms, when the
// level that the JavaScript expression level reads (an RMS, 0 to 1) is above silence:
// when the page hears the other side.
func (p *Page) WatchSound(level string) {
	p.t.Helper()
	p.Eval(fmt.Sprintf(`(() => {
  window.__t0 = performance.now();
  window.__sounds = [];
  setInterval(() => { if ((%s) > 0.02) window.__sounds.push(performance.now() - window.__t0); }, 20);
  return true;
})()`, level), nil)
}

// WaitForSoundAfter waits, as WaitFor, until the page hears sound later than after (ms
// on its sound clock), and returns when.
func (p *Page) WaitForSoundAfter(what string, after float64, limit time.Duration) float64 {
	p.t.Helper()
	var at float64
	p.WaitFor(what, fmt.Sprintf(`window.__sounds.find((t) => t > %.0f)`, after), limit, &at)
	return at
}

// WaitForQuiet waits, as WaitFor, until the page has heard sound and then none for
// quiet.
func (p *Page) WaitForQuiet(what string, quiet, limit time.Duration) {
	p.t.Helper()
	p.WaitFor(what, fmt.Sprintf(`(() => { const s = window.__sounds; return s.length > 0 && performance.now() - window.__t0 - s[s.length - 1] > %d; })()`,
		quiet.Milliseconds()), limit, nil)
}
