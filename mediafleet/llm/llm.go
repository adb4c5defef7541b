// Package llm is the persona's language model: an OpenAI-compatible streaming Chat
// Completions client (OpenAI, Groq, vLLM, llama.cpp's server, Ollama all speak it), and
// the built-in responder a deployment without a model uses.
package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/bridgeline/bridgeline/mediafleet/conversation"
)

// EndCallTool is the name of the tool the model calls to hang up.
const EndCallTool = "end_call"

// Config is an OpenAI-compatible endpoint.
type Config struct {
	BaseURL string // e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1; required
	APIKey  string // sent as a bearer token; may be empty for local servers
	Model   string // default model; a request's Model overrides it
	// HTTPClient carries the requests; default a client without an overall timeout (a
	// reply streams for as long as it speaks: the caller's context bounds it).
	HTTPClient *http.Client
}

// Client streams replies from an OpenAI-compatible Chat Completions endpoint.
type Client struct {
	c     *openai.Client
	model string
}

var _ conversation.Model = (*Client)(nil)

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
	return &Client{c: openai.NewClientWithConfig(oc), model: cfg.Model}, nil
}

// endCallDef is how the end_call tool is offered: no arguments.
var endCallDef = openai.Tool{
	Type: openai.ToolTypeFunction,
	Function: &openai.FunctionDefinition{
		Name: EndCallTool,
		Description: "End the phone call. Call it when the conversation is over (the caller said goodbye " +
			"or asked to hang up), after saying goodbye.",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{}},
	},
}

// Stream asks for a reply. Cancelling ctx closes the connection and stops the stream.
func (c *Client) Stream(ctx context.Context, req conversation.Request) (conversation.Stream, error) {
	model := c.model
	if req.Model != "" {
		model = req.Model
	}
	msgs := make([]openai.ChatCompletionMessage, 0, len(req.Messages))
	for _, m := range req.Messages {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: m.Role, Content: m.Content})
	}
	creq := openai.ChatCompletionRequest{Model: model, Messages: msgs, Stream: true}
	if req.EndCallTool {
		creq.Tools = []openai.Tool{endCallDef}
	}
	s, err := c.c.CreateChatCompletionStream(ctx, creq)
	if err != nil {
		return nil, fmt.Errorf("llm: chat completion (%s): %w", model, err)
	}
	return &stream{s: s}, nil
}

type stream struct {
	s       *openai.ChatCompletionStream
	endCall bool // end_call seen: said once
	pending []conversation.Chunk
}

// Next turns the stream's deltas into chunks: content as text, and the first sight of an
// end_call tool call (its name arrives in the call's first delta) as EndCall.
func (s *stream) Next() (conversation.Chunk, error) {
	for len(s.pending) == 0 {
		resp, err := s.s.Recv()
		if errors.Is(err, io.EOF) {
			return conversation.Chunk{}, io.EOF
		}
		if err != nil {
			return conversation.Chunk{}, fmt.Errorf("llm: stream: %w", err)
		}
		for _, ch := range resp.Choices {
			if ch.Delta.Content != "" {
				s.pending = append(s.pending, conversation.Chunk{Text: ch.Delta.Content})
			}
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Function.Name == EndCallTool && !s.endCall {
					s.endCall = true
					s.pending = append(s.pending, conversation.Chunk{EndCall: true})
				}
			}
		}
	}
	c := s.pending[0]
	s.pending = s.pending[1:]
	return c, nil
}

func (s *stream) Close() error { return s.s.Close() }
