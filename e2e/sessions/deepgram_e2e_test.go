package sessions_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/mediafleet/llm"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest/sphinx"
	"github.com/bridgeline/bridgeline/mediafleet/stt/deepgram"
	"github.com/bridgeline/bridgeline/mediafleet/stt/deepgram/deepgramtest"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
)

// saying is what the sim caller is saying, for the fake recogniser: the words it hears
// in a stretch of speech are these (the first of them, three a second, while interim).
// A final result gives the words no earlier final result of the same text gave, so a
// question finalised in two parts (a Flush in a pause inside it) is heard once, not
// twice.
type saying struct {
	mu    sync.Mutex
	text  string
	given int // words of text already in a final result
}

func (s *saying) set(text string) {
	s.mu.Lock()
	s.text, s.given = text, 0
	s.mu.Unlock()
}

func (s *saying) words(audio []int16, final bool) string {
	loud := false
	for _, v := range audio {
		loud = loud || v > 300 || v < -300
	}
	if !loud {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w := strings.Fields(s.text)[s.given:]
	if final {
		s.given += len(w)
		return strings.Join(w, " ")
	}
	return strings.Join(w[:min(len(w), max(1, len(audio)*3/deepgramtest.Rate))], " ")
}

// TestStreamingRecognitionEndToEnd: an assistant call on the whole local stack whose
// persona worker recognises the caller with the Deepgram client, against the fake
// service on a loopback socket (the real protocol), and pocketsphinx behind it. The
// caller (the sim party, flite through Opus and LiveKit) asks three questions on one
// call: the model gets the service's words; the socket drops in the middle of the
// second question and the model still gets all of it; with the service down, the third
// is transcribed by pocketsphinx from the audio the client kept.
func TestStreamingRecognitionEndToEnd(t *testing.T) {
	st := tenant(t)
	eng := realEngines(t)
	say := &saying{}
	const key = "dg-e2e-key"
	srv := deepgramtest.New(deepgramtest.Config{Key: key, FinalizeDelay: 100 * time.Millisecond,
		InterimEvery: 250 * time.Millisecond, Words: say.words})
	t.Cleanup(srv.Close)
	dg, err := deepgram.New(deepgram.Config{APIKey: key, BaseURL: srv.URL(), Fallback: eng.Recognizer})
	if err != nil {
		t.Fatal(err)
	}
	fake := llmtest.New(llmtest.Reply{Text: "Certainly."})
	t.Cleanup(fake.Close)
	model, err := llm.New(llm.Config{BaseURL: fake.URL(), Model: "fake-model"})
	if err != nil {
		t.Fatal(err)
	}
	st.StartWorker(t, nil, worker.Options{NewVAD: eng.NewVAD, Recognizer: dg, Voices: eng.Voices.Voices(), Model: model})
	publishAssistant(t, st, "Front desk", "Hello, how can I help you?", "ava_theo")
	c := placeConvCall(t, st)

	// lastQuestion waits for the model's request for a turn and returns the caller's text.
	asked := 0
	lastQuestion := func(t *testing.T) string {
		t.Helper()
		asked++
		harness.WaitFor(t, 20*time.Second, "the model's request", func() bool { return len(fake.Requests()) >= asked })
		msgs := fake.Requests()[asked-1].Messages
		return msgs[len(msgs)-1].Content
	}

	say.set(qOpen)
	q := c.say(qOpen)
	if got := lastQuestion(t); got != qOpen {
		t.Errorf("the model got %q, want the service's words %q", got, qOpen)
	}
	c.waitQuiet(c.heardAfter(q.End, "the first answer").Start, "the first answer")

	// The socket drops half a second into the question.
	say.set(qRooms)
	i := c.sayAsync(qRooms)
	harness.WaitFor(t, 10*time.Second, "the question's onset", func() bool { return !c.bot.Said()[i].Start.IsZero() })
	time.Sleep(time.Until(c.bot.Said()[i].Start.Add(500 * time.Millisecond)))
	srv.DropAll()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u, err := c.bot.WaitSaid(ctx, i)
	if err != nil {
		t.Fatal(err)
	}
	if got := lastQuestion(t); got != qRooms {
		t.Errorf("across the dropped socket the model got %q, want the whole question %q", got, qRooms)
	}
	c.waitQuiet(c.heardAfter(u.End, "the second answer").Start, "the second answer")

	// Down: pocketsphinx transcribes the turn.
	srv.SetConfig(func(c *deepgramtest.Config) { c.Down = true })
	srv.DropAll()
	time.Sleep(300 * time.Millisecond) // its first attempt to connect again is refused
	q = c.say(qDeliver)
	if got := lastQuestion(t); !sphinx.Most(got, qDeliver) {
		t.Errorf("with the service down the model got %q, want most words of %q from pocketsphinx", got, sphinxWords(qDeliver))
	}
	c.waitQuiet(c.heardAfter(q.End, "the third answer").Start, "the third answer")

	r := c.hangUp()
	checkTurns(t, r.Turns, "assistant", "caller", "assistant", "caller", "assistant", "caller", "assistant")
	recv := srv.Received()
	if len(recv) < 2 || recv[0].Auth != "Token "+key || recv[0].Query["encoding"] != "linear16" || recv[0].Finalizes < 1 || recv[1].Samples == 0 {
		t.Errorf("the service saw %+v; want the key and linear16 on the first connection, a Finalize, and the second question's audio again on the next", recv)
	}
	if m := r.Metrics; m.STTFinalMS != nil {
		t.Logf("stt_final p50 %d ms, p95 %d ms (the fake's own delay 100 ms; the third turn is pocketsphinx's)", m.STTFinalMS.P50, m.STTFinalMS.P95)
	}
}
