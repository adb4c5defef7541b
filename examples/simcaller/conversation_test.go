package simcaller

import (
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/examples/internal/browser"
	"github.com/bridgeline/bridgeline/mediafleet/engines"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest/sphinx"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// A person asks an assistant a question from the sim's page: Chromium's fake microphone
// speaks it (flite) once the greeting has been over for 1.5 s, and the persona, on the
// real speech engines (Silero VAD, pocketsphinx, flite) with the built-in responder of a
// deployment without a language model, answers by repeating what it heard. The call
// record's transcript shows the question's words and the answer after it.
func TestAskAssistantFromPage(t *testing.T) {
	browser.Setup(t)
	eng, err := engines.FromEnv(os.Getenv, nil)
	if err != nil {
		t.Fatalf("load the speech engines: %v", err)
	}
	t.Cleanup(func() { eng.Close() }) // after the worker, stopped by an earlier cleanup
	st := harness.Start(t, harness.Options{})
	st.StartWorker(t, func(c *worker.Config) { c.MaxJobs = 1 },
		worker.Options{NewVAD: eng.NewVAD, Recognizer: speechtest.KeepTurns(t, eng.Recognizer), Voices: eng.Voices.Voices()})

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

	// The fake microphone is silent until the greeting is over; then the caller asks.
	const question = "What time do you open tomorrow?"
	mic := browser.NewMicrophone(t)
	b := browser.Launch(t, mic.Arg())
	p := b.Open(st.URL + "/sim/?to=" + url.QueryEscape(harness.Line1))
	p.Eval(`document.getElementById('media').value = 'audio'`, nil)
	// The page keeps when it hears the line (level above silence), from the click.
	p.WatchSound("window.simCaller.level")
	p.Click("#call")
	p.WaitFor("the page to join the room", `document.body.dataset.state === 'connected'`, 30*time.Second, nil)
	var simCallID string
	p.Eval(`window.simCaller.call.id`, &simCallID)
	sc, err := st.Sim.Get(simCallID)
	if err != nil {
		t.Fatal(err)
	}

	// The question, once the greeting has been over for 1.5 s; the answer reaches the page.
	greetedAt := p.WaitForSoundAfter("the greeting at the page", 0, 40*time.Second)
	q := mic.AskAfterGreeting(p, "window.simCaller.room", question)
	answeredAt := p.WaitForSoundAfter("the answer at the page", q.End()+300, 40*time.Second)
	// The answer lasts a few seconds: hang up once it has been quiet for a second.
	p.WaitForQuiet("the end of the answer", time.Second, 30*time.Second)
	p.Click("#hangup")
	p.WaitFor("the page to show the end", `document.body.dataset.state === 'ended'`, 10*time.Second, nil)
	t.Logf("from the click: greeting heard at %.0f ms, the question asked at %.0f ms and ended at about %.0f ms, the answer heard at %.0f ms",
		greetedAt, q.At, q.End(), answeredAt)

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
