package main

// Stack tests for events: `bridgeline dev` runs as a child process (this test binary
// again, on free loopback ports, persona workers off) and is driven only through its
// HTTP API and the sim's, as a customer would, with a verifying webhook receiver.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/livekit/protocol/livekit"
	protologger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver/livekittest"
	"github.com/bridgeline/bridgeline/shared/config"
)

const stackEnv = "BRIDGELINE_TEST_STACK"

// TestStackProcess is not a test: it is the `bridgeline dev` process the stack tests
// start (this test binary again) and stop or kill.
func TestStackProcess(t *testing.T) {
	if os.Getenv(stackEnv) == "" {
		t.Skip("helper process for the stack tests")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, []string{"dev"}); err != nil {
		t.Fatal(err)
	}
}

// testStack is one running local stack.
type testStack struct {
	t       testing.TB
	lkPort  int
	dataDir string
	env     []string
	api     string
	key     string
	cmd     *exec.Cmd
	log     *bytes.Buffer
	logMu   *sync.Mutex
	client  *http.Client
}

// newTestStack picks ports and a data folder; start runs it (again, after a kill).
func newTestStack(t testing.TB) *testStack {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the local stack")
	}
	// The test joins rooms as the customer's client; the SDK's chatter is not wanted.
	lksdk.SetLogger(protologger.LogRLogger(logr.Discard()))
	bin, err := livekitserver.ResolveBinary(context.Background(), os.Getenv("LIVEKIT_SERVER_BIN"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("livekit-server is required in CI (make deps builds it): %v", err)
		}
		t.Skipf("livekit-server not available: %v", err)
	}
	apiPort, lkPort := livekittest.FreePort(t, "tcp"), livekittest.FreePort(t, "tcp")
	key := "sk_test_" + strconv.FormatInt(time.Now().UnixNano(), 36) + "eventsstacktest0000"
	s := &testStack{t: t, lkPort: lkPort, api: fmt.Sprintf("http://127.0.0.1:%d", apiPort), key: key,
		dataDir: filepath.Join(t.TempDir(), "data"), client: &http.Client{Timeout: 30 * time.Second}}
	// No LIVEKIT_API_SECRET: the stack makes its data folder's own (join reads it).
	s.env = append(os.Environ(), stackEnv+"=1", "LIVEKIT_SERVER_BIN="+bin,
		"PORT="+strconv.Itoa(apiPort), "BRIDGELINE_DATA="+s.dataDir,
		"LIVEKIT_PORT="+strconv.Itoa(lkPort), "LIVEKIT_RTC_TCP_PORT="+strconv.Itoa(livekittest.FreePort(t, "tcp")),
		"LIVEKIT_RTC_UDP_PORT="+strconv.Itoa(livekittest.FreePort(t, "udp")), "PERSONA_WORKERS=0", "DEV_API_KEY="+key,
		"RATE_LIMIT_RPS=0",
		// The SIP bridge only where a test turns it on (sip_stack_test.go): port 5060 is
		// one per machine, and these stacks need no Redis.
		"SIP_PORT=off",
		"WEBHOOK_ALLOW_LOOPBACK=1") // the receivers run on 127.0.0.1
	return s
}

