package sessions_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/llm"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// TestTurnTakingEndToEnd is issue 35's turn-taking on the whole local stack with the
// real speech engines (Silero VAD, pocketsphinx with its interim words, flite): the sim
// caller acknowledges over a long reply ("Okay.": pocketsphinx hears flite's "uh-huh"
// as "but", a word that takes the floor, so the test says an acknowledgement it can
// hear), tells it to stop, and pauses 700 ms in the middle of a sentence ("I'd like to
// book a table for ... two people tonight.").
func TestTurnTakingEndToEnd(t *testing.T) {
	st := tenant(t)
	eng := realEngines(t)
	fake := llmtest.New(llmtest.Reply{Text: "Sorry?"})
	t.Cleanup(fake.Close)
	model, err := llm.New(llm.Config{BaseURL: fake.URL(), APIKey: "test-key", Model: "fake-model"})
	if err != nil {
		t.Fatal(err)
	}
	st.StartWorker(t, nil, worker.Options{NewVAD: eng.NewVAD, Recognizer: eng.Recognizer, Voices: eng.Voices.Voices(), Model: model})
	publishAssistant(t, st, "Front desk", "Hello, how can I help you?", "ava_theo")

	// overReply asks a question, waits until the long reply has played a second and a
	// half, and says text over it; it returns the reply's first sound at the caller.
	overReply := func(t *testing.T, c *convCall, text string) (callerbot.Sound, callerbot.Utterance) {
		t.Helper()
		q := c.say(qOpen)
		reply := c.heardAfter(q.End, "the long reply at the caller")
		harness.WaitFor(t, 20*time.Second, "the reply under way", func() bool {
			return time.Since(reply.Start) > 1500*time.Millisecond
		})
		i := c.sayAsync(text)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		u, err := c.bot.WaitSaid(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		return reply, u
	}

	t.Run("an acknowledgement leaves the reply going", func(t *testing.T) {
		fake.SetReplies((&script{replies: []llmtest.Reply{{Text: longReply}}}).next)
		before := len(fake.Requests())
		c := placeConvCall(t, st)
		reply, u := overReply(t, c, "Okay.")
		// Held while the caller spoke and until the words decide (the end of the turn,
		// where pocketsphinx's interim words come too late), then going on.
		resumed := c.heardAfter(u.End, "the reply going on after the acknowledgement")
		t.Logf("end of the acknowledgement to the reply going on at the caller: %v", resumed.Start.Sub(u.End).Round(time.Millisecond))
		c.waitQuiet(resumed.Start, "the reply")

		r := c.hangUp()
		if n := len(fake.Requests()) - before; n != 1 {
			t.Errorf("%d model requests, want 1: the acknowledgement is no turn", n)
		}
		var said, back int
		for _, tu := range r.Turns {
			switch {
			case tu.Speaker == "assistant" && tu.Text == longReply && !tu.Interrupted:
				said++
			case tu.Backchannel:
				back++
			}
		}
		if said != 1 || back != 1 {
			t.Errorf("transcript:%s\nwant the long reply whole and the acknowledgement marked a backchannel", transcriptString(r.Turns))
		}
		// The caller heard the reply to its end: from its first sound to its last as
		// long as the turn, less the pause while the caller spoke.
		var last time.Time
		for _, s := range c.bot.Sounds() {
			if !s.Start.Before(reply.Start) {
				last = s.End
			}
		}
		for _, tu := range r.Turns {
			if tu.Speaker == "assistant" && tu.Text == longReply {
				spoken := time.Duration(tu.EndMS-tu.StartMS) * time.Millisecond
				t.Logf("the caller heard the reply for %v; its turn lasted %v", last.Sub(reply.Start).Round(time.Millisecond), spoken)
				if last.Sub(reply.Start) < spoken-1500*time.Millisecond {
					t.Errorf("the caller heard the reply for %v of its %v", last.Sub(reply.Start), spoken)
				}
			}
		}
		if m := r.Metrics; m == nil || count(m.Backchannels) != 1 || count(m.BargeIns) != 0 {
			t.Errorf("metrics: %s; want one backchannel and no barge-in", metricsString(m))
		}
	})

	t.Run("wait, stop cuts the reply", func(t *testing.T) {
		fake.SetReplies((&script{replies: []llmtest.Reply{{Text: longReply}, {Text: "Of course."}}}).next)
		c := placeConvCall(t, st)
		_, u := overReply(t, c, "Wait, stop.")
		answered := c.heardAfter(u.End, "the answer to wait stop")
		c.waitQuiet(answered.Start, "the answer")
		r := c.hangUp()
		checkTurns(t, r.Turns, "assistant", "caller", "assistant", "caller", "assistant")
		if len(r.Turns) == 5 && (!r.Turns[2].Interrupted || r.Turns[3].Backchannel) {
			t.Errorf("transcript:%s\nwant the reply cut by the caller's turn", transcriptString(r.Turns))
		}
		if m := r.Metrics; m == nil || count(m.BargeIns) != 1 || count(m.Backchannels) != 0 {
			t.Errorf("metrics: %s; want one barge-in", metricsString(m))
		}
	})

	t.Run("a pause mid-sentence gets one answer", func(t *testing.T) {
		fake.SetReplies((&script{replies: []llmtest.Reply{{Text: "For what time?"}}}).next)
		before := len(fake.Requests())
		c := placeConvCall(t, st)
		// The pause comes after "for": pocketsphinx hears flite's "book a" as "good
		// eight", and a sentence may end on "eight".
		first := c.say("I'd like to book a table for")
		time.Sleep(time.Until(first.End.Add(700 * time.Millisecond)))
		second := c.say("two people tonight.")
		t.Logf("pause between the two halves at the caller: %v", second.Start.Sub(first.End).Round(time.Millisecond))
		answered := c.heardAfter(second.End, "the answer")
		c.waitQuiet(answered.Start, "the answer")
		r := c.hangUp()
		reqs := fake.Requests()[before:]
		if len(reqs) != 1 {
			var heard []string
			for _, r := range reqs {
				heard = append(heard, r.Messages[len(r.Messages)-1].Content)
			}
			t.Fatalf("%d model requests (the caller's turns heard as %q), want one answer to the whole sentence", len(reqs), heard)
		}
		got := reqs[0].Messages[len(reqs[0].Messages)-1].Content
		if !strings.Contains(got, "table") || !strings.Contains(got, "people") {
			t.Errorf("the model got %q, want both halves of the sentence", got)
		}
		checkTurns(t, r.Turns, "assistant", "caller", "assistant")
		if m := r.Metrics; m == nil || count(m.MidSentenceWaits) != 1 {
			t.Errorf("metrics: %s; want one mid-sentence wait", metricsString(m))
		}
	})
}

// count reads a counter of the metrics, 0 when absent.
func count(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// metricsString shows the turn-taking counters of m, for failure messages.
func metricsString(m *persona.Metrics) string {
	if m == nil {
		return "none"
	}
	return fmt.Sprintf("turns %d, barge-ins %d, backchannels %d, false interruptions %d, mid-sentence waits %d",
		count(m.Turns), count(m.BargeIns), count(m.Backchannels), count(m.FalseInterruptions), count(m.MidSentenceWaits))
}
