package sessions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/mediafleet/conversation"
	"github.com/bridgeline/bridgeline/mediafleet/llm"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	sdkwebhook "github.com/bridgeline/bridgeline/sdk/go/webhook"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/toolcall"
)

// ssrfHosts are tool hosts whose names resolve, as a customer's DNS record could make
// them, to internal addresses: the tool client of the package's stack sends them through
// the deployment's egress policy (no loopback), and ssrfDials counts the connections it
// let through to them, which must stay 0. Other hosts get the local stack's policy
// (loopback allowed), where the tests' receivers listen.
var (
	ssrfHosts = map[string]string{"metadata.ssrf.test": "169.254.169.254", "loopback.ssrf.test": "127.0.0.1"}
	ssrfDials atomic.Int32
)

// toolClient is the package stack's tool client (harness.Options.ToolClient).
func toolClient() *http.Client {
	local := toolcall.NewClient(egress.Policy{AllowLoopback: true})
	strictDialer := egress.Policy{}.Dialer(nil)
	control := strictDialer.Control
	strictDialer.Control = func(network, address string, c syscall.RawConn) error {
		err := control(network, address, c)
		if err == nil {
			ssrfDials.Add(1)
		}
		return err
	}
	strict := toolcall.NewClient(egress.Policy{})
	strict.Transport = &http.Transport{Proxy: nil, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if ip, ok := ssrfHosts[host]; ok {
			addr = net.JoinHostPort(ip, port) // what the name resolves to
		}
		return strictDialer.DialContext(ctx, network, addr)
	}}
	return &http.Client{CheckRedirect: local.CheckRedirect, Transport: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		if _, ok := ssrfHosts[r.URL.Hostname()]; ok {
			return strict.Transport.RoundTrip(r)
		}
		return local.Transport.RoundTrip(r)
	})}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// toolReceiver is the customer's tool server: it verifies each request with the Go SDK's
// webhook.Verify and the assistant's tool secret, and answers by path.
type toolReceiver struct {
	*httptest.Server
	secret atomic.Value // string
	mu     sync.Mutex
	got    []receivedTool
}

type receivedTool struct {
	path     string
	req      toolcall.Request
	verified error
}

