package toolcall_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/delivery"
	sdkwebhook "github.com/bridgeline/bridgeline/sdk/go/webhook"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/egress/egresstest"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/metadata"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
	"github.com/bridgeline/bridgeline/shared/toolcall"
)

// fixture is a call on SQLite whose version has one tool at url, the service that runs
// its tool calls, and the assistant's tool secret.
type fixture struct {
	svc    *toolcall.Service
	callID string
	secret string
	store  *sqlite.Store
}

func newFixture(t *testing.T, url string, timeoutMS int, client *http.Client) fixture {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "tools.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	acct, _, err := (&account.Service{Store: st, Now: time.Now}).Create(ctx, "Acme", false)
	if err != nil {
		t.Fatal(err)
	}
	// The test receivers listen on 127.0.0.1, as on the local stack.
	assistants := &assistant.Service{Store: st, Destinations: egress.Policy{AllowLoopback: true}, Now: time.Now}
	name, prompt, greeting, avatar := "Ada", "Help.", "Hello.", "ava_iris"
	tools := []assistant.Tool{{Name: "lookup_order", Description: "Finds an order.", URL: url, TimeoutMS: timeoutMS,
		Parameters: json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string"}}}`)}}
	a, err := assistants.Create(ctx, acct.ID, assistant.Fields{Name: &name, SystemPrompt: &prompt, Greeting: &greeting,
		AvatarID: &avatar, Calls: &assistant.CallFields{Tools: &tools}})
	if err != nil {
		t.Fatal(err)
	}
	secret := a.ToolSecret.Secret
	if a, err = assistants.Publish(ctx, acct.ID, a.ID); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	ses := session.Session{ID: ident.New("ses"), AccountID: acct.ID, LineID: "line_1", Mode: session.ModeAssistant,
		Media: "audio", AssistantID: a.ID, VersionID: a.ActiveVersionID, Status: session.StatusActive, CreatedAt: now,
		Metadata: metadata.Metadata{"order_ref": "A-17"}}
	c := call.Call{ID: ident.New("call"), AccountID: acct.ID, Direction: call.Inbound, LineID: "line_1", From: "+15551230000",
		To: "+15550100001", Media: "audio", Status: call.StatusActive, HandledBy: call.HandledByAssistant, AssistantID: a.ID,
		VersionID: a.ActiveVersionID, SessionID: ses.ID, StartedAt: now, Variables: map[string]string{"caller_name": "Ada"}}
	ses.CallID = c.ID
	if err := st.SaveSession(ctx, ses, c, nil); err != nil {
		t.Fatal(err)
	}
	if client == nil {
		client = toolcall.NewClient(egress.Policy{AllowLoopback: true})
	}
	return fixture{svc: &toolcall.Service{Records: st, Secrets: assistants, Client: client}, callID: c.ID, secret: secret, store: st}
}

func (f fixture) call(t *testing.T, args string) persona.ToolResponse {
	t.Helper()
	res, err := f.svc.Call(context.Background(), persona.ToolRequest{CallID: f.callID, ToolCallID: "call_0", Name: "lookup_order", Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("Call = %v", err)
	}
	return res
}

// TestToolCall: the customer's server gets the call's context, signed so that the SDK's
// webhook.Verify accepts it with the assistant's tool secret, and its answer is the
// result, unwrapped from {"result": ...}.
func TestToolCall(t *testing.T) {
	var got toolcall.Request
	var verr error
	var headers http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		headers = r.Header.Clone()
		verr = errors.Join(verr, json.Unmarshal(body, &got))
		if err := sdkwebhook.Verify(r.Header, body, time.Now(), fixtureSecret.Load().(string)); err != nil {
			verr = errors.Join(verr, err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"result": {"status": "shipped", "eta": "Friday"}}`)
	}))
	defer srv.Close()
	f := newFixture(t, srv.URL+"/tools/order", 2000, nil)
	fixtureSecret.Store(f.secret)
	res := f.call(t, `{"order_id":"6735"}`)
	if verr != nil {
		t.Fatalf("the receiver: %v", verr)
	}
	if res.Error != nil || string(res.Result) != `{"status":"shipped","eta":"Friday"}` || res.StatusCode != 200 {
		t.Fatalf("Call = %+v (result %s), want the unwrapped result", res, res.Result)
	}
	c, _ := f.store.GetCall(context.Background(), f.callID)
	if got.Tool != "lookup_order" || string(got.Arguments) != `{"order_id":"6735"}` || got.CallID != f.callID ||
		got.AssistantID != c.AssistantID || got.VersionID != c.VersionID || got.LineID != "line_1" || got.SessionID != c.SessionID ||
		got.Metadata["order_ref"] != "A-17" || got.Variables["caller_name"] != "Ada" || got.Object != "tool_call" {
		t.Errorf("the request = %+v", got)
	}
	if headers.Get("webhook-id") != got.ID || !ident.Valid(toolcall.IDPrefix, got.ID) || headers.Get("User-Agent") != toolcall.UserAgent {
		t.Errorf("headers %v, body id %q", headers, got.ID)
	}
}

var fixtureSecret atomic.Value

// TestToolFailures: every way a tool call can fail is an error for the model, with a
// code; none is an error of the route.
func TestToolFailures(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		timeout int
		args    string
		code    string
		status  int
	}{
		{"non-2xx", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) }, 2000, `{}`, persona.ToolErrStatus, 500},
		{"redirect not followed", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "http://169.254.169.254/", 302) }, 2000, `{}`, persona.ToolErrStatus, 302},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, 200, `{}`, persona.ToolErrTimeout, 0},
		{"oversized", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"result":"`+strings.Repeat("x", persona.MaxToolResponseBytes)+`"}`)
		}, 2000, `{}`, persona.ToolErrTooLarge, 200},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "shipped") }, 2000, `{}`, persona.ToolErrInvalid, 200},
		{"arguments not an object", func(w http.ResponseWriter, r *http.Request) { t.Error("called with bad arguments") }, 2000, `["6735"]`, persona.ToolErrBadArguments, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			f := newFixture(t, srv.URL, tt.timeout, nil)
			res := f.call(t, tt.args)
			if res.Error == nil || res.Error.Code != tt.code || res.StatusCode != tt.status || res.Result != nil {
				t.Fatalf("Call = %+v (error %+v), want %s with status %d", res, res.Error, tt.code, tt.status)
			}
			if res.Error.Message == "" {
				t.Error("the error has no message for the model")
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + l.Addr().String()
		l.Close() // nothing listens there now
		res := newFixture(t, url, 2000, nil).call(t, `{}`)
		if res.Error == nil || res.Error.Code != persona.ToolErrUnreachable {
			t.Fatalf("Call = %+v, want unreachable", res.Error)
		}
	})
}

