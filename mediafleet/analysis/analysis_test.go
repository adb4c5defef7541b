package analysis_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/mediafleet/analysis"
	"github.com/bridgeline/bridgeline/mediafleet/llm"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/shared/persona"
)

const orderSchema = `{"type":"object","properties":{"order_id":{"type":"string"},"delivered":{"type":"boolean"}},"required":["order_id","delivered"],"additionalProperties":false}`

func version() persona.Version {
	return persona.Version{Name: "Ada", Model: "analysis-model", SystemPrompt: "You help customers of Acme with their orders.",
		CallSettings: persona.CallSettings{Analysis: &persona.Analysis{Summary: true, StructuredData: json.RawMessage(orderSchema),
			SuccessCriteria: "The caller learnt where their order is."}}}
}

func transcript() []persona.Turn {
	return []persona.Turn{
		{Speaker: persona.SpeakerAssistant, Text: "Hello, this is Ada.", StartMS: 300, EndMS: 1500},
		{Speaker: persona.SpeakerCaller, Text: "where is my order 6735", StartMS: 3200, EndMS: 5100},
		{Speaker: persona.SpeakerTool, StartMS: 5300, EndMS: 5400, Tool: &persona.ToolUse{Name: "lookup_order",
			Arguments: json.RawMessage(`{"order_id":"6735"}`), Result: json.RawMessage(`{"status":"delivered"}`), DurationMS: 100}},
		{Speaker: persona.SpeakerAssistant, Text: "Your order 6735 was delivered yesterday.", StartMS: 65500, EndMS: 68000},
	}
}

// client is the real OpenAI-compatible client, pointed at the fake server.
func client(t *testing.T, srv *llmtest.Server) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "sk-fleet", Model: "default-model", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func submit(args string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: analysis.Tool, Arguments: args}}}
}

const good = `{"summary":"A caller asked where order 6735 is; it was delivered yesterday.","structured_data":{"order_id":"6735","delivered":true},"success":true}`

// TestAnalysisPromptAndResult: one request to the version's model over the wire, with
// the instructions, the criteria, the transcript (tool call included) and the
// submit_analysis tool whose parameters embed the customer's schema; its call is the
// result, with the model's own token count.
func TestAnalysisPromptAndResult(t *testing.T) {
	srv := llmtest.New(submit(good))
	defer srv.Close()
	res := analysis.Analyst{Model: client(t, srv)}.Run(context.Background(), version(), transcript())

	if res.Status != persona.AnalysisCompleted || res.Error != "" {
		t.Fatalf("result = %+v, want completed", res.AnalysisResult)
	}
	if res.Summary != "A caller asked where order 6735 is; it was delivered yesterday." {
		t.Errorf("summary = %q", res.Summary)
	}
	if string(res.StructuredData) != `{"order_id":"6735","delivered":true}` {
		t.Errorf("structured_data = %s", res.StructuredData)
	}
	if res.Success == nil || !*res.Success {
		t.Errorf("success = %v, want true", res.Success)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Model != "analysis-model" || r.Auth != "Bearer sk-fleet" || !r.Stream {
		t.Errorf("request model %q auth %q stream %v: want the version's model, the fleet's key, streamed", r.Model, r.Auth, r.Stream)
	}
	if len(r.Messages) != 2 || r.Messages[0].Role != "system" || r.Messages[1].Role != "user" {
		t.Fatalf("messages = %+v, want system and user", r.Messages)
	}
	sys, user := r.Messages[0].Content, r.Messages[1].Content
	for _, want := range []string{analysis.Tool, "The caller learnt where their order is.", "You help customers of Acme"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system message lacks %q:\n%s", want, sys)
		}
	}
	for _, want := range []string{
		"[00:00] assistant: Hello, this is Ada.",
		"[00:03] caller: where is my order 6735",
		`[00:05] tool lookup_order({"order_id":"6735"}) returned {"status":"delivered"}`,
		"[01:05] assistant: Your order 6735 was delivered yesterday.",
	} {
		if !strings.Contains(user, want) {
			t.Errorf("transcript lacks %q:\n%s", want, user)
		}
	}
	params, ok := r.Tool(analysis.Tool)
	if !ok || len(r.Tools) != 1 {
		t.Fatalf("tools = %+v, want %s alone", r.Tools, analysis.Tool)
	}
	var p struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		t.Fatal(err)
	}
	if string(p.Properties["structured_data"]) != orderSchema || len(p.Required) != 3 {
		t.Errorf("parameters = %s, want the customer's schema under structured_data and three required", params)
	}
	u := srv.Usages()
	if len(u) != 1 || res.Tokens.Prompt != u[0].PromptTokens || res.Tokens.Completion != u[0].CompletionTokens || res.Estimated {
		t.Errorf("tokens = %+v estimated %v, want the server's %+v", res.Tokens, res.Estimated, u)
	}
}

