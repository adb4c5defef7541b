package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
)

// TestContractQuality: GET /v1/assistants/{id}/quality lists each published version,
// newest first, with its calls' turn-taking summed from the aggregate the calls' final
// reports wrote: reply latency percentiles over every reply of every call (not the
// calls' own percentiles), speaking shares, and a version without calls at zero. A
// call whose report is redelivered counts once; pages and another account's key behave
// as the versions list's.
func TestContractQuality(t *testing.T) {
	c := newContract(t, nil)
	ctx := context.Background()
	asst := c.OK("POST", "/v1/assistants", `{"name":"Ada","system_prompt":"Be kind.","greeting":"Hi.","avatar_id":"ava_iris"}`, 201).Str("id")
	publish := func() string { // the newest version's id (versions are oldest first)
		vs := c.OK("POST", "/v1/assistants/"+asst+"/publish", "", 201).Body["versions"].([]any)
		return vs[len(vs)-1].(map[string]any)["id"].(string)
	}
	v4, v5, v6 := publish(), publish(), publish()

	n := func(v int) *int { return &v }
	ms := func(v int64) *int64 { return &v }
	report := func(version string, m persona.Metrics, samples []int64) {
		t.Helper()
		started := time.Now().UTC()
		rec := call.Call{ID: ident.New("call"), AccountID: c.st.acctID, Direction: call.Inbound, LineID: c.st.lineID,
			Status: call.StatusRinging, HandledBy: call.HandledByAssistant, AssistantID: asst, VersionID: version,
			Platform: sim.Name, StartedAt: started}
		rec.Answer(started)
		rec.End(call.StatusEnded, call.ReasonRemoteHangup, call.EndedByRemote, started.Add(time.Minute), func() string { return ident.New("evt") })
		if err := c.st.store.SaveCall(ctx, rec, nil); err != nil {
			t.Fatal(err)
		}
		// The final report, then its redelivery written again.
		for range 2 {
			got, err := c.st.store.GetCall(ctx, rec.ID)
			if err != nil {
				t.Fatal(err)
			}
			got.Metrics, got.AssistantReport = &m, call.ReportReceived
			if !got.QualityCounted {
				got.ResponseSamplesMS = samples
			}
			if err := c.st.store.SaveCall(ctx, got, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Version 4: one call of eleven quick replies, nine calls of one slow reply each: by
	// reply the median is quick, though nine calls in ten have a slow median.
	report(v4, persona.Metrics{Turns: n(9), BargeIns: n(2), Backchannels: n(1), CallerSpeechMS: ms(3000), AssistantSpeechMS: ms(9000)},
		[]int64{400, 400, 400, 400, 400, 400, 400, 400, 400, 400, 400})
	for range 9 {
		report(v4, persona.Metrics{Turns: n(1), MidSentenceCuts: n(1), CallerSpeechMS: ms(1000), AssistantSpeechMS: ms(1000)}, []int64{2100})
	}
	// Version 5: two calls.
	report(v5, persona.Metrics{Turns: n(3), FalseInterruptions: n(1), MidSentenceWaits: n(2), CallerSpeechMS: ms(4000), AssistantSpeechMS: ms(4000)},
		[]int64{260, 310, 330})
	report(v5, persona.Metrics{Turns: n(1)}, []int64{240})

	page := c.OK("GET", "/v1/assistants/"+asst+"/quality", "", 200)
	data := page.Body["data"].([]any)
	if len(data) != 3 || page.Body["has_more"] != false {
		t.Fatalf("quality = %s, want the three versions", page.Raw)
	}
	by := map[string]map[string]any{}
	for i, d := range data {
		v := d.(map[string]any)
		by[v["version_id"].(string)] = v
		if want := []string{v6, v5, v4}[i]; v["version_id"] != want {
			t.Errorf("entry %d is %v, want %s (newest first)", i, v["version_id"], want)
		}
	}
	q4, q5, q6 := by[v4], by[v5], by[v6]
	p := func(v map[string]any) map[string]any { r, _ := v["response_ms"].(map[string]any); return r }
	if q4["calls"] != float64(10) || q4["turns"] != float64(18) || q4["replies"] != float64(20) || q4["barge_ins"] != float64(2) ||
		q4["mid_sentence_cuts"] != float64(9) || q4["backchannels"] != float64(1) || q4["caller_speech_ms"] != float64(12000) ||
		p(q4)["p50"] != float64(400) || p(q4)["p95"] != float64(2500) ||
		q4["caller_speech_share"] != 0.4 || q4["assistant_speech_share"] != 0.6 {
		t.Errorf("version 4 = %v; want 10 calls (each once), 18 turns, 20 replies, p50 400 and p95 2500 (the 2-2.5 s bucket), shares 0.4/0.6", q4)
	}
	if q5["calls"] != float64(2) || q5["false_interruptions"] != float64(1) || q5["mid_sentence_waits"] != float64(2) ||
		p(q5)["p50"] != float64(300) || p(q5)["p95"] != float64(350) || q5["caller_speech_share"] != 0.5 {
		t.Errorf("version 5 = %v; want 2 calls, p50 300 and p95 350, shares even", q5)
	}
	if q6["calls"] != float64(0) || q6["response_ms"] != nil || q6["caller_speech_share"] != nil || q6["number"] != float64(3) {
		t.Errorf("version 6 = %v; want no calls, null latency and shares, number 3", q6)
	}

	one := c.OK("GET", "/v1/assistants/"+asst+"/quality?limit=1&starting_after="+v6, "", 200)
	if d := one.Body["data"].([]any); len(d) != 1 || d[0].(map[string]any)["version_id"] != v5 || one.Body["has_more"] != true {
		t.Errorf("limit=1 after version 6 = %s, want version 5 and more", one.Raw)
	}
	c.FailValid("GET", "/v1/assistants/"+asst+"/quality", "", 404, "resource_not_found", "Authorization", "Bearer "+c.st.otherKey)
	c.Fail("GET", "/v1/assistants/"+asst+"/quality?limit=0", "", 400, "parameter_invalid")
	c.RequireCoverage(func(p string) bool { return p == "/v1/assistants/{id}/quality" })
}
