package sessions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/mediafleet/analysis"
	"github.com/bridgeline/bridgeline/mediafleet/llm"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/recording"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest/sphinx"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/recordings"
)

// TestAssistantActsAndReports is issue 19's "done means" on the whole local stack, as
// make run assembles it (the recordings folder served by the API's own route): an
// assistant with a tool on the customer's server (toolReceiver, verifying each request
// with the SDK's webhook.Verify), recording: audio and analysis {summary: true}, the fake
// OpenAI-compatible model, takes a sim call. The caller asks where their order is, which
// only the customer's server knows; the model calls the tool and the caller hears the
// answer built from it (pocketsphinx on what the caller heard), then hangs up. The
// customer's endpoint gets call.ended, recording.ready and call.analyzed, each once; the
// customer asks GET /v1/calls/{id}/recording for the URL, downloads it with a plain HTTP
// client (no API key): a two-channel Ogg Opus file as long as the call, its size the
// event's; and reads the summary, built from the transcript, from the call record.
func TestAssistantActsAndReports(t *testing.T) {
	st := tenant(t)
	eng := realEngines(t)
	fake := llmtest.New(llmtest.Reply{Text: "Sorry?"})
	t.Cleanup(fake.Close)
	model, err := llm.New(llm.Config{BaseURL: fake.URL(), APIKey: "test-key", Model: "fake-model"})
	if err != nil {
		t.Fatal(err)
	}
	// No store of its own: the worker puts files in the stack's folder, as make run's do.
	st.StartWorker(t, nil, worker.Options{NewVAD: eng.NewVAD, Recognizer: eng.Recognizer, Voices: eng.Voices.Voices(), Model: model})
	rcv := startToolReceiver(t)
	hooks := eventtest.NewReceiver(t)
	var ep struct {
		Secret string `json:"secret"`
	}
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/webhook_endpoints", map[string]any{"url": hooks.URL,
		"events": []string{"call.ended", "recording.ready", "call.analyzed"}}, &ep), http.StatusCreated, "create the endpoint")
	hooks.SetSecret(ep.Secret)

	var a struct {
		assistantObj
		ToolSecret string `json:"tool_secret"`
	}
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants", map[string]any{"name": "Orders", "system_prompt": "Answer the phone.",
		"greeting": "Hello, how can I help you?", "avatar_id": "ava_theo", "recording": "audio",
		"analysis": map[string]any{"summary": true},
		"tools": []any{map[string]any{"name": "lookup_order", "description": "Finds an order by its number.", "url": rcv.URL + "/order",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"order_id": map[string]any{"type": "string"}}}}},
	}, &a), http.StatusCreated, "create the assistant")
	rcv.secret.Store(a.ToolSecret)
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants/"+a.ID+"/publish", nil, nil), http.StatusCreated, "publish")
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/lines/"+st.Lines[st.Handles[0]].ID+"/assign",
		map[string]any{"assistant_id": a.ID}, nil), http.StatusOK, "assign")

	// The model: asked by the caller, it calls the tool; given the tool's result, it says
	// it; asked for the analysis, it summarises the transcript it was given.
	const (
		answer = "Your order is shipped, it arrives on Friday."
		sorry  = "Sorry, I cannot look that up right now."
	)
	var askedAgain atomic.Value // time.Time: the model got the tool's result
	fake.SetReplies(func(req llmtest.Request) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case req.HasTool(analysis.Tool):
			summary := "The caller asked about an order; it could not be looked up."
			if strings.Contains(req.Messages[1].Content, "arrives on Friday") {
				summary = "The caller asked where their order is; it has shipped and arrives on Friday."
			}
			args, _ := json.Marshal(map[string]string{"summary": summary})
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: analysis.Tool, Arguments: string(args)}}}
		case last.Role == "tool":
			askedAgain.Store(time.Now())
			var r struct{ Status, Day string }
			if json.Unmarshal([]byte(last.Content), &r) != nil || r.Status == "" {
				return llmtest.Reply{Text: sorry}
			}
			return llmtest.Reply{Text: "Your order is " + r.Status + ", it arrives on " + r.Day + "."}
		}
		return llmtest.Reply{Text: "Let me look.", ToolCalls: []llmtest.ToolCall{{Name: "lookup_order", Arguments: `{"order_id":"6735"}`}}}
	})

	c := placeConvCall(t, st)
	c.say(qOrder)
	harness.WaitFor(t, 30*time.Second, "the model to get the tool's result", func() bool { return askedAgain.Load() != nil })
	got := askedAgain.Load().(time.Time)
	reply := c.heardAfter(got, "the answer at the caller")
	c.waitQuiet(reply.Start, "the answer")
	// "Let me look." is spoken while the tool runs, so it may start before or after the
	// model gets the tool's result: the sound heard after that may begin with it.
	var said []string
	for _, s := range []string{answer, "Your order is packed, it arrives on Monday.", sorry} {
		said = append(said, s, "Let me look. "+s)
	}
	heard, err := sphinx.Choose(context.Background(), c.bot.Heard(reply.Start.Add(-200*time.Millisecond)), said)
	if err != nil {
		t.Fatal(err)
	}
	heard = strings.TrimPrefix(heard, "let me look ")
	if heard != sphinxWords(answer) {
		t.Errorf("pocketsphinx hears %q at the caller, want the answer from the customer's server %q", heard, sphinxWords(answer))
	}
	r := c.hangUp()
	if tools := rcv.requests("/order"); len(tools) != 1 || tools[0].verified != nil || tools[0].req.CallID != r.ID {
		t.Fatalf("the customer's server got %d tool requests (%+v), want one for the call that webhook.Verify accepts", len(tools), tools)
	}

	// The customer's events: each once, delivered and verified.
	ended := hooks.WaitFor(t, callevent.TypeCallEnded, 30*time.Second, eventtest.ForCall(r.ID))
	ready := hooks.WaitFor(t, callevent.TypeRecordingReady, 60*time.Second, eventtest.ForCall(r.ID))
	analyzed := hooks.WaitFor(t, callevent.TypeCallAnalyzed, 60*time.Second, eventtest.ForCall(r.ID))
	for _, typ := range []string{callevent.TypeCallEnded, callevent.TypeRecordingReady, callevent.TypeCallAnalyzed} {
		eventtest.ExactlyOnce(t, st.Store, st.AccountID, typ, r.ID)
	}
	for _, e := range []eventtest.Received{ready, analyzed} {
		if e.Event.CreatedAt.Before(ended.Event.CreatedAt) {
			t.Errorf("%s created %v before call.ended %v", e.Event.Type, e.Event.CreatedAt, ended.Event.CreatedAt)
		}
	}
	if rej := hooks.Rejected(); len(rej) != 0 {
		t.Errorf("the endpoint rejected %d deliveries: %v", len(rej), rej)
	}
	var rd callevent.RecordingReady
	if err := json.Unmarshal(ready.Event.Data, &rd); err != nil {
		t.Fatal(err)
	}
	if rd.SessionID != str(r.SessionID) || rd.Format != "ogg_opus" || rd.SizeBytes <= 0 || rd.DurationMS <= 0 ||
		bytes.Contains(ready.Event.Data, []byte("http")) {
		t.Errorf("recording.ready %s, want the stored file's duration, size and format, and no URL", ready.Event.Data)
	}

	// The recording, downloaded as a customer does: the URL from the API, then a plain GET.
	var dl struct {
		URL        string `json:"url"`
		DurationMS int64  `json:"duration_ms"`
		SizeBytes  int64  `json:"size_bytes"`
		Format     string `json:"format"`
	}
	harness.Must(t, st.Do(t, http.MethodGet, "/v1/calls/"+r.ID+"/recording", nil, &dl), http.StatusOK, "GET the recording")
	if dl.DurationMS != rd.DurationMS || dl.SizeBytes != rd.SizeBytes || dl.Format != rd.Format {
		t.Errorf("GET recording %+v, recording.ready %+v: want the same file", dl, rd)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(dl.URL)
	if err != nil {
		t.Fatal(err)
	}
	file, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != recordings.ContentType ||
		int64(len(file)) != rd.SizeBytes || !bytes.HasPrefix(file, []byte("OggS")) {
		t.Fatalf("GET %s: %d %q, %d bytes (%v); want the %d bytes of an Ogg file", dl.URL, resp.StatusCode,
			resp.Header.Get("Content-Type"), len(file), err, rd.SizeBytes)
	}
	left, right, err := recording.Decode(bytes.NewReader(file))
	if err != nil {
		t.Fatalf("the downloaded file: %v, want two-channel Ogg Opus", err)
	}
	answered, err1 := time.Parse(time.RFC3339Nano, str(r.AnsweredAt))
	endedAt, err2 := time.Parse(time.RFC3339Nano, str(r.EndedAt))
	if err1 != nil || err2 != nil {
		t.Fatalf("answered_at %v, ended_at %v", r.AnsweredAt, r.EndedAt)
	}
	lasts := time.Duration(len(left)) * time.Second / recording.Rate
	if want := endedAt.Sub(answered); lasts < want-2*time.Second || lasts > want+time.Second || len(right) != len(left) {
		t.Errorf("the file lasts %s (%d/%d samples); the call from answer to end %s", lasts, len(left), len(right), want)
	}
	if d := time.Duration(rd.DurationMS) * time.Millisecond; d < lasts-time.Second || d > lasts+time.Second {
		t.Errorf("recording.ready says %s, the file lasts %s", d, lasts)
	}
	loud := func(pcm []int16) bool {
		for _, v := range pcm {
			if v > 3000 || v < -3000 {
				return true
			}
		}
		return false
	}
	if !loud(left) || !loud(right) {
		t.Errorf("caller's channel speaks: %v, assistant's: %v; want both", loud(left), loud(right))
	}

	// The summary, from the record; call.analyzed says the same.
	var rec struct {
		Recording *string `json:"recording"`
		analysedRecord
	}
	harness.Must(t, st.Do(t, http.MethodGet, "/v1/calls/"+r.ID, nil, &rec), http.StatusOK, "GET the call")
	if rec.Recording == nil || *rec.Recording != call.RecordingAvailable {
		t.Errorf("record's recording %v, want available", rec.Recording)
	}
	if an := rec.Analysis; an == nil || an.Status != persona.AnalysisCompleted || an.Summary == nil || !strings.Contains(*an.Summary, "arrives on Friday") {
		t.Fatalf("record's analysis %+v, want completed with the summary of the answer", an)
	}
	var ad callevent.CallAnalyzed
	if err := json.Unmarshal(analyzed.Event.Data, &ad); err != nil || ad.Summary == nil || *ad.Summary != *rec.Analysis.Summary {
		t.Errorf("call.analyzed %s, want the record's summary", analyzed.Event.Data)
	}
}
