package sessions_test

import (
	"net/http"
	"testing"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/mediafleet/llm"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/quality"
)

// TestQualityEndToEnd is issue 35's quality in the record on the whole local stack with
// the real speech engines: a sim caller asks one question and hangs up; the record's
// metrics hold each side's speaking time, and GET /v1/assistants/{id}/quality counts
// the call once for its version, its reply latency in the bucket of the record's own.
func TestQualityEndToEnd(t *testing.T) {
	st := tenant(t)
	eng := realEngines(t)
	fake := llmtest.New(llmtest.Reply{Text: "We open at nine."})
	t.Cleanup(fake.Close)
	model, err := llm.New(llm.Config{BaseURL: fake.URL(), APIKey: "test-key", Model: "fake-model"})
	if err != nil {
		t.Fatal(err)
	}
	st.StartWorker(t, nil, worker.Options{NewVAD: eng.NewVAD, Recognizer: eng.Recognizer, Voices: eng.Voices.Voices(), Model: model})
	a := publishAssistant(t, st, "Front desk", "Hello, how can I help you?", "ava_theo")

	c := placeConvCall(t, st)
	q := c.say(qOpen)
	answer := c.heardAfter(q.End, "the answer")
	c.waitQuiet(answer.Start, "the answer")
	r := c.hangUp()
	m := r.Metrics
	if m.CallerSpeechMS == nil || *m.CallerSpeechMS <= 0 || m.AssistantSpeechMS == nil || *m.AssistantSpeechMS <= 0 ||
		m.MidSentenceCuts == nil || m.ResponseMS == nil || m.Turns == nil {
		t.Fatalf("metrics %+v: want speaking times, mid_sentence_cuts, turns and response_ms", m)
	}
	t.Logf("record: caller spoke %d ms, assistant %d ms; response_ms %+v", *m.CallerSpeechMS, *m.AssistantSpeechMS, *m.ResponseMS)

	var page struct {
		Data []struct {
			VersionID         string               `json:"version_id"`
			Calls             int64                `json:"calls"`
			Turns             int64                `json:"turns"`
			Replies           int64                `json:"replies"`
			CallerSpeechMS    int64                `json:"caller_speech_ms"`
			AssistantSpeechMS int64                `json:"assistant_speech_ms"`
			MidSentenceCuts   int64                `json:"mid_sentence_cuts"`
			ResponseMS        *persona.Percentiles `json:"response_ms"`
		} `json:"data"`
	}
	harness.Must(t, st.Do(t, http.MethodGet, "/v1/assistants/"+a.ID+"/quality", nil, &page), http.StatusOK, "GET quality")
	if len(page.Data) != 1 || page.Data[0].VersionID != a.ActiveVersionID {
		t.Fatalf("quality %+v, want the one version %s", page.Data, a.ActiveVersionID)
	}
	v := page.Data[0]
	t.Logf("quality: %+v, response_ms %+v", v, v.ResponseMS)
	if v.Calls != 1 || v.Turns != int64(*m.Turns) || v.CallerSpeechMS != *m.CallerSpeechMS ||
		v.AssistantSpeechMS != *m.AssistantSpeechMS || v.MidSentenceCuts != int64(*m.MidSentenceCuts) || v.Replies < 1 {
		t.Errorf("quality %+v, want the one call's metrics %+v", v, m)
	}
	// One call: the aggregate's p50 is the record's p50 (the same nearest-rank sample)
	// read as its bucket's upper bound.
	want := quality.ResponseBoundsMS[len(quality.ResponseBoundsMS)-1]
	for _, b := range quality.ResponseBoundsMS {
		if m.ResponseMS.P50 <= b {
			want = b
			break
		}
	}
	if p := v.ResponseMS; p == nil || p.P50 != want {
		t.Errorf("quality response_ms %+v, want p50 %d: the bucket of the record's %d", p, want, m.ResponseMS.P50)
	}
}
