// Package analysis is a persona worker's post-call analysis: once a call has ended, the
// version's model is asked once, with the transcript and the tool calls, for what the
// version's analysis wants (a summary, structured data matching a JSON Schema, success
// against criteria). The answer comes as a call of one tool, submit_analysis, which the
// request forces (tool_choice) and whose parameters are built from the version's
// settings; a result that does not match is told to the model and asked for once more,
// and then the analysis fails with the reason.
//
// It runs in the media fleet, which holds the model's credentials; the control plane
// only gets the result (persona.ReportAnalysis).
package analysis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/schemacheck"
)

// Tool is the name of the tool the model answers with.
const Tool = "submit_analysis"

// Attempts is how many times the model is asked at most: once, and once more after a
// result that did not match (or a failed request).
const Attempts = 2

// DefaultTimeout bounds each request to the model, from sending it to its last chunk.
const DefaultTimeout = 60 * time.Second

// NoModel is the reason of a skipped analysis in a deployment without a language model.
const NoModel = "no language model is configured for this deployment (LLM_BASE_URL), so calls are not analysed"

// Analyst asks a model for a call's analysis.
type Analyst struct {
	// Model is the deployment's language model; nil: no model is configured, and every
	// analysis is skipped (NoModel).
	Model speech.Model
	// Timeout bounds each request; 0 is DefaultTimeout.
	Timeout time.Duration
}

// Result is an analysis and the model's tokens it took (the call's usage counts them).
type Result struct {
	persona.AnalysisResult
	Tokens speech.Tokens
	// Estimated: the model sent no usage report of its own for some request, and its
	// tokens were counted at about four characters a token.
	Estimated bool
}