// TestAnalysisForcesItsTool: every request names submit_analysis in tool_choice, as
// OpenAI's Chat Completions forces a function, so a model that would answer the
// instructions in prose (as many do unless forced) still answers with the tool. The
// fake model here is such a model: prose unless the request forces the tool.
func TestAnalysisForcesItsTool(t *testing.T) {
	srv := llmtest.New(llmtest.Reply{})
	defer srv.Close()
	srv.SetReplies(func(r llmtest.Request) llmtest.Reply {
		if forced(r) == analysis.Tool {
			return submit(good)
		}
		return llmtest.Reply{Text: "The caller asked about order 6735, which was delivered."}
	})
	res := analysis.Analyst{Model: client(t, srv)}.Run(context.Background(), version(), transcript())
	if res.Status != persona.AnalysisCompleted {
		t.Fatalf("result = %+v, want completed from the forced tool call", res.AnalysisResult)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	want := `{"type":"function","function":{"name":"` + analysis.Tool + `"}}`
	var got, wantV any
	json.Unmarshal(reqs[0].ToolChoice, &got)
	json.Unmarshal([]byte(want), &wantV)
	if fmt.Sprint(got) != fmt.Sprint(wantV) {
		t.Errorf("tool_choice = %s, want %s", reqs[0].ToolChoice, want)
	}
}

// forced is the function a request's tool_choice forces, or "".
func forced(r llmtest.Request) string {
	var c struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(r.ToolChoice, &c) != nil || c.Type != "function" {
		return ""
	}
	return c.Function.Name
}

// TestAnalysisRetriesOnceOnMismatch: structured data that does not match the schema is
// told to the model (its tool call answered with the reason) and asked for once more.
func TestAnalysisRetriesOnceOnMismatch(t *testing.T) {
	bad := `{"summary":"s","structured_data":{"order_id":6735,"delivered":true},"success":true}`
	srv := llmtest.New(llmtest.Reply{})
	defer srv.Close()
	n := 0
	srv.SetReplies(func(llmtest.Request) llmtest.Reply {
		n++
		if n == 1 {
			return submit(bad)
		}
		return submit(good)
	})
	res := analysis.Analyst{Model: client(t, srv)}.Run(context.Background(), version(), transcript())
	if res.Status != persona.AnalysisCompleted || string(res.StructuredData) != `{"order_id":"6735","delivered":true}` {
		t.Fatalf("result = %+v, want the second answer, completed", res.AnalysisResult)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if forced(reqs[1]) != analysis.Tool {
		t.Errorf("the retry's tool_choice = %s, want %s forced", reqs[1].ToolChoice, analysis.Tool)
	}
	msgs := reqs[1].Messages
	if len(msgs) != 4 {
		t.Fatalf("retry messages = %+v, want system, user, the call, its refusal", msgs)
	}
	if msgs[2].Role != "assistant" || !strings.Contains(string(msgs[2].ToolCalls), analysis.Tool) {
		t.Errorf("third message = %+v, want the model's call", msgs[2])
	}
	if msgs[3].Role != "tool" || msgs[3].ToolCallID == "" || !strings.Contains(msgs[3].Content, "/order_id") {
		t.Errorf("fourth message = %+v, want the tool answer naming /order_id", msgs[3])
	}
}

// TestAnalysisFailsAfterTwoMismatches: the second miss fails the analysis with the
// reason; no third request.
func TestAnalysisFailsAfterTwoMismatches(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply llmtest.Reply
		want  string
	}{
		{"schema miss", submit(`{"summary":"s","structured_data":{"order_id":"1"},"success":true}`), "structured_data does not match the schema"},
		{"no success", submit(`{"summary":"s","structured_data":{"order_id":"1","delivered":false}}`), "success is missing"},
		{"prose", llmtest.Reply{Text: "The caller was happy."}, "not a JSON object"},
		{"server error", llmtest.Reply{Status: 503}, "the model failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(tc.reply)
			defer srv.Close()
			res := analysis.Analyst{Model: client(t, srv)}.Run(context.Background(), version(), transcript())
			if res.Status != persona.AnalysisFailed || !strings.Contains(res.Error, tc.want) {
				t.Fatalf("result = %+v, want failed naming %q", res.AnalysisResult, tc.want)
			}
			if res.Summary != "" || res.StructuredData != nil || res.Success != nil {
				t.Errorf("a failed analysis carries %+v", res.AnalysisResult)
			}
			if n := len(srv.Requests()); n != analysis.Attempts {
				t.Errorf("%d requests, want %d", n, analysis.Attempts)
			}
		})
	}
}

