package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/conversation"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// toolLine is the scripted line of a call that can run tools (speech.ToolRunner).
type toolLine struct {
	*line
	run func(context.Context, speech.ToolCall) speech.ToolResult
}

func (l toolLine) RunTool(ctx context.Context, c speech.ToolCall) speech.ToolResult {
	return l.run(ctx, c)
}

// withTools is the test version with the customer's lookup_order tool.
func withTools(v persona.Version) persona.Version {
	v.Tools = []persona.Tool{{Name: "lookup_order", Description: "Finds an order.", TimeoutMS: 5000,
		Parameters: json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string"}}}`)}}
	return v
}

// toolRunner answers each call after delay with result, or err; it records the calls.
type toolRunner struct {
	mu     sync.Mutex
	delay  time.Duration
	result string
	err    *speech.ToolError
	calls  []speech.ToolCall
	ended  []error // why each call's context ended, nil when it was not cancelled
}

func (r *toolRunner) run(ctx context.Context, c speech.ToolCall) speech.ToolResult {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	delay, result, err := r.delay, r.result, r.err
	r.mu.Unlock()
	select {
	case <-time.After(delay):
	case <-ctx.Done():
		r.mu.Lock()
		r.ended = append(r.ended, ctx.Err())
		r.mu.Unlock()
		return speech.ToolResult{Err: &speech.ToolError{Code: persona.ToolErrInterrupted, Message: "the caller spoke"}}
	}
	if err != nil {
		return speech.ToolResult{Err: err}
	}
	return speech.ToolResult{Result: json.RawMessage(result)}
}

func (r *toolRunner) made() []speech.ToolCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// orderReplies scripts the model: it calls lookup_order for the caller's question, then,
// given the tool's message, answers from what it holds.
func orderReplies(req llmtest.Request) llmtest.Reply {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == "tool" {
		if strings.Contains(last.Content, `"error"`) {
			return llmtest.Reply{Text: "I'm sorry, I can't look that up right now."}
		}
		var r struct{ Status, ETA string }
		_ = json.Unmarshal([]byte(last.Content), &r)
		return llmtest.Reply{Text: "Your order is " + r.Status + " and arrives " + r.ETA + "."}
	}
	return llmtest.Reply{Text: "Let me check.", ToolCalls: []llmtest.ToolCall{{Name: "lookup_order", Arguments: `{"order_id":"6735"}`}}}
}

func startOrderCall(t *testing.T, r *toolRunner) *harness {
	h := startCall(t, llmtest.Reply{}, nil, &recognizer{texts: []string{"where is my order"}}, withTools(version), r.run)
	h.srv.SetReplies(orderReplies)
	return h
}

// ask has the caller ask the question and waits until the assistant answered it.
func (h *harness) ask(t *testing.T, turns int) {
	t.Helper()
	h.feed(t, speechLevel, 600*time.Millisecond)
	h.feed(t, 0, 500*time.Millisecond)
	h.eventually(t, "the answer", func() bool { return len(h.turns()) >= turns && h.rec.turns() >= 1 && !h.line.Speaking() })
}

// TestToolCall: the model calls a tool; the line runs it; the model is asked again with
// the result and the caller hears the answer built from it. The transcript has the tool
// call between the two assistant turns, and the history the model sees next holds the
// call and its result.
func TestToolCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &toolRunner{delay: 200 * time.Millisecond, result: `{"status":"shipped","eta":"Friday"}`}
		h := startOrderCall(t, r)
		h.ask(t, 4)
		if calls := r.made(); len(calls) != 1 || calls[0].Name != "lookup_order" || calls[0].Arguments != `{"order_id":"6735"}` {
			t.Fatalf("tool calls %+v, want lookup_order with the order id", calls)
		}
		reqs := h.srv.Requests()
		if len(reqs) != 2 || !reqs[0].HasTool("lookup_order") || !reqs[0].HasTool("end_call") {
			t.Fatalf("%d model requests (tools offered %+v), want 2 offering lookup_order and end_call", len(reqs), reqs[0].Tools)
		}
		second := reqs[1].Messages
		want := []llmtest.Message{
			{Role: "assistant", Content: "Let me check.", ToolCalls: `lookup_order({"order_id":"6735"})`},
			{Role: "tool", Content: `{"status":"shipped","eta":"Friday"}`, ToolCallID: "call_0"},
		}
		if len(second) < 2 || !slices.Equal(second[len(second)-2:], want) {
			t.Errorf("second request ends %+v, want the call and its result %+v", second, want)
		}
		turns := h.turns()
		speakers := []string{}
		for _, tn := range turns {
			speakers = append(speakers, tn.Speaker)
		}
		if !slices.Equal(speakers, []string{"caller", "assistant", "tool", "assistant"}) {
			t.Fatalf("transcript %+v, want caller, assistant, tool, assistant", turns)
		}
		tool := turns[2]
		if tool.Tool == nil || tool.Tool.Name != "lookup_order" || string(tool.Tool.Arguments) != `{"order_id":"6735"}` ||
			string(tool.Tool.Result) != `{"status":"shipped","eta":"Friday"}` || tool.Tool.Error != nil || tool.Tool.DurationMS != 200 ||
			tool.EndMS-tool.StartMS != 200 {
			t.Errorf("tool turn %+v (%+v), want the call, its result and its 200 ms", tool, tool.Tool)
		}
		if turns[1].Text != "Let me check." || turns[3].Text != "Your order is shipped and arrives Friday." {
			t.Errorf("assistant said %q then %q", turns[1].Text, turns[3].Text)
		}
		if slices.Contains(h.syn.said(), conversation.Filler) {
			t.Errorf("a 200 ms tool got the filler: %q", h.syn.said())
		}
		m := h.metrics()
		if m.ToolCalls == nil || *m.ToolCalls != 1 || m.ToolErrors == nil || *m.ToolErrors != 0 || m.ToolMS == nil || m.ToolMS.P50 != 200 {
			t.Errorf("metrics %+v, want one tool call of 200 ms without error", m)
		}
		// The next turn's request carries the call and its result in the history.
		h.rec.mu.Lock()
		h.rec.texts = append(h.rec.texts, "thanks")
		h.rec.mu.Unlock()
		h.srv.SetReply(llmtest.Reply{Text: "You're welcome."})
		h.ask(t, 6)
		third := h.srv.Requests()[2].Messages
		if n := len(third); n < 5 || third[n-4].ToolCalls == "" || third[n-3].Role != "tool" || third[n-2].Content != "Your order is shipped and arrives Friday." {
			t.Errorf("third request %+v, want the tool call, its result and the answer before the new turn", third)
		}
	})
}

