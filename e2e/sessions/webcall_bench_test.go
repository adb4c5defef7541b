package sessions_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
)

// BenchmarkWebCall is issue 18's benchmark: web calls beside sim calls, on the stack of
// BenchmarkConversation (control plane on SQLite, livekit-server, one persona worker on
// the real engines, the fake OpenAI-compatible model answering at once), each iteration
// one web call and one sim call to the same assistant, in turn, on audio and on video:
//
//   - greeting: the caller in the room (callerbot.Join returned: connected, its tracks
//     published; the sim's party is its callerbot too, and the sim call's answer is that
//     same moment) to the first greeting audio reaching the caller. A web call's worker
//     is in the room already, dispatched at the create; a sim call's is dispatched when
//     Bridgeline answers, beside the party's join. greeting-sent is the worker's own
//     stamp of the web call (the record's first_greeting_audio_ms: the caller's arrival
//     at the worker to the greeting's first frame sent).
//   - response: the end of the caller's question (its own synthesis, flite in the sim
//     caller's voice) to the first reply audio reaching the caller.
//
// p50 and p95 of each, and the web call's p50 less the sim call's (goal: at most 50 ms;
// and the web call's greeting p95 at most 1.0 s). The first call of each kind after the
// worker started is a warm-up, not counted.
//
//	go test -run '^$' -bench BenchmarkWebCall -benchtime 10x -timeout 30m ./e2e/sessions/
func BenchmarkWebCall(b *testing.B) {
	st, _, _, _, _ := benchStack(b)
	asst := benchAssistant(b, st)
	for _, media := range []string{"audio", "video"} {
		b.Run(media, func(b *testing.B) {
			webCallOnce(b, st, asst, media, nil)
			simCallOnce(b, st, media, nil)
			s := benchSamples{}
			for b.Loop() {
				webCallOnce(b, st, asst, media, s)
				simCallOnce(b, st, media, s)
			}
			s.report(b)
			for _, k := range []string{"greeting", "response"} {
				b.ReportMetric(ms(percentile(s["web-"+k], 50)-percentile(s["sim-"+k], 50)), "web-over-sim-"+k+"-ms")
			}
			fmt.Printf("web calls (%s): load average %s\n", media, loadAvg())
		})
	}
}

// webCallOnce places a web call, joins as its caller, waits for the greeting, asks a
// question, waits for the reply and hangs up; s (nil: a warm-up) gets the times.
func webCallOnce(b *testing.B, st *harness.Stack, asst, media string, s benchSamples) {
	b.Helper()
	ctx := context.Background()
	var w struct {
		created
		CallID string `json:"call_id"`
	}
	harness.Must(b, st.Do(b, http.MethodPost, "/v1/sessions", map[string]any{"mode": "assistant", "assistant_id": asst, "media": media}, &w),
		http.StatusCreated, "create a web call")
	silence := callerbot.Silence()
	bot, err := callerbot.Join(ctx, callerbot.Options{URL: w.RTCURL, Token: w.ParticipantToken, Audio: &silence, Video: media == "video"})
	if err != nil {
		b.Fatal(err)
	}
	joined := time.Now()
	greeting := waitSound(b, bot, joined.Add(-time.Second), 15*time.Second, "greeting audio")
	waitQuiet(b, bot, greeting.Start)
	said := sayBot(ctx, b, bot, benchQuestions[0])
	reply, ok := soundWithin(bot, said.End, 10*time.Second)
	bot.Leave()
	if s == nil {
		return
	}
	s.add("web-greeting", greeting.Start.Sub(joined))
	if ok {
		s.add("web-response", reply.Start.Sub(said.End))
	}
	// The worker's stamp: the caller's arrival at the worker to the greeting's first
	// frame sent, from the record its final report completes.
	var rec recordObj
	harness.WaitFor(b, 15*time.Second, "the web call's record", func() bool {
		rec = record(b, st, w.CallID)
		return rec.AssistantReport != nil && *rec.AssistantReport == "received"
	})
	if rec.Metrics != nil && rec.Metrics.FirstGreetingMS != nil {
		s.add("web-greeting-sent", time.Duration(*rec.Metrics.FirstGreetingMS)*time.Millisecond)
	}
}

// simCallOnce does what webCallOnce does with a sim caller on the assistant's line.
func simCallOnce(b *testing.B, st *harness.Stack, media string, s benchSamples) {
	b.Helper()
	sc, err := st.Sim.Place(platformsim.PlaceRequest{From: "+15551230000", To: st.Handles[0], Media: media})
	if err != nil {
		b.Fatal(err)
	}
	var c platformsim.Call
	harness.WaitFor(b, 20*time.Second, "the sim call answered", func() bool {
		c, _ = st.Sim.Get(sc.ID)
		return c.Status == platformsim.StatusAnswered && c.AnsweredAt != nil && st.Sim.Bot(sc.ID) != nil
	})
	bot := st.Sim.Bot(c.ID)
	joined := *c.AnsweredAt // the party's Join returned
	greeting := waitSound(b, bot, joined.Add(-time.Second), 15*time.Second, "greeting audio")
	waitQuiet(b, bot, greeting.Start)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u, err := st.Sim.Say(ctx, c.ID, benchQuestions[0])
	if err != nil {
		b.Fatal(err)
	}
	said, err := bot.WaitSaid(ctx, u.Index)
	if err != nil {
		b.Fatal(err)
	}
	reply, ok := soundWithin(bot, said.End, 10*time.Second)
	hangupSimTB(b, st, c.ID)
	if s == nil {
		return
	}
	s.add("sim-greeting", greeting.Start.Sub(joined))
	if ok {
		s.add("sim-response", reply.Start.Sub(said.End))
	}
}
