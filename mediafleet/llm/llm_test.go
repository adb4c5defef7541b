package llm_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/llm"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/speech"
)

// collect reads a stream to its end: its text, and the tool calls in it.
func collect(t *testing.T, s speech.Stream) (text string, calls []speech.ToolCall, err error) {
	t.Helper()
	defer s.Close()
	var b strings.Builder
	for {
		c, err := s.Next()
		if errors.Is(err, io.EOF) {
			return b.String(), calls, nil
		}
		if err != nil {
			return b.String(), calls, err
		}
		b.WriteString(c.Text)
		if c.ToolCall != nil {
			calls = append(calls, *c.ToolCall)
		}
	}
}

var endCallTool = speech.Tool{Name: "end_call", Description: "End the call.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}

func newClient(t *testing.T, srv *llmtest.Server) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "sk-test", Model: "default-model"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClientStreams(t *testing.T) {
	lookup := speech.Tool{Name: "lookup_order", Description: "Find an order.", Parameters: json.RawMessage(`{"type":"object","properties":{"order":{"type":"string"}}}`)}
	tests := []struct {
		name      string
		reply     llmtest.Reply
		req       speech.Request
		wantText  string
		wantCalls []speech.ToolCall
		wantModel string
	}{
		{
			name:     "text with the default model",
			reply:    llmtest.Reply{Text: "Hello there. How can I help?"},
			req:      speech.Request{Messages: []speech.Message{{Role: "system", Content: "Be kind."}, {Role: "user", Content: "hi"}}},
			wantText: "Hello there. How can I help?", wantModel: "default-model",
		},
		{
			name:     "the version's model overrides",
			reply:    llmtest.Reply{Text: "Sure."},
			req:      speech.Request{Model: "small-model", Messages: []speech.Message{{Role: "user", Content: "hi"}}},
			wantText: "Sure.", wantModel: "small-model",
		},
		{
			name:     "end_call tool call",
			reply:    llmtest.Reply{Text: "Goodbye!", EndCall: true},
			req:      speech.Request{Tools: []speech.Tool{endCallTool}, Messages: []speech.Message{{Role: "user", Content: "bye"}}},
			wantText: "Goodbye!", wantModel: "default-model",
			wantCalls: []speech.ToolCall{{ID: "call_0", Name: "end_call", Arguments: "{}"}},
		},
		{
			name:  "tool calls with arguments, and a tool's result sent back",
			reply: llmtest.Reply{Text: "One moment.", ToolCalls: []llmtest.ToolCall{{Name: "lookup_order", Arguments: `{"order":"A-17"}`}, {Name: "end_call", Arguments: "{}"}}},
			req: speech.Request{Tools: []speech.Tool{lookup, endCallTool}, Messages: []speech.Message{
				{Role: "user", Content: "where is my order"},
				{Role: "assistant", ToolCalls: []speech.ToolCall{{ID: "call_9", Name: "lookup_order", Arguments: `{"order":"A-16"}`}}},
				{Role: "tool", ToolCallID: "call_9", Content: `{"status":"unknown"}`},
			}},
			wantText: "One moment.", wantModel: "default-model",
			wantCalls: []speech.ToolCall{{ID: "call_0", Name: "lookup_order", Arguments: `{"order":"A-17"}`}, {ID: "call_1", Name: "end_call", Arguments: "{}"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(tt.reply)
			defer srv.Close()
			s, err := newClient(t, srv).Stream(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			text, calls, err := collect(t, s)
			if err != nil {
				t.Fatal(err)
			}
			if text != tt.wantText || !slices.Equal(calls, tt.wantCalls) {
				t.Errorf("got %q with tool calls %+v, want %q with %+v", text, calls, tt.wantText, tt.wantCalls)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("server got %d requests, want 1", len(reqs))
			}
			got := reqs[0]
			if got.Model != tt.wantModel || !got.Stream || got.Auth != "Bearer sk-test" {
				t.Errorf("request model %q stream %v auth %q, want %q true Bearer sk-test", got.Model, got.Stream, got.Auth, tt.wantModel)
			}
			if got.MaxTokens != llm.DefaultMaxTokens {
				t.Errorf("request max_tokens = %d, want the per-reply cap %d", got.MaxTokens, llm.DefaultMaxTokens)
			}
			if len(got.Tools) != len(tt.req.Tools) {
				t.Errorf("%d tools offered, want %d", len(got.Tools), len(tt.req.Tools))
			}
			for _, tool := range tt.req.Tools {
				if !got.HasTool(tool.Name) {
					t.Errorf("%s not offered", tool.Name)
				}
			}
			if len(got.Messages) != len(tt.req.Messages) {
				t.Fatalf("server got %d messages, want %d", len(got.Messages), len(tt.req.Messages))
			}
			for i, m := range tt.req.Messages {
				var calls []string
				for _, tc := range m.ToolCalls {
					calls = append(calls, tc.Name+"("+tc.Arguments+")")
				}
				want := llmtest.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, ToolCalls: llmtest.Calls(strings.Join(calls, "; "))}
				if got.Messages[i] != want {
					t.Errorf("message %d = %+v, want %+v", i, got.Messages[i], m)
				}
			}
		})
	}
}

func TestClientStreamsBeforeTheReplyEnds(t *testing.T) {
	srv := llmtest.New(llmtest.Reply{Text: "one two three four five"})
	defer srv.Close()
	srv.SetDelays(50*time.Millisecond, 100*time.Millisecond)
	start := time.Now()
	s, err := newClient(t, srv).Stream(context.Background(), speech.Request{Messages: []speech.Message{{Role: "user", Content: "count"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	// The whole reply takes 450 ms; the first word must come well before.
	if el := time.Since(start); c.Text != "one " || el < 50*time.Millisecond || el > 300*time.Millisecond {
		t.Errorf("first chunk %q after %v, want \"one \" after 50-300 ms", c.Text, el)
	}
}

func TestClientErrors(t *testing.T) {
	t.Run("server error", func(t *testing.T) {
		srv := llmtest.New(llmtest.Reply{Status: 503})
		defer srv.Close()
		_, err := newClient(t, srv).Stream(context.Background(), speech.Request{Messages: []speech.Message{{Role: "user", Content: "hi"}}})
		if err == nil || !strings.Contains(err.Error(), "503") {
			t.Errorf("Stream = %v, want a 503 error", err)
		}
	})
	t.Run("hang is cut by the context", func(t *testing.T) {
		srv := llmtest.New(llmtest.Reply{Hang: true})
		defer srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := newClient(t, srv).Stream(ctx, speech.Request{Messages: []speech.Message{{Role: "user", Content: "hi"}}})
		if err == nil || !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
			t.Errorf("Stream = %v after %v, want the deadline after 200 ms", err, time.Since(start))
		}
	})
	t.Run("cancel mid-stream stops it", func(t *testing.T) {
		srv := llmtest.New(llmtest.Reply{Text: strings.Repeat("word ", 100)})
		defer srv.Close()
		srv.SetDelays(0, 50*time.Millisecond)
		ctx, cancel := context.WithCancel(context.Background())
		s, err := newClient(t, srv).Stream(ctx, speech.Request{Messages: []speech.Message{{Role: "user", Content: "hi"}}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Next(); err != nil {
			t.Fatal(err)
		}
		cancel()
		start := time.Now()
		for {
			if _, err := s.Next(); err != nil {
				break
			}
			if time.Since(start) > time.Second {
				t.Fatal("stream kept going after cancel")
			}
		}
	})
}

func TestBuiltinRepeatsAndSaysNoModel(t *testing.T) {
	s, err := llm.Builtin{}.Stream(context.Background(), speech.Request{Messages: []speech.Message{
		{Role: "system", Content: "You sell shoes."}, {Role: "assistant", Content: "Hi!"}, {Role: "user", Content: "what time is it"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	text, calls, err := collect(t, s)
	if err != nil || calls != nil {
		t.Fatalf("collect = %v, tool calls %+v", err, calls)
	}
	if !strings.Contains(text, "what time is it") || !strings.Contains(text, "No language model is configured") {
		t.Errorf("builtin said %q, want the caller's words and that no model is configured", text)
	}
}

// TestClientUsage: every request asks for the server's usage report
// (stream_options.include_usage), and the client hands it on as the stream's last
// chunk; a server that sends none gives none. The builtin responder reports zero tokens.
func TestClientUsage(t *testing.T) {
	req := speech.Request{Tools: []speech.Tool{endCallTool}, Messages: []speech.Message{
		{Role: "system", Content: "You sell shoes to anyone."}, {Role: "user", Content: "do you have red ones"}}}
	for _, noUsage := range []bool{false, true} {
		srv := llmtest.New(llmtest.Reply{Text: "We do, in every size.", EndCall: true, NoUsage: noUsage})
		s, err := newClient(t, srv).Stream(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		var usage []speech.Tokens
		for {
			c, err := s.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Usage != nil {
				if c.Text != "" || c.ToolCall != nil {
					t.Errorf("the usage chunk carries %q %+v", c.Text, c.ToolCall)
				}
				usage = append(usage, *c.Usage)
			}
		}
		s.Close()
		if reqs := srv.Requests(); len(reqs) != 1 || !reqs[0].StreamOptions.IncludeUsage {
			t.Errorf("requests %+v: want one asking for include_usage", reqs)
		}
		sent := srv.Usages()
		srv.Close()
		if noUsage {
			if len(usage) != 0 || len(sent) != 0 {
				t.Errorf("no usage sent, got %+v", usage)
			}
			continue
		}
		// The fake counts the messages' words (10) and the reply's words plus 3 per call (5+3).
		want := []speech.Tokens{{Prompt: 10, Completion: 8}}
		if len(sent) != 1 || sent[0].PromptTokens != 10 || sent[0].CompletionTokens != 8 || !slices.Equal(usage, want) {
			t.Errorf("usage %+v (server sent %+v), want %+v", usage, sent, want)
		}
	}

	s, err := llm.Builtin{}.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var got []speech.Tokens
	for {
		c, err := s.Next()
		if err != nil {
			break
		}
		if c.Usage != nil {
			got = append(got, *c.Usage)
		}
	}
	if !slices.Equal(got, []speech.Tokens{{}}) {
		t.Errorf("builtin usage %+v, want one report of zero tokens", got)
	}
}

// TestClientSendsPictures: a message with pictures goes out as content parts, its text
// then each picture as an image_url part holding the JPEG as a data URL; messages without
// pictures keep plain string content.
func TestClientSendsPictures(t *testing.T) {
	srv := llmtest.New(llmtest.Reply{Text: "It is green."})
	defer srv.Close()
	c := newClient(t, srv)
	jpeg1, jpeg2 := []byte{0xff, 0xd8, 0xff, 0x01}, []byte{0xff, 0xd8, 0xff, 0x02}
	req := speech.Request{Messages: []speech.Message{
		{Role: "system", Content: "Be kind."},
		{Role: "user", Content: "what colour is this", Pictures: []speech.Picture{
			{Source: speech.PictureCamera, JPEG: jpeg1}, {Source: speech.PictureScreen, JPEG: jpeg2}}},
	}}
	s, err := c.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if text, _, err := collect(t, s); err != nil || text != "It is green." {
		t.Fatalf("reply %q, %v", text, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || len(reqs[0].Messages) != 2 {
		t.Fatalf("requests = %+v, want one with two messages", reqs)
	}
	if sys := reqs[0].Messages[0]; sys != (llmtest.Message{Role: "system", Content: "Be kind."}) {
		t.Errorf("system message = %+v, want plain string content", sys)
	}
	u := reqs[0].Messages[1]
	want := []string{"data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(jpeg1),
		"data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(jpeg2)}
	if u.Role != "user" || u.Content != "what colour is this" || u.Parts != 3 || !slices.Equal(u.ImageURLs(), want) {
		t.Errorf("user message = %+v, images %v; want its text and then two image_url parts %v", u, u.ImageURLs(), want)
	}
}

// TestPicturesCountInTheEstimate: a request's estimated prompt counts each picture.
func TestPicturesCountInTheEstimate(t *testing.T) {
	plain := speech.Request{Messages: []speech.Message{{Role: "user", Content: "what colour is this"}}}
	with := speech.Request{Messages: []speech.Message{{Role: "user", Content: "what colour is this",
		Pictures: []speech.Picture{{JPEG: []byte{1}}, {JPEG: []byte{2}}}}}}
	if d := speech.EstimatePrompt(with) - speech.EstimatePrompt(plain); d != 2*speech.PictureTokens {
		t.Errorf("two pictures add %d tokens to the estimate, want %d", d, 2*speech.PictureTokens)
	}
}
