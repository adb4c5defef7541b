package simcaller_test

import (
	"encoding/json"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/examples/internal/browser"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
)

// BenchmarkSimPageGreeting: how long a caller on the sim's page waits for the greeting,
// beside the sim's bot caller on the same stack, call for call. Both figures are the
// call record's first_greeting_audio_ms (answer to the greeting's first audio), which is
// what the caller's side adds: the assistant greets once the caller is subscribed to its
// tracks and it has decoded the caller's audio. The page's own click to first sound is
// reported too, with the page's marks (placed, answered, connected, published).
func BenchmarkSimPageGreeting(b *testing.B) {
	browser.Setup(b)
	st := harness.Start(b, harness.Options{})
	st.StartWorker(b, func(c *worker.Config) { c.MaxJobs = 2 }, worker.Options{})
	var asst struct {
		ID string `json:"id"`
	}
	harness.Must(b, st.Do(b, "POST", "/v1/assistants", map[string]any{
		"name": "Front desk", "system_prompt": "You answer calls for Test Co.", "greeting": "Hello, thanks for calling Test Co.", "avatar_id": "ava_theo",
	}, &asst), 201, "create assistant")
	harness.Must(b, st.Do(b, "POST", "/v1/assistants/"+asst.ID+"/publish", nil, nil), 201, "publish")
	harness.Must(b, st.Do(b, "POST", "/v1/lines/"+st.Lines[harness.Line1].ID+"/assign",
		map[string]string{"assistant_id": asst.ID}, nil), 200, "assign")

	greeting := func(callID string) float64 {
		var rec struct {
			Metrics *struct {
				FirstGreetingMS *int64 `json:"first_greeting_audio_ms"`
			} `json:"metrics"`
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			var raw json.RawMessage
			st.Do(b, "GET", "/v1/calls/"+callID, nil, &raw)
			json.Unmarshal(raw, &rec)
			if rec.Metrics != nil && rec.Metrics.FirstGreetingMS != nil {
				return float64(*rec.Metrics.FirstGreetingMS)
			}
			if time.Now().After(deadline) {
				b.Fatalf("call %s: no first_greeting_audio_ms within 30 s: %s", callID, raw)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	br := browser.Launch(b)
	var page, bot, clickToSound []float64
	marks := map[string][]float64{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := br.Open(st.URL + "/sim/?to=" + url.QueryEscape(harness.Line1))
		p.Eval(`(() => { window.__firstSound = 0; const t = setInterval(() => {
  if (window.simCaller.level > 0.02) { window.__firstSound = performance.now(); clearInterval(t); } }, 10); return true; })()`, nil)
		p.Click("#call")
		var sound float64
		p.WaitFor("the greeting on the page", `window.__firstSound`, 30*time.Second, &sound)
		var m map[string]float64
		p.Eval(`Object.fromEntries(performance.getEntriesByType('mark').map((m) => [m.name, m.startTime]))`, &m)
		clickToSound = append(clickToSound, sound-m["sim:click"])
		for _, k := range []string{"sim:placed", "sim:answered", "sim:connected", "sim:published"} {
			marks[k] = append(marks[k], m[k]-m["sim:click"])
		}
		var simID string
		p.Eval(`window.simCaller.call.id`, &simID)
		p.Click("#hangup")
		p.WaitFor("the page to show the end", `document.body.dataset.state === 'ended'`, 10*time.Second, nil)
		sc, err := st.Sim.Get(simID)
		if err != nil {
			b.Fatal(err)
		}
		page = append(page, greeting(sc.CallID))

		placed, err := st.Sim.Place(platformsim.PlaceRequest{From: "+15550199998", To: harness.Line1, Media: "video"})
		if err != nil {
			b.Fatal(err)
		}
		var botCall platformsim.Call
		harness.WaitFor(b, 30*time.Second, "the bot to hear the greeting", func() bool {
			botCall, _ = st.Sim.Get(placed.ID)
			return botCall.Heard
		})
		if _, err := st.Sim.RemoteHangup(placed.ID); err != nil {
			b.Fatal(err)
		}
		bot = append(bot, greeting(botCall.CallID))
	}
	b.StopTimer()
	b.ReportMetric(p50(page), "page-greeting-p50-ms")
	b.ReportMetric(p50(bot), "bot-greeting-p50-ms")
	b.ReportMetric(p50(clickToSound), "page-click-to-sound-p50-ms")
	for _, k := range []string{"sim:placed", "sim:answered", "sim:connected", "sim:published"} {
		b.Logf("click to %s: p50 %.0f ms", k, p50(marks[k]))
	}
	b.Logf("answer to greeting: page %v, bot %v (ms)", page, bot)
}

func p50(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
