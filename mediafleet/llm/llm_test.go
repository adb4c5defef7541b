package llm_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/conversation"
	"github.com/bridgeline/bridgeline/mediafleet/llm"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
)

// collect reads a stream to its end.
func collect(t *testing.T, s conversation.Stream) (text string, endCall bool, err error) {
	t.Helper()
	defer s.Close()
	var b strings.Builder
	for {
		c, err := s.Next()
		if errors.Is(err, io.EOF) {
			return b.String(), endCall, nil
		}
		if err != nil {
			return b.String(), endCall, err
		}
		b.WriteString(c.Text)
		endCall = endCall || c.EndCall
	}
}

func newClient(t *testing.T, srv *llmtest.Server) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "sk-test", Model: "default-model"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClientStreams(t *testing.T) {
	tests := []struct {
		name        string
		reply       llmtest.Reply
		req         conversation.Request
		wantText    string
		wantEndCall bool
		wantModel   string
	}{
		{
			name:     "text with the default model",
			reply:    llmtest.Reply{Text: "Hello there. How can I help?"},
			req:      conversation.Request{Messages: []conversation.Message{{Role: "system", Content: "Be kind."}, {Role: "user", Content: "hi"}}},
			wantText: "Hello there. How can I help?", wantModel: "default-model",
		},
		{
			name:     "the version's model overrides",
			reply:    llmtest.Reply{Text: "Sure."},
			req:      conversation.Request{Model: "small-model", Messages: []conversation.Message{{Role: "user", Content: "hi"}}},
			wantText: "Sure.", wantModel: "small-model",
		},
		{
			name:     "end_call tool call",
			reply:    llmtest.Reply{Text: "Goodbye!", EndCall: true},
			req:      conversation.Request{EndCallTool: true, Messages: []conversation.Message{{Role: "user", Content: "bye"}}},
			wantText: "Goodbye!", wantEndCall: true, wantModel: "default-model",
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
			text, endCall, err := collect(t, s)
			if err != nil {
				t.Fatal(err)
			}
			if text != tt.wantText || endCall != tt.wantEndCall {
				t.Errorf("got %q end_call=%v, want %q end_call=%v", text, endCall, tt.wantText, tt.wantEndCall)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("server got %d requests, want 1", len(reqs))
			}
			got := reqs[0]
			if got.Model != tt.wantModel || !got.Stream || got.Auth != "Bearer sk-test" {
				t.Errorf("request model %q stream %v auth %q, want %q true Bearer sk-test", got.Model, got.Stream, got.Auth, tt.wantModel)
			}
			if got.HasTool("end_call") != tt.req.EndCallTool {
				t.Errorf("end_call offered = %v, want %v", got.HasTool("end_call"), tt.req.EndCallTool)
			}
			if len(got.Messages) != len(tt.req.Messages) {
				t.Fatalf("server got %d messages, want %d", len(got.Messages), len(tt.req.Messages))
			}
			for i, m := range tt.req.Messages {
				if got.Messages[i].Role != m.Role || got.Messages[i].Content != m.Content {
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
	s, err := newClient(t, srv).Stream(context.Background(), conversation.Request{Messages: []conversation.Message{{Role: "user", Content: "count"}}})
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
		_, err := newClient(t, srv).Stream(context.Background(), conversation.Request{Messages: []conversation.Message{{Role: "user", Content: "hi"}}})
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
		_, err := newClient(t, srv).Stream(ctx, conversation.Request{Messages: []conversation.Message{{Role: "user", Content: "hi"}}})
		if err == nil || !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
			t.Errorf("Stream = %v after %v, want the deadline after 200 ms", err, time.Since(start))
		}
	})
	t.Run("cancel mid-stream stops it", func(t *testing.T) {
		srv := llmtest.New(llmtest.Reply{Text: strings.Repeat("word ", 100)})
		defer srv.Close()
		srv.SetDelays(0, 50*time.Millisecond)
		ctx, cancel := context.WithCancel(context.Background())
		s, err := newClient(t, srv).Stream(ctx, conversation.Request{Messages: []conversation.Message{{Role: "user", Content: "hi"}}})
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
	s, err := llm.Builtin{}.Stream(context.Background(), conversation.Request{Messages: []conversation.Message{
		{Role: "system", Content: "You sell shoes."}, {Role: "assistant", Content: "Hi!"}, {Role: "user", Content: "what time is it"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	text, endCall, err := collect(t, s)
	if err != nil || endCall {
		t.Fatalf("collect = %v, end_call %v", err, endCall)
	}
	if !strings.Contains(text, "what time is it") || !strings.Contains(text, "No language model is configured") {
		t.Errorf("builtin said %q, want the caller's words and that no model is configured", text)
	}
}
