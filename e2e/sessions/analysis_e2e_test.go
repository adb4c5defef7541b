package sessions_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/mediafleet/analysis"
	"github.com/bridgeline/bridgeline/mediafleet/llm"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// analysedRecord is the call record's analysis as a client reads it.
type analysedRecord struct {
	Analysis *httpapi.CallAnalysisJSON `json:"analysis"`
	Usage    *struct {
		LLMPromptTokens int64 `json:"llm_prompt_tokens"`
	} `json:"usage"`
}

// analysisEndpoint registers an endpoint of the tenant for call.ended and call.analyzed.
func analysisEndpoint(t *testing.T, st *harness.Stack) *eventtest.Receiver {
	t.Helper()
	hooks := eventtest.NewReceiver(t)
	var ep struct {
		Secret string `json:"secret"`
	}
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/webhook_endpoints", map[string]any{"url": hooks.URL,
		"events": []string{"call.ended", "call.analyzed"}}, &ep), http.StatusCreated, "create the endpoint")
	hooks.SetSecret(ep.Secret)
	return hooks
}

// analysisAssistant publishes an assistant asking for an analysis and assigns it to the
// tenant's first line.
func analysisAssistant(t *testing.T, st *harness.Stack, greeting string) {
	t.Helper()
	var a assistantObj
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants", map[string]any{"name": "Orders", "system_prompt": "Answer the phone.",
		"greeting": greeting, "avatar_id": "ava_theo", "analysis": map[string]any{
			"summary": true, "success_criteria": "The caller learnt where their order is.",
			"structured_data": map[string]any{"type": "object", "properties": map[string]any{
				"order_id": map[string]any{"type": "string"}, "delivered": map[string]any{"type": "boolean"}},
				"required": []string{"order_id", "delivered"}}}}, &a), http.StatusCreated, "create the assistant")
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants/"+a.ID+"/publish", nil, nil), http.StatusCreated, "publish")
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/lines/"+st.Lines[st.Handles[0]].ID+"/assign",
		map[string]any{"assistant_id": a.ID}, nil), http.StatusOK, "assign")
}

// deliveredInOrder waits for call.ended and then call.analyzed of the call at the
// endpoint, and checks they came in that order; it returns call.analyzed's data.
func deliveredInOrder(t *testing.T, hooks *eventtest.Receiver, callID string) callevent.CallAnalyzed {
	t.Helper()
	ended := hooks.WaitFor(t, callevent.TypeCallEnded, 30*time.Second, eventtest.ForCall(callID))
	analyzed := hooks.WaitFor(t, callevent.TypeCallAnalyzed, 60*time.Second, eventtest.ForCall(callID))
	// Deliveries are independent (docs/webhooks.md): a quick analysis may arrive first;
	// the events' order is their created_at.
	if !ended.Event.CreatedAt.Before(analyzed.Event.CreatedAt) {
		t.Errorf("call.ended created %v received %v; call.analyzed created %v received %v: want call.analyzed after",
			ended.Event.CreatedAt, ended.At, analyzed.Event.CreatedAt, analyzed.At)
	}
	var d callevent.CallAnalyzed
	if err := json.Unmarshal(analyzed.Event.Data, &d); err != nil {
		t.Fatal(err)
	}
	if rej := hooks.Rejected(); len(rej) != 0 {
		t.Errorf("the endpoint rejected %d deliveries: %v", len(rej), rej)
	}
	return d
}

