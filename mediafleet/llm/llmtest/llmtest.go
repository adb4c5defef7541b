// Package llmtest is a fake OpenAI-compatible Chat Completions server for tests and
// benchmarks: an httptest server on 127.0.0.1 (or on in-memory pipes: NewPiped) that
// streams scripted replies as real server-sent events, with a configurable delay before
// the first token and between tokens, tool calls, an error mode (5xx) and a hang mode
// (never answers), the usage report of stream_options.include_usage, and a record of
// every request it received.
package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/internal/pipenet"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Reply is what the server answers to one request.
type Reply struct {
	// Text is streamed a word at a time (each token a word with its trailing space).
	Text string
	// EndCall makes the reply end with a call of the end_call tool.
	EndCall bool
	// ToolCalls end the reply (after EndCall's), each streamed as servers do: its id and
	// name first, then its arguments in two pieces.
	ToolCalls []ToolCall
	// Status, when not 0 or 200, answers with that status and an OpenAI error body.
	Status int
	// Hang never answers: the request waits until the client gives up or Close.
	Hang bool
	// NoUsage sends no usage report even when the request asks for one
	// (stream_options.include_usage), as some servers do.
	NoUsage bool
}

// Usage is a usage report the server sent: prompt tokens are the words of the request's
// messages, completion tokens the tokens streamed (a word each) and three per tool call.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Message is a message of a received request.
type Message struct {
	Role string `json:"role"`
	// Content is the message's text: its content when a string, else its text parts
	// joined by a space.
	Content    string `json:"content"`
	ToolCallID string `json:"tool_call_id,omitempty"` // the call a tool message answers
	// ToolCalls are an assistant message's tool calls, as name(arguments) joined by "; ".
	ToolCalls Calls `json:"tool_calls,omitempty"`
	// Images are the URLs of the message's image_url content parts, in order, joined by
	// a space (a string, as ToolCalls, so that a Message compares with ==): data URLs
	// hold none. ImageURLs splits them.
	Images string `json:"-"`
	// Parts is how many content parts the message had; 0 when its content was a string.
	Parts int `json:"-"`
}

// ImageURLs are the message's image_url parts' URLs.
func (m Message) ImageURLs() []string { return strings.Fields(m.Images) }

// UnmarshalJSON reads a message whose content is a string or a list of content parts
// (text and image_url), as Chat Completions takes either; a part of another type is an
// error, as a server that does not know it would answer.
func (m *Message) UnmarshalJSON(b []byte) error {
	type plain Message
	var raw struct {
		plain
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*m = Message(raw.plain)
	if len(raw.Content) == 0 || string(raw.Content) == "null" {
		return nil
	}
	if raw.Content[0] == '"' {
		return json.Unmarshal(raw.Content, &m.Content)
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL *struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(raw.Content, &parts); err != nil {
		return err
	}
	var texts, images []string
	for _, p := range parts {
		switch {
		case p.Type == "text":
			texts = append(texts, p.Text)
		case p.Type == "image_url" && p.ImageURL != nil && p.ImageURL.URL != "":
			images = append(images, p.ImageURL.URL)
		default:
			return fmt.Errorf("content part of type %q is not text or image_url", p.Type)
		}
	}
	m.Content, m.Images, m.Parts = strings.Join(texts, " "), strings.Join(images, " "), len(parts)
	return nil
}

// Calls are the tool calls of an assistant message, written name(arguments) and joined
// by "; ": a string, so that a Message compares with ==.
type Calls string

// UnmarshalJSON reads Chat Completions' tool_calls list.
func (c *Calls) UnmarshalJSON(b []byte) error {
	var list []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	parts := make([]string, len(list))
	for i, tc := range list {
		parts[i] = tc.Function.Name + "(" + tc.Function.Arguments + ")"
	}
	*c = Calls(strings.Join(parts, "; "))
	return nil
}

// ToolCall is a tool call of a Reply.
type ToolCall struct {
	Name      string
	Arguments string // a JSON object
}

// Request is a request the server received.
type Request struct {
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	Stream   bool      `json:"stream"`
	// MaxTokens is the request's max_tokens (0 when absent).
	MaxTokens int `json:"max_tokens"`
	// StreamOptions.IncludeUsage asks for the usage report in the last chunk.
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	// ToolChoice is the request's tool_choice as sent (nil when absent): "auto", "none",
	// "required" or {"type":"function","function":{"name":...}}.
	ToolChoice json.RawMessage `json:"tool_choice"`
	Auth       string          `json:"-"` // the Authorization header
}

// HasTool reports whether the request offered the tool.
func (r Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Function.Name == name {
			return true
		}
	}
	return false
}

// Tool returns the parameters of the tool the request offered by that name, if it did.
func (r Request) Tool(name string) (json.RawMessage, bool) {
	for _, t := range r.Tools {
		if t.Function.Name == name {
			return t.Function.Parameters, true
		}
	}
	return nil, false
}

// Server is the fake endpoint. Set its fields before requests arrive or under its
// setters; they are read per request.
type Server struct {
	url    string
	client *http.Client
	stop   func()
	quit   chan struct{}

	mu         sync.Mutex
	firstDelay time.Duration
	tokenDelay time.Duration
	replies    func(Request) Reply
	requests   []Request
	firstSent  []time.Time
	usage      []Usage
}

// New starts a server on 127.0.0.1 that answers every request with reply. Close it when
// done.
func New(reply Reply) *Server {
	s := &Server{quit: make(chan struct{}), replies: func(Request) Reply { return reply }}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	s.url, s.client = srv.URL, srv.Client()
	s.stop = func() {
		srv.CloseClientConnections()
		srv.Close()
	}
	return s
}

// NewPiped is New serving over in-memory connections (net.Pipe) instead of a socket, for
// tests on a simulated clock (testing/synctest): a goroutine waiting on a socket keeps
// the clock from advancing, one waiting on a pipe does not. Only Client reaches it. Make
// it and Close it inside the test's bubble.
func NewPiped(reply Reply) *Server {
	s := &Server{quit: make(chan struct{}), replies: func(Request) Reply { return reply }}
	l := pipenet.New("llmtest")
	srv := &http.Server{Handler: http.HandlerFunc(s.serve)}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(l)
	}()
	tr := &http.Transport{DialContext: l.Dial}
	s.url, s.client = "http://llmtest.invalid", &http.Client{Transport: tr}
	s.stop = func() {
		srv.Close()
		tr.CloseIdleConnections()
		<-served
	}
	return s
}