// TestAnalysisTextAnswer: a model that writes the JSON (fenced) instead of calling the
// tool is taken at its word.
func TestAnalysisTextAnswer(t *testing.T) {
	srv := llmtest.New(llmtest.Reply{Text: "```json\n" + good + "\n```"})
	defer srv.Close()
	res := analysis.Analyst{Model: client(t, srv)}.Run(context.Background(), version(), transcript())
	if res.Status != persona.AnalysisCompleted || len(srv.Requests()) != 1 {
		t.Fatalf("result = %+v after %d requests, want completed after 1", res.AnalysisResult, len(srv.Requests()))
	}
}

// TestAnalysisOnlyWhatIsAsked: a summary alone asks for and keeps a summary alone.
func TestAnalysisOnlyWhatIsAsked(t *testing.T) {
	srv := llmtest.New(submit(`{"summary":"A short call."}`))
	defer srv.Close()
	v := version()
	v.Analysis = &persona.Analysis{Summary: true}
	res := analysis.Analyst{Model: client(t, srv)}.Run(context.Background(), v, transcript())
	if res.Status != persona.AnalysisCompleted || res.Summary != "A short call." || res.StructuredData != nil || res.Success != nil {
		t.Fatalf("result = %+v", res.AnalysisResult)
	}
	params, _ := srv.Requests()[0].Tool(analysis.Tool)
	if strings.Contains(string(params), "structured_data") || strings.Contains(string(params), "success") {
		t.Errorf("parameters = %s, want the summary alone", params)
	}
}

// TestAnalysisSkipped: no model configured, or nothing said: skipped with the reason,
// and no request made.
func TestAnalysisSkipped(t *testing.T) {
	res := analysis.Analyst{}.Run(context.Background(), version(), transcript())
	if res.Status != persona.AnalysisSkipped || res.Error != analysis.NoModel {
		t.Errorf("no model: %+v, want skipped with %q", res.AnalysisResult, analysis.NoModel)
	}
	srv := llmtest.New(submit(good))
	defer srv.Close()
	res = analysis.Analyst{Model: client(t, srv)}.Run(context.Background(), version(), nil)
	if res.Status != persona.AnalysisSkipped || !strings.Contains(res.Error, "nothing was said") || len(srv.Requests()) != 0 {
		t.Errorf("empty transcript: %+v after %d requests, want skipped without a request", res.AnalysisResult, len(srv.Requests()))
	}
}
