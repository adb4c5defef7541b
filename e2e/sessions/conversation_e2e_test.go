package sessions_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/conversation"
	"github.com/bridgeline/bridgeline/mediafleet/engines"
	"github.com/bridgeline/bridgeline/mediafleet/llm"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest/sphinx"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// speech holds the real speech engines (Silero VAD, pocketsphinx, flite), loaded once for
// the test binary: they take about a second and a decoder's memory each time.
var speech struct {
	once sync.Once
	eng  *engines.Engines
	err  error
}

func realEngines(t *testing.T) *engines.Engines {
	t.Helper()
	speech.once.Do(func() { speech.eng, speech.err = engines.FromEnv(os.Getenv, nil) })
	if speech.err != nil {
		t.Fatalf("load the speech engines: %v", speech.err)
	}
	return speech.eng
}

// closeEngines frees the engines after every test ran (from TestMain).
func closeEngines() {
	if speech.eng != nil {
		speech.eng.Close()
	}
}

// Questions the sim caller asks (flite, its own voice); every word is in pocketsphinx's
// dictionary.
const (
	qOpen    = "What time do you open tomorrow?"
	qDeliver = "Do you deliver to my house?"
	qRooms   = "Do you have any rooms available this weekend?"
	qBye     = "Thank you very much, goodbye."
)

// longReply is several sentences: the caller talks over it.
const longReply = "Thank you for asking. We open at nine in the morning every day of the week. " +
	"On Sundays we close early, at four in the afternoon. Our shop is on the corner of the main street, " +
	"next to the bakery. There is parking behind the building."

// script answers the fake model's requests in turn, one reply each; past its end it
// answers "Sorry?".
type script struct {
	n       atomic.Int32
	replies []llmtest.Reply
}

func (s *script) next(llmtest.Request) llmtest.Reply {
	i := int(s.n.Add(1)) - 1
	if i < len(s.replies) {
		return s.replies[i]
	}
	return llmtest.Reply{Text: "Sorry?"}
}

// convCall is one sim call of TestConversationEndToEnd, from the caller's side.
type convCall struct {
	t      *testing.T
	st     *harness.Stack
	simID  string
	callID string
	bot    *callerbot.Bot
}

func placeConvCall(t *testing.T, st *harness.Stack) *convCall {
	t.Helper()
	placed := ring(t, st, "audio", platformsim.PartyOptions{})
	bot := st.Sim.Bot(placed.ID)
	if bot == nil {
		t.Fatalf("sim call %s has no party in the room", placed.ID)
	}
	c := &convCall{t: t, st: st, simID: placed.ID, callID: placed.CallID, bot: bot}
	c.waitQuiet(time.Time{}, "the greeting")
	return c
}

// say makes the caller say text and waits until it has gone out; the utterance's Start
// and End are its speech's onset and end at the caller.
func (c *convCall) say(text string) callerbot.Utterance {
	c.t.Helper()
	u := c.sayAsync(text)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := c.bot.WaitSaid(ctx, u)
	if err != nil {
		c.t.Fatalf("say %q: %v", text, err)
	}
	return got
}

// sayAsync queues text and returns its index in the bot's Said.
func (c *convCall) sayAsync(text string) int {
	c.t.Helper()
	u, err := c.st.Sim.Say(context.Background(), c.simID, text)
	if err != nil {
		c.t.Fatalf("say %q: %v", text, err)
	}
	return u.Index
}

// heardAfter waits for the first sound the caller hears that starts at or after t (the
// reply to something that ended at t).
func (c *convCall) heardAfter(t time.Time, what string) callerbot.Sound {
	c.t.Helper()
	var s callerbot.Sound
	harness.WaitFor(c.t, 20*time.Second, what, func() bool {
		var ok bool
		s, ok = c.bot.SoundAfter("", t)
		return ok
	})
	return s
}

// waitQuiet waits until the caller has heard something that began after since, and then
// nothing for 800 ms (longer than any pause between a reply's sentences).
func (c *convCall) waitQuiet(since time.Time, what string) {
	c.t.Helper()
	harness.WaitFor(c.t, 30*time.Second, "the end of "+what, func() bool {
		ss := c.bot.Sounds()
		if len(ss) == 0 {
			return false
		}
		last := ss[len(ss)-1]
		return !last.Start.Before(since) && !last.Ongoing && time.Since(last.End) > 800*time.Millisecond
	})
}