// Run analyses a call of version v from its transcript. It never fails: a model that
// fails or answers wrongly twice makes a failed result with the reason.
func (a Analyst) Run(ctx context.Context, v persona.Version, transcript []persona.Turn) Result {
	want := v.Analysis
	switch {
	case want == nil:
		return Result{AnalysisResult: persona.AnalysisResult{Status: persona.AnalysisSkipped, Error: "the version asks for no analysis"}}
	case a.Model == nil:
		return Result{AnalysisResult: persona.AnalysisResult{Status: persona.AnalysisSkipped, Error: NoModel}}
	case !hasContent(transcript):
		return Result{AnalysisResult: persona.AnalysisResult{Status: persona.AnalysisSkipped,
			Error: "the call has no transcript: nothing was said"}}
	}
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	req := speech.Request{Model: v.Model, Messages: []speech.Message{
		{Role: speech.RoleSystem, Content: instructions(v)},
		{Role: speech.RoleUser, Content: "The call's transcript:\n\n" + Transcript(transcript)},
	}, Tools: []speech.Tool{{Name: Tool, Description: "Submit the analysis of the call.", Parameters: Parameters(*want)}},
		// Forced: a model asked only in words may answer in prose, which fails both tries.
		ForceTool: Tool}

	var out Result
	var last error
	for attempt := range Attempts {
		rctx, cancel := context.WithTimeout(ctx, timeout)
		ans, err := ask(rctx, a.Model, req)
		cancel()
		out.Tokens.Prompt += ans.tokens.Prompt
		out.Tokens.Completion += ans.tokens.Completion
		out.Estimated = out.Estimated || ans.estimated
		if err != nil {
			last = fmt.Errorf("the model failed: %w", err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		res, err := Check(*want, ans.arguments)
		if err == nil {
			out.AnalysisResult = res
			return out
		}
		last = err
		if attempt+1 < Attempts {
			req.Messages = append(req.Messages, retryMessages(ans, err)...)
		}
	}
	msg := last.Error()
	if n := persona.MaxAnalysisErrorLen; utf8.RuneCountInString(msg) > n {
		msg = string([]rune(msg)[:n-1]) + "…"
	}
	out.AnalysisResult = persona.AnalysisResult{Status: persona.AnalysisFailed, Error: msg}
	return out
}

// hasContent: some turn holds words or a tool call.
func hasContent(ts []persona.Turn) bool {
	for _, t := range ts {
		if strings.TrimSpace(t.Text) != "" || t.Tool != nil {
			return true
		}
	}
	return false
}

// instructions is the system message: what to produce, the criteria, and the
// assistant's own instructions for context.
func instructions(v persona.Version) string {
	var b strings.Builder
	b.WriteString("You analyse a finished phone call between a caller and an AI assistant. ")
	b.WriteString("Read the transcript the user gives and call the tool " + Tool + " exactly once with your analysis; write nothing else.\n")
	w := v.Analysis
	if w.Summary {
		b.WriteString("- summary: two to four sentences saying who called, what they wanted and how the call ended.\n")
	}
	if len(w.StructuredData) > 0 {
		b.WriteString("- structured_data: the data the call yielded, matching the tool's schema exactly; leave out what the call did not say unless the schema requires it.\n")
	}
	if strings.TrimSpace(w.SuccessCriteria) != "" {
		b.WriteString("- success: true only if the call met these criteria, else false.\n")
		b.WriteString("Success criteria:\n" + w.SuccessCriteria + "\n")
	}
	if p := strings.TrimSpace(v.SystemPrompt); p != "" {
		b.WriteString("\nFor context, the assistant's instructions were:\n" + p + "\n")
	}
	return b.String()
}

// Transcript writes the turns as the model reads them: one line each, its time from
// answer, the speaker and the words; a tool call with its arguments and result or error.
func Transcript(ts []persona.Turn) string {
	var b strings.Builder
	for _, t := range ts {
		at := time.Duration(t.StartMS) * time.Millisecond
		stamp := fmt.Sprintf("[%02d:%02d]", int(at.Minutes()), int(at.Seconds())%60)
		switch {
		case t.Tool != nil:
			fmt.Fprintf(&b, "%s tool %s(%s)", stamp, t.Tool.Name, orEmpty(t.Tool.Arguments))
			if t.Tool.Error != nil {
				fmt.Fprintf(&b, " failed: %s", t.Tool.Error.Message)
			} else {
				fmt.Fprintf(&b, " returned %s", orEmpty(t.Tool.Result))
			}
		case t.TextTrimmed:
			fmt.Fprintf(&b, "%s %s: (words not kept)", stamp, t.Speaker)
		default:
			fmt.Fprintf(&b, "%s %s: %s", stamp, t.Speaker, t.Text)
			if t.Interrupted {
				b.WriteString(" (interrupted)")
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func orEmpty(r json.RawMessage) string {
	if len(r) == 0 {
		return "{}"
	}
	return string(r)
}

// Parameters is the schema of submit_analysis's arguments: what the version asks for,
// each required.
func Parameters(w persona.Analysis) json.RawMessage {
	props := map[string]any{}
	required := []string{}
	if w.Summary {
		props["summary"] = map[string]any{"type": "string", "description": "A short summary of the call."}
		required = append(required, "summary")
	}
	if len(w.StructuredData) > 0 {
		props["structured_data"] = w.StructuredData
		required = append(required, "structured_data")
	}
	if strings.TrimSpace(w.SuccessCriteria) != "" {
		props["success"] = map[string]any{"type": "boolean", "description": "Whether the call met the success criteria."}
		required = append(required, "success")
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required})
	return b
}

// Check reads the model's arguments as the result of the analysis w asks for: every
// part asked for present and of its type, the structured data matching its schema and
// within persona.MaxAnalysisStructuredBytes; the summary is cut to
// persona.MaxAnalysisSummaryLen characters. The error says what is wrong, for the model
// and for the record.
func Check(w persona.Analysis, arguments string) (persona.AnalysisResult, error) {
	var got struct {
		Summary        *string         `json:"summary"`
		StructuredData json.RawMessage `json:"structured_data"`
		Success        *bool           `json:"success"`
	}
	dec := json.NewDecoder(strings.NewReader(arguments))
	if err := dec.Decode(&got); err != nil {
		return persona.AnalysisResult{}, fmt.Errorf("the answer is not a JSON object of summary, structured_data and success: %v", err)
	}
	res := persona.AnalysisResult{Status: persona.AnalysisCompleted}
	if w.Summary {
		if got.Summary == nil || strings.TrimSpace(*got.Summary) == "" {
			return persona.AnalysisResult{}, errors.New("summary is missing")
		}
		s := strings.TrimSpace(*got.Summary)
		if utf8.RuneCountInString(s) > persona.MaxAnalysisSummaryLen {
			s = string([]rune(s)[:persona.MaxAnalysisSummaryLen])
		}
		res.Summary = s
	}
	if len(w.StructuredData) > 0 {
		if len(got.StructuredData) == 0 || string(got.StructuredData) == "null" {
			return persona.AnalysisResult{}, errors.New("structured_data is missing")
		}
		if err := schemacheck.Validate(w.StructuredData, got.StructuredData); err != nil {
			return persona.AnalysisResult{}, fmt.Errorf("structured_data does not match the schema: %v", err)
		}
		compact, err := json.Marshal(got.StructuredData) // a RawMessage marshals compacted
		if err != nil {
			return persona.AnalysisResult{}, fmt.Errorf("structured_data is not valid JSON: %v", err)
		}
		if len(compact) > persona.MaxAnalysisStructuredBytes {
			return persona.AnalysisResult{}, fmt.Errorf("structured_data is %d bytes of JSON, over the limit of %d", len(compact), persona.MaxAnalysisStructuredBytes)
		}
		res.StructuredData = compact
	}
	if strings.TrimSpace(w.SuccessCriteria) != "" {
		if got.Success == nil {
			return persona.AnalysisResult{}, errors.New("success is missing (true or false)")
		}
		res.Success = got.Success
	}
	return res, nil
}

// answer is what one request brought: the arguments of submit_analysis (or the text,
// when the model wrote its JSON instead of calling the tool), and its tokens.
type answer struct {
	call      *speech.ToolCall // the model's call of submit_analysis
	text      string
	arguments string
	tokens    speech.Tokens
	estimated bool
}

// ask sends one request and reads the whole reply.
func ask(ctx context.Context, m speech.Model, req speech.Request) (answer, error) {
	var ans answer
	st, err := m.Stream(ctx, req)
	if err != nil {
		return ans, err
	}
	defer st.Close()
	var text strings.Builder
	var usage *speech.Tokens
	for {
		ch, err := st.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return ans, err
		}
		text.WriteString(ch.Text)
		if ch.ToolCall != nil && ch.ToolCall.Name == Tool && ans.call == nil {
			tc := *ch.ToolCall
			ans.call = &tc
		}
		if ch.Usage != nil {
			usage = ch.Usage
		}
	}
	ans.text = text.String()
	if usage != nil {
		ans.tokens = *usage
	} else {
		ans.estimated = true
		ans.tokens = speech.Tokens{Prompt: speech.EstimatePrompt(req), Completion: speech.EstimateTokens(ans.text)}
		if ans.call != nil {
			ans.tokens.Completion += speech.EstimateTokens(ans.call.Arguments)
		}
	}
	switch {
	case ans.call != nil:
		ans.arguments = ans.call.Arguments
	default:
		ans.arguments = unfence(ans.text)
	}
	return ans, nil
}

// unfence is a text answer without the ```json fence models like to put around JSON.
func unfence(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```")
		s = strings.TrimPrefix(s, "json")
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	}
	return strings.TrimSpace(s)
}

// retryMessages tell the model its answer did not do and ask again: its tool call
// answered with the error (as the protocol wants every call answered), or its text
// followed by the correction.
func retryMessages(ans answer, err error) []speech.Message {
	fix := "That result was refused: " + err.Error() + ". Call " + Tool + " again with a corrected result."
	if ans.call != nil {
		return []speech.Message{
			{Role: speech.RoleAssistant, Content: ans.text, ToolCalls: []speech.ToolCall{*ans.call}},
			{Role: speech.RoleTool, ToolCallID: ans.call.ID, Content: fix},
		}
	}
	return []speech.Message{
		{Role: speech.RoleAssistant, Content: ans.text},
		{Role: speech.RoleUser, Content: fix},
	}
}