// TestSlowToolSaysFillerOnce: a tool that takes 3 s gets "One moment." once, after
// what the reply said before it has played, and the answer follows.
func TestSlowToolSaysFillerOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &toolRunner{delay: 3 * time.Second, result: `{"status":"packed","eta":"Monday"}`}
		h := startOrderCall(t, r)
		h.ask(t, 4)
		said := h.syn.said()
		if n := slices.Index(said, conversation.Filler); n < 0 || slices.Index(said[n+1:], conversation.Filler) >= 0 {
			t.Fatalf("said %q, want the filler exactly once", said)
		}
		if !slices.Equal(said, []string{"Let me check.", conversation.Filler, "Your order is packed and arrives Monday."}) {
			t.Errorf("said %q, want the check, the filler, then the answer", said)
		}
		turns := h.turns()
		if len(turns) != 4 || turns[1].Text != "Let me check. One moment." || turns[2].Speaker != "tool" || turns[2].Tool.DurationMS != 3000 {
			t.Errorf("transcript %+v, want the filler in the turn before the tool call of 3 s", turns)
		}
		// It came about a second into the call, after "Let me check." (200 ms) played.
		fillerAt := turns[1].EndMS - 200 // the filler is two words, 200 ms: its start
		if d := fillerAt - turns[2].StartMS; d < 1000 || d > 1100 {
			t.Errorf("filler %d ms after the tool call, want about 1 s", d)
		}
	})
}