// hangUp hangs up from the caller's side and returns the completed record.
func (c *convCall) hangUp() recordObj {
	c.t.Helper()
	hangupSim(c.t, c.st, c.simID)
	return c.ended()
}

// ended waits for call.ended (exactly once) and returns the record read as soon as it is
// out: call.ended waits for the worker's final report, so the record it announces
// already holds the whole transcript and the metrics.
func (c *convCall) ended() recordObj {
	c.t.Helper()
	waitEnded(c.t, c.st, c.callID)
	r := record(c.t, c.st, c.callID)
	if r.EndedAt == nil || len(r.Turns) == 0 || r.Metrics == nil || str(r.AssistantReport) != call.ReportReceived {
		c.t.Fatalf("on call.ended the record has ended_at %v, %d turns, metrics %+v, assistant_report %q; want the worker's final report in",
			str(r.EndedAt), len(r.Turns), r.Metrics, str(r.AssistantReport))
	}
	return r
}

// transcriptString shows a transcript one turn a line, for failure messages.
func transcriptString(turns []persona.Turn) string {
	var b strings.Builder
	for _, t := range turns {
		b.WriteString("\n  " + t.Speaker + ": " + t.Text)
		if t.Interrupted {
			b.WriteString(" (interrupted)")
		}
	}
	return b.String()
}

// checkTurns checks a transcript's speakers in order, and that turns start in order and
// last.
func checkTurns(t *testing.T, turns []persona.Turn, speakers ...string) {
	t.Helper()
	ok := len(turns) == len(speakers)
	for i := 0; ok && i < len(turns); i++ {
		ok = turns[i].Speaker == speakers[i] && turns[i].EndMS > turns[i].StartMS &&
			(i == 0 || turns[i].StartMS >= turns[i-1].StartMS)
	}
	if !ok {
		t.Errorf("transcript:%s\nwant speakers %v in order, each turn lasting", transcriptString(turns), speakers)
	}
}