// URL is the base URL a client is configured with (…/v1).
func (s *Server) URL() string { return s.url + "/v1" }

// Client is an HTTP client that reaches the server (the only one that reaches a piped
// server).
func (s *Server) Client() *http.Client { return s.client }

// Close releases hanging requests and stops the server.
func (s *Server) Close() {
	close(s.quit)
	s.stop()
}

// SetDelays sets the delay before the first token and between tokens.
func (s *Server) SetDelays(first, perToken time.Duration) {
	s.mu.Lock()
	s.firstDelay, s.tokenDelay = first, perToken
	s.mu.Unlock()
}

// SetReply answers every later request with r.
func (s *Server) SetReply(r Reply) { s.SetReplies(func(Request) Reply { return r }) }

// SetReplies answers each later request with what f returns for it.
func (s *Server) SetReplies(f func(Request) Reply) {
	s.mu.Lock()
	s.replies = f
	s.mu.Unlock()
}

// Requests are the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Usages are the usage reports sent so far, in order.
func (s *Server) Usages() []Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Usage(nil), s.usage...)
}

// FirstTokens are the times the first token of each streamed reply was written.
func (s *Server) FirstTokens() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.firstSent...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	var req Request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, fmt.Sprintf(`{"error":{"message":%q,"type":"invalid_request_error"}}`, err.Error()), http.StatusBadRequest)
		return
	}
	req.Auth = r.Header.Get("Authorization")
	s.mu.Lock()
	s.requests = append(s.requests, req)
	reply, first, per := s.replies(req), s.firstDelay, s.tokenDelay
	s.mu.Unlock()

	if reply.Hang {
		select {
		case <-r.Context().Done():
		case <-s.quit:
		}
		return
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		fmt.Fprintf(w, `{"error":{"message":"scripted failure %d","type":"server_error"}}`, reply.Status)
		return
	}
	if !req.Stream {
		http.Error(w, `{"error":{"message":"only streaming is faked","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	wait := func(d time.Duration) bool {
		if d <= 0 {
			return true
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-r.Context().Done():
		case <-s.quit:
		}
		return false
	}
	created := time.Now().Unix()
	send := func(delta map[string]any, finish any) bool {
		b, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	if !wait(first) {
		return
	}
	s.mu.Lock()
	s.firstSent = append(s.firstSent, time.Now())
	s.mu.Unlock()
	if !send(map[string]any{"role": "assistant", "content": ""}, nil) {
		return
	}
	for i, tok := range strings.SplitAfter(reply.Text, " ") {
		if tok == "" {
			continue
		}
		if i > 0 && !wait(per) {
			return
		}
		if !send(map[string]any{"content": tok}, nil) {
			return
		}
	}
	finish := "stop"
	calls := reply.ToolCalls
	if reply.EndCall {
		calls = append([]ToolCall{{Name: persona.EndCallTool, Arguments: "{}"}}, calls...)
	}
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	for i, c := range calls {
		half := len(c.Arguments) / 2
		deltas := []map[string]any{
			{"index": i, "id": fmt.Sprintf("call_%d", i), "type": "function", "function": map[string]any{"name": c.Name, "arguments": ""}},
			{"index": i, "function": map[string]any{"arguments": c.Arguments[:half]}},
			{"index": i, "function": map[string]any{"arguments": c.Arguments[half:]}},
		}
		for _, d := range deltas {
			if !send(map[string]any{"tool_calls": []any{d}}, nil) {
				return
			}
		}
	}
	if !send(map[string]any{}, finish) {
		return
	}
	if req.StreamOptions.IncludeUsage && !reply.NoUsage {
		u := Usage{CompletionTokens: len(strings.Fields(reply.Text)) + 3*len(calls)}
		for _, m := range req.Messages {
			u.PromptTokens += len(strings.Fields(m.Content))
		}
		b, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{}, "usage": map[string]any{"prompt_tokens": u.PromptTokens,
				"completion_tokens": u.CompletionTokens, "total_tokens": u.PromptTokens + u.CompletionTokens},
		})
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return
		}
		s.mu.Lock()
		s.usage = append(s.usage, u)
		s.mu.Unlock()
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}