// TestToolAnswers: what a 2xx body means to the model.
func TestToolAnswers(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`{"result": 42}`, `42`},
		{`{"status":"shipped"}`, `{"status":"shipped"}`},
		{`{"result": 1, "note": "x"}`, `{"result":1,"note":"x"}`},
		{`[1, 2]`, `[1,2]`},
		{``, `null`},
		{` "plain string" `, `"plain string"`},
	} {
		got, ok := toolcall.Result([]byte(tt.body))
		if !ok || string(got) != tt.want {
			t.Errorf("Result(%q) = %s, %v; want %s", tt.body, got, ok, tt.want)
		}
	}
	if _, ok := toolcall.Result([]byte("shipped")); ok {
		t.Error("Result of a non-JSON body is ok")
	}
}

// TestToolSSRF: a tool whose host name resolves to an internal address is refused when
// dialled, before any connection: the target sees nothing. The name passes the create
// check (it is not a literal address), as one that re-resolves later would.
func TestToolSSRF(t *testing.T) {
	var conns atomic.Int32
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	// Names that resolve to internal addresses, through a DNS server of the test's; the
	// deployment's policy (no loopback).
	dns := egresstest.StartDNS(t, map[string]netip.Addr{
		"tools.customer.example.":    netip.MustParseAddr("127.0.0.1"),
		"metadata.customer.example.": netip.MustParseAddr("169.254.169.254"),
		"vpc.customer.example.":      netip.MustParseAddr("10.0.0.5"),
	})
	client := delivery.NewClientDialer(egress.Policy{}.Dialer(dns.Resolver()))
	client.Timeout = 0
	for _, host := range []string{"tools", "metadata", "vpc"} {
		target := "http://" + host + ".customer.example:" + port + "/order"
		f := newFixture(t, target, 2000, client)
		res := f.call(t, `{}`)
		if res.Error == nil || res.Error.Code != persona.ToolErrBlocked || res.DurationMS != 0 || res.StatusCode != 0 {
			t.Fatalf("Call to %s = %+v (error %+v), want blocked_destination with no duration", target, res, res.Error)
		}
	}
	l.Close()
	wg.Wait()
	if n := conns.Load(); n != 0 {
		t.Errorf("the internal target saw %d connections, want 0", n)
	}
}

// TestToolCallOfAnEndedCall: a call that ended gets no tool calls; an unknown call is
// the route's 404.
func TestToolCallOfAnEndedCall(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("an ended call's tool was called") }))
	defer srv.Close()
	f := newFixture(t, srv.URL, 2000, nil)
	ctx := context.Background()
	c, _ := f.store.GetCall(ctx, f.callID)
	c.End(call.StatusEnded, call.ReasonRemoteHangup, call.EndedByRemote, time.Now(), func() string { return ident.New("evt") })
	if err := f.store.SaveCall(ctx, c, nil); err != nil {
		t.Fatal(err)
	}
	if res := f.call(t, `{}`); res.Error == nil || res.Error.Code != persona.ToolErrCallNotLive {
		t.Errorf("Call of an ended call = %+v", res.Error)
	}
	_, err := f.svc.Call(ctx, persona.ToolRequest{CallID: ident.New("call"), Name: "lookup_order", Arguments: json.RawMessage(`{}`)})
	if !apierr.Is(err, apierr.CodeResourceNotFound) {
		t.Errorf("Call of an unknown call = %v, want resource_not_found", err)
	}
	if res, err := f.svc.Call(ctx, persona.ToolRequest{CallID: f.callID, Name: "nope", Arguments: json.RawMessage(`{}`)}); err != nil || res.Error == nil {
		t.Errorf("Call of an unknown tool = %+v, %v", res, err)
	}
}