// TestFailingTool: a tool's error is told to the model, which says something; the
// transcript records the error and the metrics count it. The call goes on.
func TestFailingTool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &toolRunner{delay: 100 * time.Millisecond, err: &speech.ToolError{Code: persona.ToolErrStatus, Message: "the tool's server answered HTTP 500"}}
		h := startOrderCall(t, r)
		h.ask(t, 4)
		reqs := h.srv.Requests()
		last := reqs[len(reqs)-1].Messages
		if got := last[len(last)-1]; got.Role != "tool" || got.Content != `{"error":{"code":"http_status","message":"the tool's server answered HTTP 500"}}` {
			t.Errorf("the model was told %+v, want the error", got)
		}
		turns := h.turns()
		if len(turns) != 4 || turns[2].Tool == nil || turns[2].Tool.Error == nil || turns[2].Tool.Error.Code != "http_status" || turns[2].Tool.Result != nil {
			t.Fatalf("transcript %+v, want the tool turn with its error", turns)
		}
		if turns[3].Text != "I'm sorry, I can't look that up right now." {
			t.Errorf("assistant said %q after the error", turns[3].Text)
		}
		m := h.metrics()
		if m.ToolCalls == nil || *m.ToolCalls != 1 || m.ToolErrors == nil || *m.ToolErrors != 1 {
			t.Errorf("metrics %+v, want one tool call, one error", m)
		}
	})
}

// TestToolsNeedALineThatRunsThem: on a line that cannot run tools the model is offered
// end_call only.
func TestToolsNeedALineThatRunsThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startCall(t, llmtest.Reply{Text: "Hello."}, nil, &recognizer{texts: []string{"hi"}}, withTools(version), nil)
		h.ask(t, 2)
		if req := h.srv.Requests()[0]; req.HasTool("lookup_order") || !req.HasTool("end_call") {
			t.Errorf("tools offered %+v, want end_call only", req.Tools)
		}
	})
}

// TestBargeInCancelsTheToolCall: the caller talking over the wait cancels the tool call;
// the model sees it interrupted and answers the caller's new turn.
func TestBargeInCancelsTheToolCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &toolRunner{delay: 10 * time.Second, result: `{}`}
		h := startCall(t, llmtest.Reply{}, nil, &recognizer{texts: []string{"where is my order", "never mind"}}, withTools(version), r.run)
		h.srv.SetReplies(func(req llmtest.Request) llmtest.Reply {
			if req.Messages[len(req.Messages)-1].Content == "never mind" {
				return llmtest.Reply{Text: "No problem."}
			}
			return orderReplies(req)
		})
		h.feed(t, speechLevel, 600*time.Millisecond)
		h.feed(t, 0, 2*time.Second) // the tool runs
		if len(r.made()) != 1 {
			t.Fatal("no tool call")
		}
		h.feed(t, speechLevel, 600*time.Millisecond)
		h.feed(t, 0, 500*time.Millisecond)
		h.eventually(t, "the answer to the new turn", func() bool {
			ts := h.turns()
			return len(ts) > 0 && ts[len(ts)-1].Text == "No problem."
		})
		r.mu.Lock()
		ended := slices.Clone(r.ended)
		r.mu.Unlock()
		if len(ended) != 1 || !errors.Is(ended[0], context.Canceled) {
			t.Errorf("the tool call's context ended with %v, want cancelled", ended)
		}
		reqs := h.srv.Requests()
		msgs := reqs[len(reqs)-1].Messages
		var told string
		for _, m := range msgs {
			if m.Role == "tool" {
				told = m.Content
			}
		}
		if !strings.Contains(told, persona.ToolErrInterrupted) {
			t.Errorf("the model was told %q of the interrupted call, want interrupted", told)
		}
	})
}

