// Package llm is the persona's language model: an OpenAI-compatible streaming Chat
// Completions client (OpenAI, Groq, vLLM, llama.cpp's server, Ollama all speak it), and
// the built-in responder a deployment without a model uses.
package llm

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
)

// Config is an OpenAI-compatible endpoint.
type Config struct {
	BaseURL string // e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1; required
	APIKey  string // sent as a bearer token; may be empty for local servers
	Model   string // default model; a request's Model overrides it
	// MaxTokens caps each reply (max_tokens in the request): a spoken reply is a few
	// sentences, and no reply may run up the operator's bill. 0 means DefaultMaxTokens.
	MaxTokens int
	// HTTPClient carries the requests; default a client without an overall timeout (a
	// reply streams for as long as it speaks: the caller's context bounds it).
	HTTPClient *http.Client
}

// DefaultMaxTokens is the per-reply token cap when Config.MaxTokens is 0: about 350
// words, minutes of speech, well past any reply a caller waits through.
const DefaultMaxTokens = 500

// Client streams replies from an OpenAI-compatible Chat Completions endpoint.
type Client struct {
	c         *openai.Client
	model     string
	maxTokens int
}

var _ speech.Model = (*Client)(nil)

// New makes a client. It does not contact the endpoint.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" {
		return nil, errors.New("llm: BaseURL is required")
	}
	if cfg.Model == "" {
		return nil, errors.New("llm: Model is required")
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.HTTPClient != nil {
		oc.HTTPClient = cfg.HTTPClient
	} else {
		oc.HTTPClient = &http.Client{}
	}
	maxTokens := cfg.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	return &Client{c: openai.NewClientWithConfig(oc), model: cfg.Model, maxTokens: maxTokens}, nil
}

// Stream asks for a reply. Cancelling ctx closes the connection and stops the stream.
func (c *Client) Stream(ctx context.Context, req speech.Request) (speech.Stream, error) {
	model := c.model
	if req.Model != "" {
		model = req.Model
	}
	msgs := make([]openai.ChatCompletionMessage, 0, len(req.Messages))
	for _, m := range req.Messages {
		om := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		if len(m.Pictures) > 0 {
			om.Content, om.MultiContent = "", contentParts(m)
		}
		for _, tc := range m.ToolCalls {
			om.ToolCalls = append(om.ToolCalls, openai.ToolCall{ID: tc.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
		}
		msgs = append(msgs, om)
	}
	// include_usage: the server's own token count arrives in the stream's last chunk
	// (Chunk.Usage), for the call's usage; a server that sends none is estimated.
	creq := openai.ChatCompletionRequest{Model: model, Messages: msgs, Stream: true, MaxTokens: c.maxTokens,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true}}
	for _, t := range req.Tools {
		creq.Tools = append(creq.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters,
		}})
	}
	if req.ForceTool != "" {
		creq.ToolChoice = openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: req.ForceTool}}
	}
	s, err := c.c.CreateChatCompletionStream(ctx, creq)
	if err != nil {
		return nil, fmt.Errorf("llm: chat completion (%s): %w", model, err)
	}
	return &stream{s: s}, nil
}

// contentParts are a message with pictures as Chat Completions' content parts: its text,
// then each picture as a data URL of its JPEG (image_url), which every OpenAI-compatible
// server that takes images reads; no server has to fetch anything.
func contentParts(m speech.Message) []openai.ChatMessagePart {
	parts := make([]openai.ChatMessagePart, 0, 1+len(m.Pictures))
	if m.Content != "" {
		parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: m.Content})
	}
	for _, p := range m.Pictures {
		parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL,
			ImageURL: &openai.ChatMessageImageURL{URL: "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(p.JPEG)}})
	}
	return parts
}

type stream struct {
	s       *openai.ChatCompletionStream
	call    *speech.ToolCall // the tool call whose deltas are arriving
	index   int              // its index in the reply
	pending []speech.Chunk
	ended   bool // the server's stream is over
}

// Next turns the stream's deltas into chunks: content as text, each tool call once its
// arguments are complete (the next call starts, the choice finishes, or the stream
// ends), and the server's usage report.
func (s *stream) Next() (speech.Chunk, error) {
	for len(s.pending) == 0 {
		if s.ended {
			return speech.Chunk{}, io.EOF
		}
		resp, err := s.s.Recv()
		if errors.Is(err, io.EOF) {
			s.ended = true
			s.endCall()
			continue
		}
		if err != nil {
			return speech.Chunk{}, fmt.Errorf("llm: stream: %w", err)
		}
		if u := resp.Usage; u != nil {
			s.pending = append(s.pending, speech.Chunk{Usage: &speech.Tokens{Prompt: u.PromptTokens, Completion: u.CompletionTokens}})
		}
		for _, ch := range resp.Choices {
			if ch.Delta.Content != "" {
				s.pending = append(s.pending, speech.Chunk{Text: ch.Delta.Content})
			}
			for _, tc := range ch.Delta.ToolCalls {
				index := s.index
				if tc.Index != nil {
					index = *tc.Index
				}
				if s.call != nil && (index != s.index || tc.ID != "" && tc.ID != s.call.ID) {
					s.endCall()
				}
				if s.call == nil {
					s.call, s.index = &speech.ToolCall{ID: tc.ID}, index
				}
				s.call.Name += tc.Function.Name
				s.call.Arguments += tc.Function.Arguments
			}
			if ch.FinishReason != "" {
				s.endCall()
			}
		}
	}
	c := s.pending[0]
	s.pending = s.pending[1:]
	return c, nil
}

// endCall hands on the tool call being assembled, if any.
func (s *stream) endCall() {
	if s.call == nil {
		return
	}
	if s.call.Arguments == "" {
		s.call.Arguments = "{}"
	}
	s.pending = append(s.pending, speech.Chunk{ToolCall: s.call})
	s.call = nil
}

func (s *stream) Close() error { return s.s.Close() }