// TestConversationEndToEnd is issue 8's conversation on the whole local stack with the
// real speech engines (Silero VAD on ONNX Runtime, pocketsphinx, flite) and the real
// OpenAI-compatible client talking to a fake server (llmtest): the sim party is the
// caller, speaking with flite, and what it hears is timed at its end of the room.
func TestConversationEndToEnd(t *testing.T) {
	st := tenant(t)
	eng := realEngines(t)
	fake := llmtest.New(llmtest.Reply{Text: "Sorry?"})
	t.Cleanup(fake.Close)
	model, err := llm.New(llm.Config{BaseURL: fake.URL(), APIKey: "test-key", Model: "fake-model"})
	if err != nil {
		t.Fatal(err)
	}
	const llmTimeout = 1500 * time.Millisecond // the hang case's apology comes after it
	st.StartWorker(t, func(c *worker.Config) { c.LLMTimeout = llmTimeout },
		worker.Options{NewVAD: eng.NewVAD, Recognizer: eng.Recognizer, Voices: eng.Voices.Voices(), Model: model})
	const greeting = "Hello, how can I help you?" // short: every call waits for its end
	a := publishAssistant(t, st, "Front desk", greeting, "ava_theo")
	const systemPrompt = "Answer the phone." // publishAssistant's

	// requestsSince are the model requests after the first n.
	requestsSince := func(n int) []llmtest.Request { return fake.Requests()[n:] }
	waitRequests := func(t *testing.T, n, want int) []llmtest.Request {
		t.Helper()
		harness.WaitFor(t, 20*time.Second, "the model's requests", func() bool { return len(requestsSince(n)) >= want })
		return requestsSince(n)
	}

	t.Run("question and answer", func(t *testing.T) {
		const answer = "We open at nine in the morning."
		fake.SetReplies((&script{replies: []llmtest.Reply{{Text: answer}}}).next)
		before := len(fake.Requests())
		c := placeConvCall(t, st)

		q := c.say(qOpen)
		req := waitRequests(t, before, 1)[0]
		if len(req.Messages) != 3 || req.Messages[0] != (llmtest.Message{Role: "system", Content: systemPrompt}) ||
			req.Messages[1] != (llmtest.Message{Role: "assistant", Content: greeting}) || req.Messages[2].Role != "user" ||
			!sphinx.Most(req.Messages[2].Content, qOpen) {
			t.Errorf("the model got %+v, want the system prompt, the greeting and most words of %q", req.Messages, sphinxWords(qOpen))
		}
		if !req.Stream || req.Model != "fake-model" || req.Auth != "Bearer test-key" || !req.HasTool(persona.EndCallTool) {
			t.Errorf("request: stream %v, model %q, auth %q, end_call offered %v", req.Stream, req.Model, req.Auth, req.HasTool(persona.EndCallTool))
		}
		reply := c.heardAfter(q.End, "the reply at the caller")
		t.Logf("recognised %q; end of the question to the reply's first audio at the caller: %v",
			req.Messages[2].Content, reply.Start.Sub(q.End).Round(time.Millisecond))
		c.waitQuiet(reply.Start, "the reply")

		r := c.hangUp()
		checkTurns(t, r.Turns, "assistant", "caller", "assistant")
		if len(r.Turns) == 3 && (r.Turns[0].Text != greeting || r.Turns[1].Text != req.Messages[2].Content || r.Turns[2].Text != answer || r.Turns[2].Interrupted) {
			t.Errorf("transcript:%s\nwant the greeting, what the model was sent, the answer whole", transcriptString(r.Turns))
		}
		if str(r.EndReason) != call.ReasonRemoteHangup || str(r.AssistantID) != a.ID {
			t.Errorf("end reason %q, assistant %q", str(r.EndReason), str(r.AssistantID))
		}
		m := r.Metrics
		if m.Turns == nil || *m.Turns != 1 || m.ResponseMS == nil || m.ResponseMS.P50 <= 0 || m.STTFinalMS == nil ||
			m.LLMFirstTokenMS == nil || m.TTSFirstAudioMS == nil || m.Errors != nil || m.FirstGreetingMS == nil {
			t.Errorf("metrics %+v, want one turn with its figures and no errors", m)
		} else {
			t.Logf("record: response %d ms, stt final %d ms, llm first token %d ms, tts first audio %d ms",
				m.ResponseMS.P50, m.STTFinalMS.P50, m.LLMFirstTokenMS.P50, m.TTSFirstAudioMS.P50)
		}
		// Usage: the billed length from the record's duration; the greeting and the
		// answer synthesised; the model's own token report; the caller's question heard.
		var prompt, completion int64
		for _, u := range fake.Usages()[before:] {
			prompt, completion = prompt+int64(u.PromptTokens), completion+int64(u.CompletionTokens)
		}
		u := r.Usage
		switch {
		case u == nil || r.DurationMS == nil:
			t.Errorf("usage %+v, duration %v: want both on the ended record", u, r.DurationMS)
		case u.DurationMS != *r.DurationMS || u.BillableSeconds != call.BillableSeconds(*r.DurationMS) || u.BillableSeconds == 0:
			t.Errorf("usage %+v, want duration %d ms billed per started second", u, *r.DurationMS)
		case u.TTSCharacters != int64(len(greeting)+len(answer)) || u.Estimated || u.LLMPromptTokens != prompt ||
			u.LLMCompletionTokens != completion || prompt == 0:
			t.Errorf("usage %+v, want %d characters synthesised and the model's %d prompt, %d completion tokens",
				u, len(greeting)+len(answer), prompt, completion)
		case len(r.Turns) == 3 && (u.STTAudioMS < 500 || u.STTAudioMS > r.Turns[1].EndMS-r.Turns[1].StartMS+2000):
			t.Errorf("stt_audio_ms %d, want about the question's %d ms", u.STTAudioMS, r.Turns[1].EndMS-r.Turns[1].StartMS)
		default:
			t.Logf("usage: %+v", *u)
		}
	})

	t.Run("barge-in", func(t *testing.T) {
		const answer = "Yes, we deliver."
		fake.SetReplies((&script{replies: []llmtest.Reply{{Text: longReply}, {Text: answer}}}).next)
		before := len(fake.Requests())
		c := placeConvCall(t, st)

		q1 := c.say(qOpen)
		reply := c.heardAfter(q1.End, "the long reply at the caller")
		// Half a second into the reply's second sentence (a long one), the caller talks
		// over it: mid-sentence, so the moment the audio stops at the caller is the cut's,
		// not a pause between sentences.
		harness.WaitFor(t, 20*time.Second, "the reply's second sentence", func() bool {
			var after []callerbot.Sound
			for _, s := range c.bot.Sounds() {
				if !s.Start.Before(reply.Start) {
					after = append(after, s)
				}
			}
			return len(after) >= 2 && after[len(after)-1].Ongoing && time.Since(after[len(after)-1].Start) > 500*time.Millisecond
		})
		i := c.sayAsync(qDeliver)
		var q2 callerbot.Utterance
		harness.WaitFor(t, 10*time.Second, "the talk-over's onset", func() bool {
			q2 = c.bot.Said()[i]
			return !q2.Start.IsZero()
		})
		// The reply's stretch of sound going on at the onset ends when it stopped
		// reaching the caller.
		var cut callerbot.Sound
		harness.WaitFor(t, 10*time.Second, "the reply to stop at the caller", func() bool {
			var ok bool
			cut, ok = c.bot.SoundAt("", q2.Start)
			return ok && !cut.Ongoing
		})
		stop := cut.End.Sub(q2.Start)
		t.Logf("barge-in: caller's speech onset to the reply's audio stopping at the caller: %v", stop.Round(time.Millisecond))
		if stop <= 0 || stop > 600*time.Millisecond {
			t.Errorf("the reply was heard %v after the caller began talking over it, want it stopped within 600 ms (goal 200 ms)", stop)
		}

		reqs := waitRequests(t, before, 2)
		msgs := reqs[1].Messages
		if len(msgs) != 5 || msgs[3].Role != "assistant" || msgs[3].Content == "" || !strings.HasPrefix(longReply, msgs[3].Content) ||
			len(msgs[3].Content) >= len(longReply) || msgs[4].Role != "user" || !sphinx.Most(msgs[4].Content, qDeliver) {
			t.Errorf("the second request %+v, want the reply as heard (cut) and most words of %q", msgs, sphinxWords(qDeliver))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		u2, err := c.bot.WaitSaid(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		answered := c.heardAfter(u2.End, "the answer to the new question")
		for _, s := range c.bot.Sounds() {
			if s.Start.After(cut.Start) && s.Start.Before(u2.End) {
				t.Errorf("the persona was heard again at %v, while the caller was still talking over it (until %v)", s.Start, u2.End)
			}
		}
		t.Logf("end of the first question to its reply at the caller: %v; of the question over the reply to its answer: %v",
			reply.Start.Sub(q1.End).Round(time.Millisecond), answered.Start.Sub(u2.End).Round(time.Millisecond))
		c.waitQuiet(answered.Start, "the answer")

		r := c.hangUp()
		checkTurns(t, r.Turns, "assistant", "caller", "assistant", "caller", "assistant")
		if len(r.Turns) == 5 {
			if cutTurn := r.Turns[2]; !cutTurn.Interrupted || cutTurn.Text == "" || !strings.HasPrefix(longReply, cutTurn.Text) ||
				len(cutTurn.Text) >= len(longReply) || (len(msgs) == 5 && cutTurn.Text != msgs[3].Content) {
				t.Errorf("cut turn %+v, want interrupted with a prefix of the reply, as the model was sent it", cutTurn)
			}
			if r.Turns[4].Text != answer || r.Turns[4].Interrupted {
				t.Errorf("last turn %+v, want the answer %q whole", r.Turns[4], answer)
			}
		}
		m := r.Metrics
		if m.Turns == nil || *m.Turns != 2 || m.BargeIns == nil || *m.BargeIns != 1 || m.BargeInStopMS == nil || m.ResponseMS == nil {
			t.Errorf("metrics %+v, want two turns and one barge-in with its stop time", m)
		} else {
			t.Logf("record: barge-in stop %d ms (the worker's own, to its audio stopping), response p50 %d p95 %d ms",
				m.BargeInStopMS.P50, m.ResponseMS.P50, m.ResponseMS.P95)
		}
	})

	t.Run("end_call", func(t *testing.T) {
		const bye = "Thank you for calling. Goodbye."
		fake.SetReplies((&script{replies: []llmtest.Reply{{Text: bye, EndCall: true}}}).next)
		before := len(fake.Requests())
		c := placeConvCall(t, st)

		q := c.say(qBye)
		reply := c.heardAfter(q.End, "the goodbye at the caller")
		r := c.ended()
		if str(r.EndReason) != call.ReasonAssistantHangup || str(r.EndedBy) != call.EndedByAssistant || r.Status != call.StatusEnded {
			t.Errorf("record status %s, end reason %q, ended by %q: want ended by the assistant's hang-up", r.Status, str(r.EndReason), str(r.EndedBy))
		}
		if n := len(requestsSince(before)); n != 1 {
			t.Errorf("%d model requests, want 1", n)
		}
		checkTurns(t, r.Turns, "assistant", "caller", "assistant")
		if n := len(r.Turns); n == 3 && (r.Turns[2].Text != bye || r.Turns[2].Interrupted) {
			t.Errorf("last turn %+v, want the goodbye %q whole", r.Turns[2], bye)
		}
		// The caller heard the goodbye to its end before the call ended: from the onset of
		// its first sentence to the end of its last, as long as the turn (whose end also
		// counts the synthesis's trailing silence).
		if len(r.Turns) == 3 {
			var last time.Time
			for _, s := range c.bot.Sounds() {
				if !s.Start.Before(reply.Start) {
					last = s.End
				}
			}
			heard, spoken := last.Sub(reply.Start), time.Duration(r.Turns[2].EndMS-r.Turns[2].StartMS)*time.Millisecond
			t.Logf("the caller heard the goodbye for %v; its turn lasted %v", heard.Round(time.Millisecond), spoken)
			if heard < spoken-700*time.Millisecond {
				t.Errorf("the caller heard the goodbye for %v, its turn lasted %v: cut before its end", heard, spoken)
			}
		}
	})

	t.Run("model error and timeout", func(t *testing.T) {
		const answer = "Yes, we have rooms this weekend."
		fake.SetReplies((&script{replies: []llmtest.Reply{{Status: 503}, {Hang: true}, {Text: answer}}}).next)
		before := len(fake.Requests())
		c := placeConvCall(t, st)

		for i, q := range []string{qOpen, qDeliver} {
			u := c.say(q)
			apology := c.heardAfter(u.End, "the apology")
			took := apology.Start.Sub(u.End)
			t.Logf("model %s: end of the question to the apology at the caller: %v", []string{"5xx", "hang"}[i], took.Round(time.Millisecond))
			if i == 1 && took < llmTimeout {
				t.Errorf("apology for a hanging model after %v, want after the timeout %v", took, llmTimeout)
			}
			c.waitQuiet(apology.Start, "the apology")
		}
		q := c.say(qRooms)
		answered := c.heardAfter(q.End, "the answer after the failures")
		c.waitQuiet(answered.Start, "the answer")
		if n := len(requestsSince(before)); n != 3 {
			t.Errorf("%d model requests, want 3 (one per question, no retries)", n)
		}

		r := c.hangUp()
		checkTurns(t, r.Turns, "assistant", "caller", "assistant", "caller", "assistant", "caller", "assistant")
		if len(r.Turns) == 7 && (r.Turns[2].Text != conversation.Apology || r.Turns[4].Text != conversation.Apology || r.Turns[6].Text != answer) {
			t.Errorf("transcript:%s\nwant an apology after each failure, then the answer", transcriptString(r.Turns))
		}
		if e := r.Metrics.Errors; e == nil || e.Count != 2 || e.LastKind != "llm_timeout" {
			t.Errorf("metrics errors %+v, want 2, the last llm_timeout", e)
		}
		if str(r.EndReason) != call.ReasonRemoteHangup {
			t.Errorf("end reason %q, want the caller's hang-up", str(r.EndReason))
		}
	})
}