func (s *testStack) start() {
	s.t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStackProcess$", "-test.count=1")
	cmd.Env = s.env
	var mu sync.Mutex
	buf := &bytes.Buffer{}
	w := &stackLogWriter{mu: &mu, w: buf}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.cmd, s.log, s.logMu = cmd, buf, &mu
	s.t.Cleanup(func() {
		if s.cmd == cmd {
			s.stop()
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, s.api+"/v1/lines", nil)
		req.Header.Set("Authorization", "Bearer "+s.key)
		if resp, err := s.client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			s.t.Fatalf("stack did not start:\n%s", s.logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type stackLogWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *stackLogWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (s *testStack) logs() string {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.log.String()
}

// stop ends the stack gracefully.
func (s *testStack) stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	s.cmd = nil
}

// kill ends the stack with SIGKILL, as a crash would.
func (s *testStack) kill() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		s.t.Fatal(err)
	}
	s.cmd.Wait()
	s.cmd = nil
}

// do calls the API (or the sim's API) and decodes the JSON answer.
func (s *testStack) do(method, path, body string) (int, map[string]any) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.api+path, bytes.NewBufferString(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

func (s *testStack) mustDo(want int, method, path, body string) map[string]any {
	s.t.Helper()
	status, out := s.do(method, path, body)
	if status != want {
		s.t.Fatalf("%s %s %s = %d %v, want %d", method, path, body, status, out, want)
	}
	return out
}

// endpoint registers a receiver for every event type.
func (s *testStack) endpoint(r *eventtest.Receiver) string {
	s.t.Helper()
	out := s.mustDo(201, "POST", "/v1/webhook_endpoints", `{"url":"`+r.URL+`"}`)
	r.SetSecret(out["secret"].(string))
	return out["id"].(string)
}

// waitStatus polls a resource until its status is one of want.
func (s *testStack) waitStatus(path string, want ...string) map[string]any {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, out := s.do("GET", path, "")
		for _, w := range want {
			if out["status"] == w {
				return out
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("GET %s: status %v, want one of %v", path, out["status"], want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// join connects as the customer's client and returns once LiveKit counts it as active
// (LiveKit reports a participant leaving only after it became active).
func (s *testStack) join(url, token string) *lksdk.Room {
	s.t.Helper()
	room, err := lksdk.ConnectToRoomWithToken(url, token, &lksdk.RoomCallback{}, lksdk.WithAutoSubscribe(false))
	if err != nil {
		s.t.Fatalf("join with the participant token: %v", err)
	}
	// The stack's LiveKit credentials: the default key and its data folder's secret.
	secret, err := config.LocalLiveKitSecret(s.dataDir)
	if err != nil {
		s.t.Fatal(err)
	}
	rs := lksdk.NewRoomServiceClient(fmt.Sprintf("http://127.0.0.1:%d", s.lkPort), config.Defaults().LiveKitAPIKey, secret)
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := rs.ListParticipants(context.Background(), &livekit.ListParticipantsRequest{Room: room.Name()})
		if err == nil {
			for _, p := range res.Participants {
				if p.Identity == room.LocalParticipant.Identity() && p.State == livekit.ParticipantInfo_ACTIVE {
					return room
				}
			}
		}
		if time.Now().After(deadline) {
			room.Disconnect()
			s.t.Fatalf("the client never became active in room %s: %v", room.Name(), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// simCallOf finds the sim's call bridged for a Bridgeline call.
func (s *testStack) simCallOf(callID string) map[string]any {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, out := s.do("GET", "/sim/calls", "")
		list, _ := out["data"].([]any)
		for _, c := range list {
			if m := c.(map[string]any); m["call_id"] == callID {
				return m
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no sim call for %s", callID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// endedEvents counts call.ended events in the event log for each call.
func (s *testStack) endedEvents() map[string]int {
	s.t.Helper()
	counts := map[string]int{}
	after := ""
	for range 50 {
		path := "/v1/events?type=call.ended&limit=100"
		if after != "" {
			path += "&starting_after=" + after
		}
		out := s.mustDo(200, "GET", path, "")
		for _, e := range out["data"].([]any) {
			m := e.(map[string]any)
			counts[m["data"].(map[string]any)["call_id"].(string)]++
			after = m["id"].(string)
		}
		if out["has_more"] != true {
			break
		}
	}
	return counts
}

func stackEndReason(r eventtest.Received) string {
	var d callevent.CallEnded
	json.Unmarshal(r.Event.Data, &d)
	return d.EndReason
}

// call.ended is emitted exactly once per call, whichever way the session ends, and
// arrives signed; customer_decides decides inbound calls by webhook answer, API answer,
// decline and timeout.
func TestEventsOnTheStack(t *testing.T) {
	s := newTestStack(t)
	s.start()
	r := eventtest.NewReceiver(t)
	s.endpoint(r)

	newSession := func(handle string) (sessionID, callID, token, url string) {
		out := s.mustDo(201, "POST", "/v1/sessions", `{"platform_handle":"`+handle+`"}`)
		return out["session_id"].(string), out["call_id"].(string), out["participant_token"].(string), out["rtc_url"].(string)
	}
	ended := map[string]string{} // call id -> the end reason expected
	check := func(t *testing.T, callID, reason string) {
		t.Helper()
		got := r.WaitFor(t, callevent.TypeCallEnded, 20*time.Second, eventtest.ForCall(callID))
		if stackEndReason(got) != reason {
			t.Errorf("call.ended end_reason = %q, want %q", stackEndReason(got), reason)
		}
		if got.WebhookID != got.Event.ID {
			t.Errorf("webhook-id %q != event id %q", got.WebhookID, got.Event.ID)
		}
		ended[callID] = reason
	}

	t.Run("DELETE, twice", func(t *testing.T) {
		ses, callID, _, _ := newSession("sim:alice")
		s.waitStatus("/v1/sessions/"+ses, "active")
		s.mustDo(200, "DELETE", "/v1/sessions/"+ses, "")
		s.mustDo(200, "DELETE", "/v1/sessions/"+ses, "")
		check(t, callID, "deleted")
	})
	t.Run("remote hang-up", func(t *testing.T) {
		ses, callID, _, _ := newSession("sim:bob")
		s.waitStatus("/v1/sessions/"+ses, "active")
		sim := s.simCallOf(callID)
		s.mustDo(200, "POST", "/sim/calls/"+sim["id"].(string)+"/hangup", "")
		check(t, callID, "remote_hangup")
	})
	t.Run("client leaves", func(t *testing.T) {
		ses, callID, token, url := newSession("sim:carol")
		room := s.join(url, token)
		s.waitStatus("/v1/sessions/"+ses, "active")
		room.Disconnect()
		check(t, callID, "participant_left")
	})
	for _, tc := range []struct{ handle, reason string }{
		{"sim:no_answer", "no_answer"}, {"sim:busy", "busy"}, {"sim:failed", "platform_error"},
	} {
		t.Run("dial "+tc.handle, func(t *testing.T) {
			ses, callID, _, _ := newSession(tc.handle)
			s.waitStatus("/v1/sessions/"+ses, "failed", "ended")
			check(t, callID, tc.reason)
		})
	}
	t.Run("DELETE races hang-up", func(t *testing.T) {
		ses, callID, _, _ := newSession("sim:dave")
		s.waitStatus("/v1/sessions/"+ses, "active")
		sim := s.simCallOf(callID)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); s.do("DELETE", "/v1/sessions/"+ses, "") }()
		go func() { defer wg.Done(); s.do("POST", "/sim/calls/"+sim["id"].(string)+"/hangup", "") }()
		wg.Wait()
		got := r.WaitFor(t, callevent.TypeCallEnded, 20*time.Second, eventtest.ForCall(callID))
		if reason := stackEndReason(got); reason != "deleted" && reason != "remote_hangup" {
			t.Errorf("end_reason = %q, want deleted or remote_hangup", reason)
		}
		ended[callID] = stackEndReason(got)
	})

	// customer_decides on the first dev line.
	lines := s.mustDo(200, "GET", "/v1/lines", "")
	var lineID, handle string
	for _, l := range lines["data"].([]any) {
		if m := l.(map[string]any); m["handle"] == devHandles[0] {
			lineID, handle = m["id"].(string), m["handle"].(string)
		}
	}
	s.mustDo(200, "PATCH", "/v1/lines/"+lineID, `{"inbound_mode":"customer_decides","decision_timeout_seconds":2}`)
	// The receiver answers by caller: accept, decline, or nothing (API answer, timeout).
	r.AnswerIncoming(func(in callevent.CallIncoming) string {
		switch in.From {
		case "sim:accept":
			return "accept"
		case "sim:decline":
			return "decline"
		}
		return ""
	})
	ring := func(t *testing.T, from string) (simID, callID string, in callevent.CallIncoming) {
		t.Helper()
		out := s.mustDo(201, "POST", "/sim/calls", `{"from":"`+from+`","to":"`+handle+`","media":"video"}`)
		got := r.WaitFor(t, callevent.TypeCallIncoming, 10*time.Second, func(d json.RawMessage) bool {
			var c callevent.CallIncoming
			json.Unmarshal(d, &c)
			return c.From == from
		})
		json.Unmarshal(got.Event.Data, &in)
		return out["id"].(string), in.CallID, in
	}
	decided := func(t *testing.T, callID, decision, source string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, c := s.do("GET", "/v1/calls/"+callID, "")
			if c["decision"] == decision && (source == "" && c["decision_source"] == nil || c["decision_source"] == source) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("call %s: decision %v from %v, want %s from %q", callID, c["decision"], c["decision_source"], decision, source)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	tokenDead := func(t *testing.T, in callevent.CallIncoming) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			room, err := lksdk.ConnectToRoomWithToken(in.Session.RTCURL, in.Session.ParticipantToken, &lksdk.RoomCallback{}, lksdk.WithAutoSubscribe(false))
			if err != nil {
				return
			}
			room.Disconnect()
			if time.Now().After(deadline) {
				t.Fatal("the session payload's token still joins the room after the call was not taken")
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	t.Run("accept in the webhook response", func(t *testing.T) {
		simID, callID, in := ring(t, "sim:accept")
		if !strings.HasPrefix(in.Session.ParticipantIdentity, "customer-") {
			t.Errorf("call.incoming session's participant_identity = %q, want customer-...", in.Session.ParticipantIdentity)
		}
		decided(t, callID, "accept", "webhook_response")
		s.waitStatus("/sim/calls/"+simID, "answered")
		room := s.join(in.Session.RTCURL, in.Session.ParticipantToken) // the call.incoming session payload
		room.Disconnect()
		check(t, callID, "participant_left")
	})
	t.Run("accept through the API", func(t *testing.T) {
		simID, callID, _ := ring(t, "sim:api")
		out := s.mustDo(201, "POST", "/v1/calls/"+callID+"/answer", `{"action":"accept"}`)
		if out["participant_token"] == nil || out["call_id"] != callID {
			t.Errorf("accept answer = %v, want the session payload", out)
		}
		if id, _ := out["participant_identity"].(string); !strings.HasPrefix(id, "customer-") {
			t.Errorf("accept answer's participant_identity = %v, want the token's customer- identity", out["participant_identity"])
		}
		if status, out := s.do("POST", "/v1/calls/"+callID+"/answer", `{"action":"decline"}`); status != 409 {
			t.Errorf("a different second answer = %d %v, want 409", status, out)
		}
		decided(t, callID, "accept", "api")
		s.waitStatus("/sim/calls/"+simID, "answered")
		s.mustDo(200, "DELETE", "/v1/sessions/"+out["session_id"].(string), "")
		check(t, callID, "deleted")
	})
	t.Run("decline", func(t *testing.T) {
		simID, callID, in := ring(t, "sim:decline")
		decided(t, callID, "decline", "webhook_response")
		s.waitStatus("/sim/calls/"+simID, "rejected")
		check(t, callID, "declined")
		tokenDead(t, in)
	})
	t.Run("timeout", func(t *testing.T) {
		simID, callID, in := ring(t, "sim:silent")
		decided(t, callID, "timeout", "")
		s.waitStatus("/sim/calls/"+simID, "rejected")
		check(t, callID, "decision_timeout")
		tokenDead(t, in)
		if status, out := s.do("POST", "/v1/calls/"+callID+"/answer", `{"action":"accept"}`); status != 409 {
			t.Errorf("answer after the deadline = %d %v, want 409", status, out)
		}
	})

	t.Run("timeout hands the call to the line's assistant", func(t *testing.T) {
		a := s.mustDo(201, "POST", "/v1/assistants", `{"name":"Ada","system_prompt":"Be kind.","greeting":"Hi.","avatar_id":"ava_iris"}`)
		s.mustDo(201, "POST", "/v1/assistants/"+a["id"].(string)+"/publish", "")
		s.mustDo(200, "POST", "/v1/lines/"+lineID+"/assign", `{"assistant_id":"`+a["id"].(string)+`"}`)
		s.mustDo(200, "PATCH", "/v1/lines/"+lineID, `{"on_decision_timeout":"assistant"}`)
		defer s.mustDo(200, "PATCH", "/v1/lines/"+lineID, `{"on_decision_timeout":"decline","assistant_id":null}`)
		simID, callID, _ := ring(t, "sim:silent-too")
		decided(t, callID, "timeout", "")
		s.waitStatus("/sim/calls/"+simID, "answered")
		_, c := s.do("GET", "/v1/calls/"+callID, "")
		if c["handled_by"] != "assistant" || c["assistant_id"] != a["id"] {
			t.Errorf("call after the timeout = handled_by %v, assistant %v; want the line's assistant", c["handled_by"], c["assistant_id"])
		}
		s.mustDo(200, "POST", "/sim/calls/"+simID+"/hangup", "")
		check(t, callID, "remote_hangup")
	})

	t.Run("disabled line and assistant line without one decline and say why", func(t *testing.T) {
		var other string
		for _, l := range lines["data"].([]any) {
			if m := l.(map[string]any); m["handle"] == devHandles[1] {
				other = m["id"].(string)
			}
		}
		for _, tc := range []struct{ mode, from, reason string }{
			{"disabled", "sim:to-disabled", "line_disabled"},
			{"assistant", "sim:to-no-assistant", "no_assistant"},
		} {
			s.mustDo(200, "PATCH", "/v1/lines/"+other, `{"inbound_mode":"`+tc.mode+`","assistant_id":null}`)
			out := s.mustDo(201, "POST", "/sim/calls", `{"from":"`+tc.from+`","to":"`+devHandles[1]+`","media":"audio"}`)
			s.waitStatus("/sim/calls/"+out["id"].(string), "rejected")
			got := r.WaitFor(t, callevent.TypeCallEnded, 10*time.Second, func(d json.RawMessage) bool {
				var c callevent.CallEnded
				json.Unmarshal(d, &c)
				return c.From == tc.from
			})
			var c callevent.CallEnded
			json.Unmarshal(got.Event.Data, &c)
			if c.EndReason != tc.reason || c.Direction != "inbound" {
				t.Errorf("%s line: call.ended %s %s, want inbound %s", tc.mode, c.Direction, c.EndReason, tc.reason)
			}
			_, rec := s.do("GET", "/v1/calls/"+c.CallID, "")
			if rec["end_reason"] != tc.reason {
				t.Errorf("%s line: call record end_reason %v, want %s", tc.mode, rec["end_reason"], tc.reason)
			}
			ended[c.CallID] = tc.reason
		}
	})

	// Every call above has exactly one call.ended in the event log, and the receiver got
	// each under one webhook-id, verified.
	counts := s.endedEvents()
	for callID, reason := range ended {
		if counts[callID] != 1 {
			t.Errorf("call %s (%s): %d call.ended events, want 1", callID, reason, counts[callID])
		}
	}
	ids := map[string]map[string]bool{}
	for _, got := range r.Events(callevent.TypeCallEnded) {
		var d callevent.CallEnded
		json.Unmarshal(got.Event.Data, &d)
		if ids[d.CallID] == nil {
			ids[d.CallID] = map[string]bool{}
		}
		ids[d.CallID][got.WebhookID] = true
	}
	for callID, set := range ids {
		if len(set) != 1 {
			t.Errorf("call %s arrived under %d webhook-ids, want 1", callID, len(set))
		}
	}
	if rej := r.Rejected(); len(rej) > 0 {
		t.Errorf("receiver rejected %d requests: %v", len(rej), rej)
	}
}

// SIGKILL the stack while call.ended deliveries hang at the receiver, start it again on
// the same data: every event arrives, each under its own id, and none is lost.
func TestKillStackMidDelivery(t *testing.T) {
	s := newTestStack(t)
	s.start()
	var mu sync.Mutex
	killed := false
	hold := make(chan struct{})
	var holdOnce sync.Once
	release := func() { holdOnce.Do(func() { close(hold) }) }
	t.Cleanup(release)
	acked := map[string]bool{}
	inFlight := 0
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		id := req.Header.Get("webhook-id")
		mu.Lock()
		k := killed
		if !k {
			inFlight++
		}
		mu.Unlock()
		if !k {
			<-hold // mid-delivery when the stack dies
			return
		}
		mu.Lock()
		acked[id] = true
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	s.mustDo(201, "POST", "/v1/webhook_endpoints", `{"url":"http://`+ln.Addr().String()+`/hooks","events":["call.ended"]}`)

	const n = 4
	for range n {
		out := s.mustDo(201, "POST", "/v1/sessions", `{"platform_handle":"sim:erin"}`)
		s.waitStatus("/v1/sessions/"+out["session_id"].(string), "active")
		s.mustDo(200, "DELETE", "/v1/sessions/"+out["session_id"].(string), "")
	}
	want := s.endedEvents()
	if len(want) != n {
		t.Fatalf("call.ended events = %d, want %d", len(want), n)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		f := inFlight
		mu.Unlock()
		if f >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no delivery reached the receiver")
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.kill()
	mu.Lock()
	killed = true
	t.Logf("killed the stack with %d of %d deliveries in flight", inFlight, n)
	mu.Unlock()
	release()

	s.start()
	deadline = time.Now().Add(30 * time.Second)
	for {
		s.do("GET", "/v1/lines", "") // the restarted stack is up
		mu.Lock()
		got := len(acked)
		mu.Unlock()
		if got == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the restart %d of %d call.ended arrived", got, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The log agrees: each event's last attempt succeeded. The deliverer writes the
	// attempt after the receiver's answer, so the log may trail the receiver a moment.
	out := s.mustDo(200, "GET", "/v1/events?type=call.ended", "")
	for _, e := range out["data"].([]any) {
		id := e.(map[string]any)["id"].(string)
		mu.Lock()
		if !acked[id] {
			t.Errorf("event %s never acknowledged", id)
		}
		mu.Unlock()
		deadline := time.Now().Add(10 * time.Second)
		for {
			ev := s.mustDo(200, "GET", "/v1/events/"+id, "")
			atts := ev["attempts"].([]any)
			if len(atts) > 0 && atts[len(atts)-1].(map[string]any)["outcome"] == "succeeded" {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("event %s attempts = %v 10 s after the receiver acknowledged it, want the last one succeeded", id, atts)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// BenchmarkStackRingToCallIncoming is the time from the sim placing a call on a
// customer_decides line to call.incoming arriving at the customer's receiver, through the
// whole local stack (sim notification, line routing, room and token, signed POST); and
// from DELETE /v1/sessions/{id} answering to call.ended arriving (the outbox path).
func BenchmarkStackEvents(b *testing.B) {
	s := newTestStack(b)
	s.start()
	r := eventtest.NewReceiver(b)
	s.endpoint(r)
	r.AnswerIncoming(func(callevent.CallIncoming) string { return "decline" })
	lines := s.mustDo(200, "GET", "/v1/lines", "")
	var lineID string
	for _, l := range lines["data"].([]any) {
		if m := l.(map[string]any); m["handle"] == devHandles[0] {
			lineID = m["id"].(string)
		}
	}
	s.mustDo(200, "PATCH", "/v1/lines/"+lineID, `{"inbound_mode":"customer_decides"}`)
	report := func(b *testing.B, lat []time.Duration) {
		slices.Sort(lat)
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
		b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
	}
	b.Run("ring-to-call.incoming", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		for i := range b.N {
			from := fmt.Sprintf("sim:bench-%d-%d", b.N, i)
			start := time.Now()
			s.mustDo(201, "POST", "/sim/calls", `{"from":"`+from+`","to":"`+devHandles[0]+`","media":"audio"}`)
			got := r.WaitFor(b, callevent.TypeCallIncoming, 10*time.Second, func(d json.RawMessage) bool {
				var c callevent.CallIncoming
				json.Unmarshal(d, &c)
				return c.From == from
			})
			lat = append(lat, got.At.Sub(start))
		}
		report(b, lat)
	})
	b.Run("delete-to-call.ended", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		for range b.N {
			b.StopTimer()
			out := s.mustDo(201, "POST", "/v1/sessions", `{"platform_handle":"sim:bench","media":"audio"}`)
			ses, callID := out["session_id"].(string), out["call_id"].(string)
			s.waitStatus("/v1/sessions/"+ses, "active")
			b.StartTimer()
			start := time.Now()
			s.mustDo(200, "DELETE", "/v1/sessions/"+ses, "")
			got := r.WaitFor(b, callevent.TypeCallEnded, 10*time.Second, eventtest.ForCall(callID))
			lat = append(lat, got.At.Sub(start))
		}
		report(b, lat)
	})
}