// TestAnalysisEndToEnd is issue 19's post-call analysis on the whole local stack: the sim
// caller asks, the fake OpenAI-compatible model answers and, once the caller has hung
// up, is asked for the analysis by the persona worker; its first answer misses the
// schema and is refused, its second is the record's analysis, completed, and the
// account's endpoint gets call.analyzed after call.ended.
func TestAnalysisEndToEnd(t *testing.T) {
	st := tenant(t)
	eng := realEngines(t)
	fake := llmtest.New(llmtest.Reply{Text: "Sorry?"})
	t.Cleanup(fake.Close)
	model, err := llm.New(llm.Config{BaseURL: fake.URL(), APIKey: "test-key", Model: "fake-model"})
	if err != nil {
		t.Fatal(err)
	}
	st.StartWorker(t, nil, worker.Options{NewVAD: eng.NewVAD, Recognizer: eng.Recognizer, Voices: eng.Voices.Voices(), Model: model})
	hooks := analysisEndpoint(t, st)
	analysisAssistant(t, st, "Hello, how can I help you?")

	const good = `{"summary":"The caller asked where their order is; it was delivered yesterday.","structured_data":{"order_id":"6735","delivered":true},"success":true}`
	analyses := 0
	fake.SetReplies(func(req llmtest.Request) llmtest.Reply {
		if !req.HasTool(analysis.Tool) {
			return llmtest.Reply{Text: "Your order was delivered yesterday."}
		}
		analyses++
		if analyses == 1 { // the order id as a number: the schema wants a string
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: analysis.Tool,
				Arguments: `{"summary":"s","structured_data":{"order_id":6735,"delivered":true},"success":true}`}}}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: analysis.Tool, Arguments: good}}}
	})
	c := placeConvCall(t, st)
	c.say(qOrder)
	c.waitQuiet(time.Now(), "the reply")
	r := c.hangUp()

	// The record announced by call.ended says pending or already completed; then it is
	// completed, with the second answer.
	var rec analysedRecord
	harness.WaitFor(t, 60*time.Second, "the record's analysis to be final", func() bool {
		harness.Must(t, st.Do(t, http.MethodGet, "/v1/calls/"+r.ID, nil, &rec), http.StatusOK, "GET call")
		return rec.Analysis != nil && rec.Analysis.Status != persona.AnalysisPending
	})
	a := rec.Analysis
	if a.Status != persona.AnalysisCompleted || a.Summary == nil || !strings.Contains(*a.Summary, "delivered yesterday") ||
		string(a.StructuredData) != `{"order_id":"6735","delivered":true}` || a.Success == nil || !*a.Success || a.Error != nil {
		t.Fatalf("record's analysis %+v (structured_data %s), want the model's second answer", a, a.StructuredData)
	}
	var asked []llmtest.Request
	for _, q := range fake.Requests() {
		if q.HasTool(analysis.Tool) {
			asked = append(asked, q)
		}
	}
	if len(asked) != 2 {
		t.Fatalf("%d analysis requests, want 2 (the refused answer and the retry)", len(asked))
	}
	user := asked[0].Messages[1].Content
	if !strings.Contains(user, "caller:") || !strings.Contains(user, "assistant: Your order was delivered yesterday.") {
		t.Errorf("the analysis got the transcript:\n%s\nwant both sides", user)
	}
	if last := asked[1].Messages[len(asked[1].Messages)-1]; last.Role != "tool" || !strings.Contains(last.Content, "/order_id") {
		t.Errorf("the retry's last message %+v, want the refusal naming /order_id", last)
	}
	// The conversation's prompt tokens, as the fake reports them (the words of each
	// request's messages); the record read at call.ended may hold the analysis's already,
	// when it came quickly.
	var conversation int64
	for _, q := range fake.Requests() {
		if !q.HasTool(analysis.Tool) {
			for _, m := range q.Messages {
				conversation += int64(len(strings.Fields(m.Content)))
			}
		}
	}
	if rec.Usage == nil || r.Usage == nil || rec.Usage.LLMPromptTokens <= conversation {
		t.Errorf("usage after the analysis %+v (at call.ended %+v), the conversation's prompt tokens %d: want the analysis's tokens added", rec.Usage, r.Usage, conversation)
	}
	d := deliveredInOrder(t, hooks, r.ID)
	if d.Status != persona.AnalysisCompleted || d.Summary == nil || *d.Summary != *a.Summary || string(d.StructuredData) != string(a.StructuredData) ||
		d.VersionID != str(r.VersionID) {
		t.Errorf("call.analyzed %+v, want the record's analysis", d)
	}
	eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallAnalyzed, r.ID)
}

// TestAnalysisSkippedWithoutModel: a worker with no language model configured (the
// built-in responder) reports the analysis skipped with the reason, and call.analyzed
// says so after call.ended.
func TestAnalysisSkippedWithoutModel(t *testing.T) {
	st := tenant(t)
	st.StartWorker(t, nil, worker.Options{}) // LLM_BASE_URL unset, no engines: greets and holds the line
	hooks := analysisEndpoint(t, st)
	analysisAssistant(t, st, "Hello, this is the orders desk.")
	placed := ring(t, st, "audio", platformsim.PartyOptions{})
	harness.WaitFor(t, 30*time.Second, "the greeting to be heard", func() bool {
		bot := st.Sim.Bot(placed.ID)
		if bot == nil {
			return false
		}
		ss := bot.Sounds()
		return len(ss) > 0 && !ss[len(ss)-1].Ongoing && time.Since(ss[len(ss)-1].End) > 800*time.Millisecond
	})
	hangupSim(t, st, placed.ID)
	d := deliveredInOrder(t, hooks, placed.CallID)
	if d.Status != persona.AnalysisSkipped || d.Error == nil || *d.Error != analysis.NoModel || d.Summary != nil || d.Success != nil {
		t.Errorf("call.analyzed %+v, want skipped: %q", d, analysis.NoModel)
	}
	var rec analysedRecord
	harness.Must(t, st.Do(t, http.MethodGet, "/v1/calls/"+placed.CallID, nil, &rec), http.StatusOK, "GET call")
	if rec.Analysis == nil || rec.Analysis.Status != persona.AnalysisSkipped || rec.Analysis.Error == nil || *rec.Analysis.Error != analysis.NoModel {
		t.Errorf("record's analysis %+v, want skipped with the reason", rec.Analysis)
	}
}
