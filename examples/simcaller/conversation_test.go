package simcaller

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/examples/internal/browser"
	"github.com/bridgeline/bridgeline/mediafleet/engines"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest/sphinx"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// A person asks an assistant a question from the sim's page: Chromium's fake microphone
// speaks it (flite) once the greeting is over, and the persona, on the real speech engines
// (Silero VAD, pocketsphinx, flite) with the built-in responder of a deployment without a
// language model, answers by repeating what it heard. The call record's transcript shows
// the question's words and the answer after it.
func TestAskAssistantFromPage(t *testing.T) {
	browser.Setup(t)
	eng, err := engines.FromEnv(nil)
	if err != nil {
		t.Fatalf("load the speech engines: %v", err)
	}
	t.Cleanup(func() { eng.Close() }) // after the worker, stopped by an earlier cleanup
	st := harness.Start(t, harness.Options{})
	st.StartWorker(t, func(c *worker.Config) { c.MaxJobs = 1 },
		worker.Options{NewVAD: eng.NewVAD, Recognizer: eng.Recognizer, Voices: eng.Voices.Voices()})

	const greeting = "Hello, how can I help you?"
	var asst struct {
		ID string `json:"id"`
	}
	harness.Must(t, st.Do(t, "POST", "/v1/assistants", map[string]any{
		"name": "Front desk", "system_prompt": "You answer calls for Test Co.", "greeting": greeting, "avatar_id": "ava_theo",
	}, &asst), 201, "create assistant")
	harness.Must(t, st.Do(t, "POST", "/v1/assistants/"+asst.ID+"/publish", nil, nil), 201, "publish")
	harness.Must(t, st.Do(t, "POST", "/v1/lines/"+st.Lines[harness.Line1].ID+"/assign",
		map[string]string{"assistant_id": asst.ID}, nil), 200, "assign")

	// The microphone starts when the page joins the room; the greeting (under two
	// seconds) starts about a second after the answer, so four seconds of silence let it
	// finish before the question.
	const question = "What time do you open tomorrow?"
	wav := QuestionWAV(t, question, 4*time.Second)
	b := browser.Launch(t, browser.FakeMicrophone(wav))
	p := b.Open(st.URL + "/sim/?to=" + url.QueryEscape(harness.Line1))
	p.Eval(`document.getElementById('media').value = 'audio'`, nil)
	p.Click("#call")
	p.WaitFor("the page to join the room", `document.body.dataset.state === 'connected'`, 30*time.Second, nil)
	var simCallID string
	p.Eval(`window.simCaller.call.id`, &simCallID)
	sc, err := st.Sim.Get(simCallID)
	if err != nil {
		t.Fatal(err)
	}

	// The page keeps when it hears the line (level above silence), from the microphone's
	// start, about when the page joined; the question ends when the WAV's speech does.
	p.Eval(soundWatch, nil)
	asked := wavDuration(t, wav) - 500*time.Millisecond // lead and speech, without the WAV's 500 ms tail
	var answeredAt float64
	p.WaitFor("the answer at the page", fmt.Sprintf(`window.__sounds.find((t) => t > %d)`, (asked+300*time.Millisecond).Milliseconds()),
		40*time.Second, &answeredAt)
	// The answer lasts a few seconds: hang up once it has been quiet for a second.
	p.WaitFor("the end of the answer", `(() => { const s = window.__sounds; return s.length > 0 && performance.now() - window.__t0 - s[s.length-1] > 1000; })()`,
		30*time.Second, nil)
	p.Click("#hangup")
	p.WaitFor("the page to show the end", `document.body.dataset.state === 'ended'`, 10*time.Second, nil)
	t.Logf("the page heard the answer %.0f ms after it joined; the question ended at about %v", answeredAt, asked)

	var rec struct {
		Status     string         `json:"status"`
		Transcript []persona.Turn `json:"transcript"`
	}
	var raw json.RawMessage
	deadline := time.Now().Add(20 * time.Second)
	for {
		st.Do(t, "GET", "/v1/calls/"+sc.CallID, nil, &raw)
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatalf("call record %s: %v", raw, err)
		}
		if rec.Status == "ended" && len(rec.Transcript) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no completed call record within 20 s; last: %s", raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
	got := rec.Transcript
	if len(got) != 3 {
		t.Fatalf("transcript %+v, want the greeting, the question and the answer", got)
	}
	if got[0].Speaker != persona.SpeakerAssistant || got[0].Text != greeting || got[0].Interrupted {
		t.Errorf("first turn %+v, want the whole greeting", got[0])
	}
	caller, answer := got[1], got[2]
	t.Logf("the persona heard %q (%d-%d ms after the answer) and answered %q (from %d ms)", caller.Text, caller.StartMS, caller.EndMS, answer.Text, answer.StartMS)
	if caller.Speaker != persona.SpeakerCaller || !sphinx.Half(caller.Text, question) {
		t.Errorf("second turn %+v, want the caller saying at least half the words of %q", caller, question)
	}
	// The end of the turn is the persona's silence after the question: the browser sends
	// almost nothing while its caller is quiet (Opus DTX), and that silence must count.
	if took := time.Duration(answer.StartMS-caller.EndMS) * time.Millisecond; took > 1500*time.Millisecond {
		t.Errorf("the answer started %v after the question's end, want within 1.5 s (end of turn 400 ms)", took)
	}
	// The built-in responder repeats what it heard.
	if answer.Speaker != persona.SpeakerAssistant || answer.StartMS < caller.EndMS || !strings.Contains(answer.Text, "I heard: "+caller.Text) {
		t.Errorf("third turn %+v, want the assistant after the caller, repeating %q", answer, caller.Text)
	}
}

// soundWatch records, every 20 ms, when the line's audio level is above silence, in ms
// from now (about when the page joined the room and its microphone started).
const soundWatch = `(() => {
  window.__t0 = performance.now();
  window.__sounds = [];
  setInterval(() => {
    if (window.simCaller.level > 0.02) window.__sounds.push(performance.now() - window.__t0);
  }, 20);
  return true;
})()`

// wavDuration is how long a 16-bit mono WAV file plays.
func wavDuration(t *testing.T, path string) time.Duration {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 44 {
		t.Fatalf("read %s: %v", path, err)
	}
	rate := binary.LittleEndian.Uint32(b[24:28])
	return time.Duration(len(b)-44) * time.Second / time.Duration(2*rate)
}
