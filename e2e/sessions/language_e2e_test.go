package sessions_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/mediafleet/llm"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/stt/deepgram"
	"github.com/bridgeline/bridgeline/mediafleet/stt/deepgram/deepgramtest"
	"github.com/bridgeline/bridgeline/mediafleet/tts/espeak"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// TestSpanishCallEndToEnd: a Spanish version (language es, no voice named) answers a
// sim call on the whole local stack. The caller asks in Spanish, spoken by espeak-ng
// through Opus and LiveKit; the persona worker streams it to the Deepgram fake, which
// hears only language=es and answers with the Spanish words the test scripts; the model
// gets them; the greeting and the reply are synthesised by the Spanish espeak-ng voice
// (the job's version is es, its voice espeak-es-f3) and the caller hears them. The
// record's turns hold the Spanish text.
func TestSpanishCallEndToEnd(t *testing.T) {
	st := tenant(t)
	eng := realEngines(t)
	const (
		key      = "dg-es-key"
		greeting = "Hola, gracias por llamar. ¿En qué puedo ayudarle?"
		question = "¿A qué hora abren mañana?"
		answer   = "Abrimos a las nueve de la mañana."
	)
	say := &saying{}
	srv := deepgramtest.New(deepgramtest.Config{Key: key, FinalizeDelay: 100 * time.Millisecond,
		InterimEvery: 250 * time.Millisecond, Words: say.words, Languages: []string{"es"}})
	t.Cleanup(srv.Close)
	dg, err := deepgram.New(deepgram.Config{APIKey: key, BaseURL: srv.URL(), Fallback: eng.Recognizer})
	if err != nil {
		t.Fatal(err)
	}
	fake := llmtest.New(llmtest.Reply{Text: answer})
	t.Cleanup(fake.Close)
	model, err := llm.New(llm.Config{BaseURL: fake.URL(), Model: "fake-model"})
	if err != nil {
		t.Fatal(err)
	}
	st.StartWorker(t, nil, worker.Options{NewVAD: eng.NewVAD, Recognizer: dg, Voices: eng.Voices.Voices(), Model: model})

	var a assistantObj
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants", map[string]any{"name": "Recepción", "language": "es",
		"system_prompt": "Responde en español.", "greeting": greeting, "avatar_id": "ava_theo"}, &a), http.StatusCreated, "create assistant")
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants/"+a.ID+"/publish", nil, &a), http.StatusCreated, "publish")
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/lines/"+st.Lines[st.Handles[0]].ID+"/assign",
		map[string]any{"assistant_id": a.ID}, nil), http.StatusOK, "assign")

	c := placeConvCall(t, st) // the greeting, heard to its end
	job := dispatchedJob(t, st, record(t, st, c.callID).sessionID(t))
	if job.Version.Language != "es" || persona.VoiceFor(job.Version) != "espeak-es-f3" {
		t.Errorf("job version language %q, voice %q; want es and the Spanish default voice espeak-es-f3",
			job.Version.Language, persona.VoiceFor(job.Version))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pcm, err := (&espeak.Synthesizer{Voice: "es+m3"}).Synthesize(ctx, question)
	if err != nil {
		t.Fatal(err)
	}
	say.set(question)
	i, err := c.bot.Say(question, pcm)
	if err != nil {
		t.Fatal(err)
	}
	u, err := c.bot.WaitSaid(ctx, i)
	if err != nil {
		t.Fatal(err)
	}
	harness.WaitFor(t, 20*time.Second, "the model's request", func() bool { return len(fake.Requests()) >= 1 })
	msgs := fake.Requests()[0].Messages
	if got := msgs[len(msgs)-1].Content; got != question {
		t.Errorf("the model got %q, want the Spanish words %q", got, question)
	}
	c.waitQuiet(c.heardAfter(u.End, "the answer").Start, "the answer")
	if heard, _ := c.bot.SoundAfter("", u.End); heard.End.Sub(heard.Start) < 500*time.Millisecond {
		t.Errorf("the caller heard %v of answer, want the spoken sentence", heard.End.Sub(heard.Start))
	}

	r := c.hangUp()
	checkTurns(t, r.Turns, "assistant", "caller", "assistant")
	if len(r.Turns) == 3 && (r.Turns[0].Text != greeting || r.Turns[1].Text != question || r.Turns[2].Text != answer) {
		t.Errorf("turns %s; want the Spanish greeting, question and answer", transcriptString(r.Turns))
	}
	recv := srv.Received()
	if len(recv) == 0 || recv[0].Query["language"] != "es" || recv[0].Samples == 0 {
		t.Errorf("the service saw %+v; want the caller's audio on a connection with language=es", recv)
	}
}
