package speech

import (
	"context"
	"encoding/json"
	"time"
	"unicode/utf8"
)

// Roles of a Message.
const (
	RoleSystem    = "system"
	RoleAssistant = "assistant"
	RoleUser      = "user"
	// RoleTool carries the result of a tool call back to the model; ToolCallID names
	// the call.
	RoleTool = "tool"
)

// Message is one message of the conversation sent to the model.
type Message struct {
	Role    string
	Content string
	// ToolCalls are the tools the assistant called in this message (RoleAssistant).
	ToolCalls []ToolCall
	// ToolCallID is the call whose result this message is (RoleTool).
	ToolCallID string
	// Pictures go with a user message's text (vision): the caller's camera or screen as
	// the model sees it, sent as image content parts.
	Pictures []Picture
}

// Picture is one still of what the caller shows: a JPEG at most MaxPictureSide pixels
// on its long side.
type Picture struct {
	// Source is PictureCamera or PictureScreen.
	Source string
	JPEG   []byte
	// At is when the frame it was made from arrived.
	At time.Time
}

// Sources of a Picture.
const (
	PictureCamera = "camera"
	PictureScreen = "screen"
)

// MaxPictureSide bounds a Picture's long side, in pixels.
const MaxPictureSide = 768

// PictureTokens is what EstimatePrompt counts for a picture: a 768-pixel picture at
// OpenAI's high detail is 85 tokens and 170 per 512-pixel tile, four of them.
const PictureTokens = 85 + 4*170

// Tool is a function the model may call.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema (an object) of the call's arguments.
	Parameters json.RawMessage
}

// ToolCall is the model's call of a tool, complete.
type ToolCall struct {
	ID   string
	Name string
	// Arguments is the JSON object the model wrote ("{}" without arguments).
	Arguments string
}

// Request is one reply asked of the model.
type Request struct {
	// Model overrides the deployment's default model when set (a version's `model`).
	Model    string
	Messages []Message
	// Tools are offered to the model.
	Tools []Tool
	// ForceTool names one of Tools the model must call (OpenAI's tool_choice naming a
	// function); empty leaves the choice to the model. Post-call analysis forces its
	// tool, so a model inclined to answer in prose still answers with the call.
	ForceTool string
}

// Model is a language model that streams its reply.
type Model interface {
	Stream(ctx context.Context, req Request) (Stream, error)
}

// Stream is a reply as it arrives. Cancelling the context given to Model.Stream stops it.
type Stream interface {
	// Next returns the next piece of the reply; io.EOF after the last.
	Next() (Chunk, error)
	Close() error
}

// Chunk is a piece of a streamed reply: text, or a call of one of the request's tools,
// handed on once its arguments are complete (the text before it in the reply comes
// first).
type Chunk struct {
	Text     string
	ToolCall *ToolCall
	// Usage is the model's own count of the request's tokens, when it reports one (an
	// OpenAI-compatible server asked for stream_options.include_usage sends it in its
	// last chunk, without text). A reply without it is counted by EstimateTokens.
	Usage *Tokens
}

// Tokens are a model request's tokens.
type Tokens struct {
	Prompt, Completion int
}

// EstimateTokens is the tokens of text by the usual rule of thumb for English with the
// common tokenisers: about four characters a token, at least one for any text. It
// counts a request whose model sent no usage of its own.
func EstimateTokens(text string) int {
	n := utf8.RuneCountInString(text)
	if n == 0 {
		return 0
	}
	return (n + 3) / 4
}

// EstimatePrompt is EstimateTokens over what a request sends: every message's text and
// tool calls, its pictures (PictureTokens each), and the tools offered (names,
// descriptions, parameter schemas), plus a few tokens of framing per message as chat
// formats add.
func EstimatePrompt(req Request) int {
	const perMessage = 4
	n := 0
	for _, m := range req.Messages {
		n += perMessage + EstimateTokens(m.Content) + len(m.Pictures)*PictureTokens
		for _, tc := range m.ToolCalls {
			n += EstimateTokens(tc.Name) + EstimateTokens(tc.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += EstimateTokens(t.Name) + EstimateTokens(t.Description) + EstimateTokens(string(t.Parameters))
	}
	return n
}

// ToolRunner is a Line whose call can run the customer's tools: the persona worker's asks
// the control plane, which posts to the customer's server. The conversation offers a
// version's tools to the model only on such a line.
type ToolRunner interface {
	// RunTool runs one call of a tool and returns how it went; it never fails otherwise.
	// Cancelling ctx (a barge-in, the call ending) abandons the call.
	RunTool(ctx context.Context, call ToolCall) ToolResult
}

// ToolResult is how one tool call went: Result (JSON) or Err.
type ToolResult struct {
	Result json.RawMessage
	Err    *ToolError
}

// ToolError is why a tool call brought no result; the model is told it.
type ToolError struct {
	Code    string
	Message string
}

// Content is what the model is told as the tool's message: the result, or the error as
// {"error": {"code", "message"}}.
func (r ToolResult) Content() string {
	if r.Err != nil {
		b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": r.Err.Code, "message": r.Err.Message}})
		return string(b)
	}
	if len(r.Result) == 0 {
		return "null"
	}
	return string(r.Result)
}