func startToolReceiver(t *testing.T) *toolReceiver {
	r := &toolReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		secret, _ := r.secret.Load().(string)
		rt := receivedTool{path: req.URL.Path, verified: sdkwebhook.Verify(req.Header, body, time.Now(), secret)}
		_ = json.Unmarshal(body, &rt.req)
		r.mu.Lock()
		r.got = append(r.got, rt)
		r.mu.Unlock()
		if rt.verified != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		switch req.URL.Path {
		case "/order":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"result": {"status": "shipped", "day": "Friday"}}`)
		case "/slow":
			time.Sleep(2500 * time.Millisecond)
			fmt.Fprint(w, `{"status": "packed", "day": "Monday"}`)
		case "/broken":
			http.Error(w, "database down", http.StatusInternalServerError)
		}
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *toolReceiver) requests(path string) []receivedTool {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []receivedTool
	for _, g := range r.got {
		if g.path == path {
			out = append(out, g)
		}
	}
	return out
}

// qOrder is the caller's question in the tool calls; every word is in pocketsphinx's
// dictionary.
const qOrder = "Where is my order?"

// TestToolsEndToEnd is issue 19's tools on the whole local stack: real speech engines, the
// sim caller asking, the fake OpenAI-compatible model calling the assistant's tools, the
// control plane posting them to a real HTTP receiver that verifies each with the SDK's
// webhook.Verify. Then a slow tool (the filler, once), a failing one and one whose name
// resolves to an internal address (refused, no connection). The account's endpoint
// listens to call.answered and call.transcript: each call's answer and each final turn
// are delivered to it, signed with the endpoint's secret, as they happen.
func TestToolsEndToEnd(t *testing.T) {
	st := tenant(t)
	eng := realEngines(t)
	fake := llmtest.New(llmtest.Reply{Text: "Sorry?"})
	t.Cleanup(fake.Close)
	model, err := llm.New(llm.Config{BaseURL: fake.URL(), APIKey: "test-key", Model: "fake-model"})
	if err != nil {
		t.Fatal(err)
	}
	st.StartWorker(t, nil, worker.Options{NewVAD: eng.NewVAD, Recognizer: eng.Recognizer, Voices: eng.Voices.Voices(), Model: model})
	rcv := startToolReceiver(t)
	hooks := eventtest.NewReceiver(t)
	var ep struct {
		Secret string `json:"secret"`
	}
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/webhook_endpoints", map[string]any{"url": hooks.URL,
		"events": []string{"call.answered", "call.transcript"}}, &ep), http.StatusCreated, "create the endpoint")
	hooks.SetSecret(ep.Secret)

	tool := func(name, path string) map[string]any {
		return map[string]any{"name": name, "description": "Finds an order by its number.", "url": path,
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"order_id": map[string]any{"type": "string"}}}}
	}
	var a struct {
		assistantObj
		ToolSecret string `json:"tool_secret"`
	}
	const greeting = "Hello, how can I help you?"
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants", map[string]any{"name": "Orders", "system_prompt": "Answer the phone.",
		"greeting": greeting, "avatar_id": "ava_theo", "tools": []any{
			tool("lookup_order", rcv.URL+"/order"), tool("slow_lookup", rcv.URL+"/slow"), tool("broken_lookup", rcv.URL+"/broken"),
			tool("metadata_lookup", "http://metadata.ssrf.test/latest/meta-data"),
			tool("loopback_lookup", fmt.Sprintf("http://loopback.ssrf.test:%d/order", rcv.Listener.Addr().(*net.TCPAddr).AddrPort().Port())),
		}}, &a), http.StatusCreated, "create the assistant")
	if !strings.HasPrefix(a.ToolSecret, "whsec_") {
		t.Fatalf("the create answered no tool secret")
	}
	rcv.secret.Store(a.ToolSecret)
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants/"+a.ID+"/publish", nil, nil), http.StatusCreated, "publish")
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/lines/"+st.Lines[st.Handles[0]].ID+"/assign",
		map[string]any{"assistant_id": a.ID}, nil), http.StatusOK, "assign")

	// ask places a call, asks qOrder with the model calling toolName, waits for the reply
	// built from what the tool brought, hangs up and returns the record and the model's
	// requests.
	ask := func(t *testing.T, toolName string) (recordObj, []llmtest.Request) {
		t.Helper()
		var askedAgain atomic.Value // time.Time: the model got the tool's answer
		fake.SetReplies(func(req llmtest.Request) llmtest.Reply {
			last := req.Messages[len(req.Messages)-1]
			if last.Role != "tool" {
				return llmtest.Reply{Text: "Let me look.", ToolCalls: []llmtest.ToolCall{{Name: toolName, Arguments: `{"order_id":"6735"}`}}}
			}
			askedAgain.Store(time.Now())
			var r struct{ Status, Day string }
			if json.Unmarshal([]byte(last.Content), &r) != nil || r.Status == "" {
				return llmtest.Reply{Text: "Sorry, I cannot look that up right now."}
			}
			return llmtest.Reply{Text: "Your order is " + r.Status + ", it arrives on " + r.Day + "."}
		})
		before := len(fake.Requests())
		c := placeConvCall(t, st)
		c.say(qOrder)
		harness.WaitFor(t, 30*time.Second, "the model asked again with the tool's answer", func() bool { return len(fake.Requests()) >= before+2 })
		// The reply built from the answer sounds after the model got it (what sounded
		// before, "Let me look." and the filler, came from the first reply).
		reply := c.heardAfter(askedAgain.Load().(time.Time), "the reply at the caller")
		harness.WaitFor(t, 30*time.Second, "the last reply to end", func() bool {
			ss := c.bot.Sounds()
			last := ss[len(ss)-1]
			return !last.Ongoing && time.Since(last.End) > 1500*time.Millisecond && last.Start.After(reply.Start.Add(-time.Millisecond))
		})
		r := c.hangUp()
		return r, fake.Requests()[before:]
	}
	toolTurn := func(t *testing.T, r recordObj) persona.Turn {
		t.Helper()
		var tools []persona.Turn
		for _, tn := range r.Turns {
			if tn.Speaker == persona.SpeakerTool {
				tools = append(tools, tn)
			}
		}
		if len(tools) != 1 || tools[0].Tool == nil {
			t.Fatalf("transcript:%s\nwant one tool call", transcriptString(r.Turns))
		}
		return tools[0]
	}
	lastSaid := func(r recordObj) string {
		for i := len(r.Turns) - 1; i >= 0; i-- {
			if r.Turns[i].Speaker == persona.SpeakerAssistant {
				return r.Turns[i].Text
			}
		}
		return ""
	}

	t.Run("the customer's server answers", func(t *testing.T) {
		r, reqs := ask(t, "lookup_order")
		got := rcv.requests("/order")
		if len(got) != 1 || got[0].verified != nil {
			t.Fatalf("the receiver got %d requests (verified: %v), want one that webhook.Verify accepts", len(got), got)
		}
		req := got[0].req
		if req.Tool != "lookup_order" || string(req.Arguments) != `{"order_id":"6735"}` || req.CallID != r.ID || req.AssistantID != a.ID ||
			req.VersionID != str(r.VersionID) || req.SessionID != str(r.SessionID) || req.LineID != st.Lines[st.Handles[0]].ID {
			t.Errorf("the tool request %+v does not name the call", req)
		}
		if !reqs[0].HasTool("lookup_order") || !reqs[0].HasTool(persona.EndCallTool) {
			t.Errorf("tools offered %+v", reqs[0].Tools)
		}
		msgs := reqs[1].Messages
		if m := msgs[len(msgs)-1]; m.Role != "tool" || m.Content != `{"status":"shipped","day":"Friday"}` {
			t.Errorf("the model got %+v, want the tool's result", m)
		}
		if said := lastSaid(r); said != "Your order is shipped, it arrives on Friday." {
			t.Errorf("transcript:%s\nwant the answer built from the result", transcriptString(r.Turns))
		}
		tt := toolTurn(t, r)
		if tt.Tool.Name != "lookup_order" || string(tt.Tool.Result) != `{"status":"shipped","day":"Friday"}` || tt.Tool.Error != nil {
			t.Errorf("tool turn %+v", tt.Tool)
		}
		// One call of the tool: tool_ms's p50 and p95 are its duration.
		if m := r.Metrics; m.ToolCalls == nil || *m.ToolCalls != 1 || m.ToolErrors == nil || *m.ToolErrors != 0 || m.ToolMS == nil ||
			m.ToolMS.P50 != tt.Tool.DurationMS || m.ToolMS.P95 != tt.Tool.DurationMS {
			t.Errorf("metrics %+v (tool_ms %+v), want one tool call of %d ms without error", m, m.ToolMS, tt.Tool.DurationMS)
		} else {
			t.Logf("tool call: %d ms from the model's call to the answer (worker, control plane, receiver)", m.ToolMS.P50)
		}
		// call.answered, once, delivered to the endpoint: the assistant handled the call.
		var answered callevent.CallAnswered
		_ = json.Unmarshal(hooks.WaitFor(t, callevent.TypeCallAnswered, 10*time.Second, eventtest.ForCall(r.ID)).Event.Data, &answered)
		if answered.HandledBy != call.HandledByAssistant || answered.SessionID != str(r.SessionID) || answered.AnsweredAt.IsZero() {
			t.Errorf("call.answered %+v, want the assistant's answer of the session", answered)
		}
		eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallAnswered, r.ID)
		// call.transcript: every spoken turn of the record delivered, numbered 1, 2, ...
		var want []string
		for _, tn := range r.Turns {
			if tn.Speaker != persona.SpeakerTool {
				want = append(want, fmt.Sprintf("%s: %s [%d-%d]", tn.Speaker, tn.Text, tn.StartMS, tn.EndMS))
			}
		}
		var texts []string
		seqs := map[int]bool{}
		harness.WaitFor(t, 20*time.Second, "every turn delivered as call.transcript", func() bool {
			texts, seqs = nil, map[int]bool{}
			for _, g := range hooks.Events(callevent.TypeCallTranscript) {
				var d callevent.CallTranscript
				if json.Unmarshal(g.Event.Data, &d) == nil && d.CallID == r.ID && !seqs[d.Sequence] {
					texts = append(texts, fmt.Sprintf("%s: %s [%d-%d]", d.Speaker, d.Text, d.StartMS, d.EndMS))
					seqs[d.Sequence] = true
				}
			}
			return len(texts) >= len(want)
		})
		slices.Sort(texts)
		slices.Sort(want)
		if !slices.Equal(texts, want) {
			t.Errorf("call.transcript deliveries %q, want one per spoken turn %q", texts, want)
		}
		for i := 1; i <= len(want); i++ {
			if !seqs[i] {
				t.Errorf("call.transcript sequences %v, want 1 to %d", seqs, len(want))
				break
			}
		}
		if rej := hooks.Rejected(); len(rej) != 0 {
			t.Errorf("the endpoint rejected %d deliveries: %v", len(rej), rej)
		}
	})

	t.Run("a slow tool: the filler once", func(t *testing.T) {
		r, _ := ask(t, "slow_lookup")
		var said []string
		for _, tn := range r.Turns {
			if tn.Speaker == persona.SpeakerAssistant {
				said = append(said, tn.Text)
			}
		}
		if n := strings.Count(strings.Join(said, " | "), conversation.Filler); n != 1 {
			t.Errorf("transcript:%s\nwant %q exactly once", transcriptString(r.Turns), conversation.Filler)
		}
		if said := lastSaid(r); said != "Your order is packed, it arrives on Monday." {
			t.Errorf("last said %q, want the answer from the slow tool", said)
		}
		tt := toolTurn(t, r)
		if tt.Tool.DurationMS < 2500 || tt.Tool.Error != nil {
			t.Errorf("tool turn %+v, want the 2.5 s call's result", tt.Tool)
		}
		if m := r.Metrics; m.ToolMS == nil || m.ToolMS.P50 != tt.Tool.DurationMS || m.ToolMS.P95 != tt.Tool.DurationMS || *m.ToolErrors != 0 {
			t.Errorf("metrics: tool_ms %+v, tool_errors %v; want the slow call's %d ms, no error", m.ToolMS, m.ToolErrors, tt.Tool.DurationMS)
		}
	})

	t.Run("a failing tool", func(t *testing.T) {
		r, reqs := ask(t, "broken_lookup")
		tt := toolTurn(t, r)
		if tt.Tool.Error == nil || tt.Tool.Error.Code != persona.ToolErrStatus {
			t.Errorf("tool turn %+v, want http_status", tt.Tool)
		}
		msgs := reqs[1].Messages
		if m := msgs[len(msgs)-1]; m.Role != "tool" || !strings.Contains(m.Content, `"code":"http_status"`) {
			t.Errorf("the model got %+v, want the error", m)
		}
		if said := lastSaid(r); said != "Sorry, I cannot look that up right now." {
			t.Errorf("last said %q, want the model's words about the error", said)
		}
		if m := r.Metrics; m.ToolCalls == nil || *m.ToolCalls != 1 || m.ToolErrors == nil || *m.ToolErrors != 1 || m.ToolMS == nil ||
			m.ToolMS.P95 != tt.Tool.DurationMS {
			t.Errorf("metrics %+v, want one tool call, an error, its duration in tool_ms", m)
		}
	})

	for _, name := range []string{"metadata_lookup", "loopback_lookup"} {
		t.Run("an internal address: "+name, func(t *testing.T) {
			before := len(rcv.requests("/order"))
			r, _ := ask(t, name)
			tt := toolTurn(t, r)
			if tt.Tool.Error == nil || tt.Tool.Error.Code != persona.ToolErrBlocked {
				t.Errorf("tool turn %+v, want blocked_destination", tt.Tool)
			}
			if said := lastSaid(r); said != "Sorry, I cannot look that up right now." {
				t.Errorf("last said %q, want the model's words about the error", said)
			}
			if m := r.Metrics; m.ToolErrors == nil || *m.ToolErrors != 1 {
				t.Errorf("metrics %+v, want the refusal counted as a tool error", m)
			}
			if n := ssrfDials.Load(); n != 0 {
				t.Errorf("%d connections let through to the internal addresses, want 0", n)
			}
			if n := len(rcv.requests("/order")); n != before {
				t.Errorf("the receiver behind 127.0.0.1 got %d requests by the internal name", n-before)
			}
		})
	}
}

// TestCallLimitsEndToEnd: a version's idle timeout and maximum duration on the whole
// stack. A silent caller is asked once whether they are there and the call ends
// silence_timeout; a call of a version with max_duration_seconds ends at it, politely.
func TestCallLimitsEndToEnd(t *testing.T) {
	st := tenant(t)
	eng := realEngines(t)
	st.StartWorker(t, nil, worker.Options{NewVAD: eng.NewVAD, Recognizer: eng.Recognizer, Voices: eng.Voices.Voices(), Model: llm.Builtin{}})
	assistant := func(t *testing.T, settings map[string]any) {
		body := map[string]any{"name": "Limits", "system_prompt": "Answer the phone.", "greeting": "Hello.", "avatar_id": "ava_theo"}
		for k, v := range settings {
			body[k] = v
		}
		var a assistantObj
		harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants", body, &a), http.StatusCreated, "create")
		harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants/"+a.ID+"/publish", nil, nil), http.StatusCreated, "publish")
		harness.Must(t, st.Do(t, http.MethodPost, "/v1/lines/"+st.Lines[st.Handles[0]].ID+"/assign",
			map[string]any{"assistant_id": a.ID}, nil), http.StatusOK, "assign")
	}
	t.Run("idle", func(t *testing.T) {
		assistant(t, map[string]any{"idle_timeout_seconds": 10})
		c := placeConvCall(t, st) // the greeting has played
		quietFrom := time.Now()
		waitEnded(t, st, c.callID)
		r := record(t, st, c.callID)
		if str(r.EndReason) != call.ReasonSilenceTimeout || str(r.EndedBy) != call.EndedByAssistant {
			t.Fatalf("ended %q by %q, want silence_timeout by the assistant", str(r.EndReason), str(r.EndedBy))
		}
		checkTurns(t, r.Turns, "assistant", "assistant")
		if len(r.Turns) == 2 && r.Turns[1].Text != conversation.StillThere {
			t.Errorf("transcript:%s\nwant the question after the greeting", transcriptString(r.Turns))
		}
		if len(r.Turns) == 2 {
			asked := time.Duration(r.Turns[1].StartMS-r.Turns[0].EndMS) * time.Millisecond
			ended := time.Duration(*r.DurationMS-r.Turns[1].EndMS) * time.Millisecond
			t.Logf("asked %v after the greeting, ended %v after the question (%v after the caller went quiet)", asked, ended, time.Since(quietFrom).Round(time.Second))
			// The 10 s count from when the question's last frame leaves the queue, up
			// to 20 ms before the turn's end in the record (seen: 9.995 s), and the
			// call's end is on the control plane's clock: 100 ms below 10 s is allowed;
			// the simulated clock's test (conversation.TestIdleAsksThenHangsUp) holds
			// the exact timing. Above it, a loaded CI machine once read 14.9 s from
			// the record while the test's own clock saw the call end on time (21 s
			// after the caller went quiet, as in every passing run): no hang-up comes
			// early, and none later than the question's end plus 16 s.
			if asked < 10*time.Second || asked > 11*time.Second || ended < 9900*time.Millisecond || ended > 16*time.Second {
				t.Errorf("asked %v after the greeting, ended %v after the question; want 10 s each", asked, ended)
			}
			if ended > 12*time.Second {
				t.Logf("late end in the record: answered %v, ended %v, duration %d ms; greeting %d-%d ms, question %d-%d ms",
					str(r.AnsweredAt), str(r.EndedAt), *r.DurationMS, r.Turns[0].StartMS, r.Turns[0].EndMS, r.Turns[1].StartMS, r.Turns[1].EndMS)
			}
		}
	})
	t.Run("max duration", func(t *testing.T) {
		assistant(t, map[string]any{"max_duration_seconds": 12})
		c := placeConvCall(t, st)
		waitEnded(t, st, c.callID)
		r := record(t, st, c.callID)
		if str(r.EndReason) != call.ReasonMaxDuration || str(r.EndedBy) != call.EndedByAssistant {
			t.Fatalf("ended %q by %q, want max_duration by the assistant", str(r.EndReason), str(r.EndedBy))
		}
		last := r.Turns[len(r.Turns)-1]
		t.Logf("the time-up words started %d ms after the answer (synthesis included); the call ended at %d ms", last.StartMS, *r.DurationMS)
		// At 12 s the words are synthesised (flite: a long sentence, on a loaded machine
		// up to a second) and played; the call ends once they have.
		if last.Text != conversation.TimeUp || last.StartMS < 12000 || last.StartMS > 13500 || *r.DurationMS < last.EndMS {
			t.Errorf("transcript:%s\nwant the time-up words 12 s after the answer, in full before the end", transcriptString(r.Turns))
		}
	})
}