// TestIdleAsksThenHangsUp: after the version's idle timeout of silence the assistant asks
// whether the caller is there, once; 10 s of silence after the question ends the call
// (silence_timeout).
func TestIdleAsksThenHangsUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := version
		v.IdleTimeoutSeconds = 12
		h := startCall(t, llmtest.Reply{Text: "Sure."}, nil, &recognizer{}, v, nil)
		start := time.Now()
		h.eventually(t, "the question", func() bool { return slices.Contains(h.syn.said(), conversation.StillThere) })
		if d := time.Since(start); d < 12*time.Second || d > 12*time.Second+100*time.Millisecond {
			t.Errorf("asked after %v of silence, want 12 s", d)
		}
		h.eventually(t, "the hang-up", func() bool { return closed(h.stopped) })
		var hu *conversation.HangUp
		if !errors.As(h.err, &hu) || hu.Reason != persona.EndSilenceTimeout {
			t.Fatalf("Run = %v, want a silence_timeout hang-up", h.err)
		}
		// The question is four words, 400 ms (its last frame leaves the queue 20 ms
		// before it ends); then 10 s.
		if d := time.Since(start); d < 22*time.Second+360*time.Millisecond || d > 22*time.Second+600*time.Millisecond {
			t.Errorf("hung up %v into the call, want 10 s after the question ended", d)
		}
		if got := h.syn.said(); !slices.Equal(got, []string{conversation.StillThere}) {
			t.Errorf("said %q, want the question once", got)
		}
	})
}

// TestIdleQuestionAnswered: a caller who speaks after the question keeps the call; the
// count starts again from their turn.
func TestIdleQuestionAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := version
		v.IdleTimeoutSeconds = 10
		h := startCall(t, llmtest.Reply{Text: "Great."}, nil, &recognizer{texts: []string{"yes I am"}}, v, nil)
		h.eventually(t, "the question", func() bool { return slices.Contains(h.syn.said(), conversation.StillThere) })
		h.feed(t, 0, 3*time.Second)
		h.ask(t, 3)
		h.feed(t, 0, 9*time.Second)
		if closed(h.stopped) {
			t.Fatalf("the call ended (%v) after the caller answered", h.err)
		}
		if n := strings.Count(strings.Join(h.syn.said(), "|"), conversation.StillThere); n != 1 {
			t.Errorf("asked %d times within 9 s of the answer, want once so far", n)
		}
	})
}

// TestMaxDuration: at the version's max_duration_seconds the reply under way stops, the
// assistant says the time is up, the caller talking over it does not stop it, and the
// call ends (max_duration) once it has played.
func TestMaxDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := version
		v.MaxDurationSeconds = 3
		h := startCall(t, llmtest.Reply{Text: strings.Repeat("and on ", 30) + "."}, nil, &recognizer{texts: []string{"tell me a story", "wait"}}, v, nil)
		start := time.Now()
		h.feed(t, speechLevel, 600*time.Millisecond)
		h.feed(t, 0, 2*time.Second) // the long reply plays
		h.eventually(t, "the time-up words", func() bool { return slices.Contains(h.syn.said(), conversation.TimeUp) })
		if d := time.Since(start); d < 3*time.Second || d > 3*time.Second+50*time.Millisecond {
			t.Errorf("time up said %v into the call, want at 3 s", d)
		}
		h.feed(t, speechLevel, 600*time.Millisecond) // talked over: no barge-in now
		h.eventually(t, "the hang-up", func() bool { return closed(h.stopped) })
		var hu *conversation.HangUp
		if !errors.As(h.err, &hu) || hu.Reason != persona.EndMaxDuration {
			t.Fatalf("Run = %v, want a max_duration hang-up", h.err)
		}
		turns := h.turns()
		last := turns[len(turns)-1]
		if last.Speaker != "assistant" || last.Text != conversation.TimeUp || last.Interrupted {
			t.Errorf("last turn %+v, want the time-up words in full", last)
		}
		if !turns[1].Interrupted && turns[1].Text == strings.TrimSpace(strings.Repeat("and on ", 30)+".") {
			t.Errorf("the long reply %+v played in full, want it stopped at the limit", turns[1])
		}
	})
}
