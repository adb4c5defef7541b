package sip_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/e2e/sipphone"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest/sphinx"
	"github.com/bridgeline/bridgeline/shared/call"
)

// script answers the fake model's requests in turn; past its end it answers "Sorry?".
func script(replies ...llmtest.Reply) func(llmtest.Request) llmtest.Reply {
	var n atomic.Int32
	return func(llmtest.Request) llmtest.Reply {
		i := int(n.Add(1)) - 1
		if i < len(replies) {
			return replies[i]
		}
		return llmtest.Reply{Text: "Sorry?"}
	}
}

// TestInboundAssistantCall: a SIP phone calls a line made through the API on a trunk made
// through the API; the line's assistant answers, greets, hears the caller's question (the
// model gets the recognised words) and answers it, all heard at the phone, in order; then
// the caller talks over a long reply and it stops; the phone hangs up, and the record and
// call.ended say so.
func TestInboundAssistantCall(t *testing.T) {
	r := theRig(t)
	r.worker(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const (
		greeting = "Hello, thank you for calling. How can I help you?"
		question = "What time do you open tomorrow?"
		answer   = "We open at nine in the morning."
		long     = "Thank you for asking. Our shop is on the corner of the main street, next to the bakery. " +
			"There is parking behind the building, and the bus stops right in front of it every ten minutes."
		overTalk = "Do you deliver to my house?"
	)
	r.fake.SetReplies(script(llmtest.Reply{Text: answer}, llmtest.Reply{Text: long}, llmtest.Reply{Text: "Yes, we deliver."}))
	before := len(r.fake.Requests())
	a := r.assistant(t, greeting, nil)
	tr := r.trunk(t, "")
	l := r.line(t, "+15550170001", tr.ID, map[string]any{"assistant_id": a.ID, "name": "Front desk"})
	if l.Platform != "sip" || l.SIPTrunkID != tr.ID {
		t.Fatalf("line = %+v, want a sip line on %s", l, tr.ID)
	}
	// The phone speaks from its answer: the question once the greeting is over, the
	// second question a few seconds into the long reply to it.
	wav, said := speechWAV(t, part{pause: 7 * time.Second}, part{say: question}, part{pause: 7 * time.Second},
		part{say: "Where is your shop?"}, part{pause: 5 * time.Second}, part{say: overTalk}, part{pause: 10 * time.Second})
	turns := r.endpoint(t, callevent.TypeCallTranscript)
	phone := r.phone(t, sipphone.Config{Number: "+15559990001", Speak: wav})

	invite := time.Now()
	out, err := phone.Dial(ctx, r.dialURI(l.Handle))
	if err != nil {
		t.Fatal(err)
	}
	est, err := out.Next(ctx, "CALL_ESTABLISHED", "CALL_CLOSED")
	if err != nil || est.Type != "CALL_ESTABLISHED" {
		t.Fatalf("the call was not answered: %+v %v", est, err)
	}
	t.Logf("INVITE to answered: %v", est.At.Sub(invite).Round(time.Millisecond))
	c := r.callOf(t, l.ID, nil)
	if c.Platform != "sip" || c.From != "+15559990001" || c.To != l.Handle || c.Direction != call.Inbound ||
		c.Media != "audio" || c.HandledBy != call.HandledByAssistant || c.Status != call.StatusActive {
		t.Errorf("call record = %+v, want an active inbound sip audio call from the phone to the line, handled by the assistant", c)
	}

	harness.WaitFor(t, 40*time.Second, "the model's first request", func() bool { return len(r.fake.Requests()) > before })
	req := r.fake.Requests()[before]
	if n := len(req.Messages); n != 3 || req.Messages[1].Content != greeting || !sphinx.Most(req.Messages[2].Content, question) {
		t.Errorf("the model got %+v, want the prompt, the greeting and most words of %q", req.Messages, words(question))
	}
	// The phone talks over the long reply (its third sentence), then waits for the answer.
	harness.WaitFor(t, 60*time.Second, "the model's third request", func() bool { return len(r.fake.Requests()) >= before+3 })
	third := r.fake.Requests()[before+2]
	if m := third.Messages; len(m) < 2 || m[len(m)-2].Role != "assistant" || !strings.HasPrefix(long, m[len(m)-2].Content) ||
		len(m[len(m)-2].Content) >= len(long) || !sphinx.Most(m[len(m)-1].Content, overTalk) {
		t.Errorf("the third request ends %+v, want the long reply cut where the caller talked over it, then most words of %q", m, words(overTalk))
	}
	assistantSaid(t, turns, c.ID, "Yes, we deliver.") // the last answer played
	if err := phone.Hangup(ctx); err != nil {
		t.Fatal(err)
	}
	rec, evt := r.ended(t, c.ID)
	if rec.Status != call.StatusEnded || str(rec.EndReason) != call.ReasonRemoteHangup || str(rec.EndedBy) != call.EndedByRemote ||
		str(rec.Report) != call.ReportReceived {
		t.Errorf("ended record: status %s, end reason %q, ended by %q, report %q; want the caller's hang-up with the worker's report",
			rec.Status, str(rec.EndReason), str(rec.EndedBy), str(rec.Report))
	}
	if !strings.Contains(string(evt.Data), `"end_reason":"remote_hangup"`) || !strings.Contains(string(evt.Data), l.Handle) {
		t.Errorf("call.ended = %s, want the remote hang-up to the line", evt.Data)
	}
	var speakers []string
	for _, turn := range rec.Transcript {
		speakers = append(speakers, turn.Speaker)
	}
	if strings.Join(speakers, " ") != "assistant caller assistant caller assistant caller assistant" ||
		rec.Transcript[0].Text != greeting || rec.Transcript[2].Text != answer || !rec.Transcript[4].Interrupted {
		t.Errorf("transcript %+v, want the greeting, the question, the answer, then the long reply interrupted and the last answer", rec.Transcript)
	}
	if m := rec.Metrics; m == nil || m.BargeIns == nil || *m.BargeIns != 1 || m.FirstGreetingMS == nil {
		t.Errorf("metrics %+v, want one barge-in and the greeting's time", m)
	}

	// What the phone heard: the greeting first, before the question; the answer after
	// the question's end; the long reply stopped soon after the caller talked over it.
	heard, err := phone.Heard()
	if err != nil {
		t.Fatal(err)
	}
	keepAudio(t, "heard", heard.Samples)
	snds := sounds(heard.Samples)
	t.Logf("sounds at the phone: %v", snds)
	if len(snds) < 3 {
		t.Fatalf("the phone heard %d stretches of sound (%v), want the greeting, the answer and more", len(snds), snds)
	}
	g := snds[0]
	for _, s := range snds[1:] {
		if s.end < said[0].start {
			g.end = s.end // the greeting, should a pause in it split it in two
		}
	}
	if got := heardSentence(t, heard.Samples, g, greeting, answer, long); g.end > said[0].start || got != words(greeting) {
		t.Errorf("the phone's first sound %v..%v is not the greeting before the question at %v (heard %q; its level every 100 ms: %s; the bridge's audio statistics: %s)",
			g.start, g.end, said[0].start, got, levels(heard.Samples, g), r.bridgeStats())
	}
	var ans *sound
	for i := range snds {
		if snds[i].start > said[0].end {
			ans = &snds[i]
			break
		}
	}
	if ans == nil || ans.start > said[1].start || heardSentence(t, heard.Samples, *ans, greeting, answer, long) != words(answer) {
		t.Errorf("no answer heard between the question's end %v and the next question %v (sounds %v)", said[0].end, said[1].start, snds)
	} else {
		t.Logf("end of the question to the answer at the phone: %v", (ans.start - said[0].end).Round(time.Millisecond))
	}
	for _, s := range snds {
		if s.start < said[2].start && s.end > said[2].start+time.Second {
			t.Errorf("the phone heard the long reply until %v, over a second after the caller began talking over it at %v", s.end, said[2].start)
		}
	}
}
