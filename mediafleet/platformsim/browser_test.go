package platformsim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/shared/platform"
)

func browserSim(t *testing.T) (*platformsim.Sim, *receiver, *httptest.Server) {
	return browserSimSDK(t, "")
}

// browserSimSDK is browserSim with Config.ClientSDK set to sdk.
func browserSimSDK(t *testing.T, sdk string) (*platformsim.Sim, *receiver, *httptest.Server) {
	recv, url := newReceiver(t, "sim-secret")
	s, err := platformsim.New(platformsim.Config{NotifyURL: url, Secret: "sim-secret", ClientSDK: sdk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Close(ctx)
	})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return s, recv, srv
}

func call(t *testing.T, method, url, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func simCall(t *testing.T, method, url, body string, want int) platformsim.Call {
	t.Helper()
	status, b := call(t, method, url, body)
	if status != want {
		t.Fatalf("%s %s = %d %s, want %d", method, url, status, b, want)
	}
	var c platformsim.Call
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// A browser party: the page places the call, sees the room once Bridgeline answers,
// says it joined, and hangs up; the room is shown only while the call is live.
func TestBrowserParty(t *testing.T) {
	s, recv, srv := browserSim(t)
	placed := simCall(t, "POST", srv.URL+"/sim/calls", `{"to":"+15550100001","party":"browser"}`, 201)
	if placed.Party != platformsim.PartyBrowser || placed.Room != nil || placed.Status != platformsim.StatusRinging {
		t.Fatalf("placed = %+v", placed)
	}
	if n := recv.wait(t, placed.ID, 1); n[0].Event != platform.EventInbound {
		t.Fatalf("first notification %+v, want inbound", n[0])
	}
	if status, b := call(t, "POST", srv.URL+"/sim/calls/"+placed.ID+"/joined", ""); status != 404 {
		t.Errorf("joined before answer = %d %s, want 404", status, b)
	}

	room := platform.Room{URL: "ws://127.0.0.1:7880", Token: "tok"}
	if err := s.Answer(context.Background(), placed.ID, "call_1", room); err != nil {
		t.Fatal(err)
	}
	var got platformsim.Call
	deadline := time.Now().Add(5 * time.Second)
	for got.Room == nil && time.Now().Before(deadline) {
		got = simCall(t, "GET", srv.URL+"/sim/calls/"+placed.ID, "", 200)
		time.Sleep(10 * time.Millisecond)
	}
	want := platformsim.PageRoom{RTCURL: room.URL, ParticipantToken: room.Token, Identity: platform.ParticipantIdentity}
	if got.Room == nil || *got.Room != want || got.CallID != "call_1" || got.Status != platformsim.StatusRinging {
		t.Fatalf("answered call = %+v, want room %+v, still ringing", got, want)
	}

	joined := simCall(t, "POST", srv.URL+"/sim/calls/"+placed.ID+"/joined", "", 200)
	if joined.Status != platformsim.StatusAnswered || !joined.InRoom || joined.AnsweredAt == nil {
		t.Errorf("joined = %+v", joined)
	}
	// A page speaks through its own microphone, not the sim's voice.
	if status, b := call(t, "POST", srv.URL+"/sim/calls/"+placed.ID+"/say", `{"text":"hello"}`); status != 409 || !bytes.Contains(b, []byte("party_not_in_room")) {
		t.Errorf("say on a browser call = %d %s, want 409 party_not_in_room", status, b)
	}
	if again := simCall(t, "POST", srv.URL+"/sim/calls/"+placed.ID+"/joined", "", 200); *again.AnsweredAt != *joined.AnsweredAt {
		t.Errorf("joined twice moved answered_at: %v, then %v", joined.AnsweredAt, again.AnsweredAt)
	}

	ended := simCall(t, "POST", srv.URL+"/sim/calls/"+placed.ID+"/hangup", "", 200)
	if ended.Status != platformsim.StatusEnded || ended.EndedBy != platformsim.EndedByRemote || ended.Room != nil || ended.InRoom {
		t.Errorf("hung up = %+v", ended)
	}
	if n := recv.wait(t, placed.ID, 2); n[1].Event != platform.EventHangup || n[1].CallID != "call_1" {
		t.Errorf("second notification %+v, want hangup of call_1", n[1])
	}
	if status, _ := call(t, "POST", srv.URL+"/sim/calls/"+placed.ID+"/joined", ""); status != 404 {
		t.Errorf("joined after the end = %d, want 404", status)
	}
}

// Bridgeline hanging up a browser call takes its room away.
func TestBrowserPartyHungUpByBridgeline(t *testing.T) {
	s, _, srv := browserSim(t)
	placed := simCall(t, "POST", srv.URL+"/sim/calls", `{"to":"+15550100001","party":"browser","media":"audio"}`, 201)
	if err := s.Answer(context.Background(), placed.ID, "call_2", platform.Room{URL: "ws://127.0.0.1:7880", Token: "tok"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for simCall(t, "GET", srv.URL+"/sim/calls/"+placed.ID, "", 200).Room == nil {
		if time.Now().After(deadline) {
			t.Fatal("no room after answer")
		}
		time.Sleep(10 * time.Millisecond)
	}
	simCall(t, "POST", srv.URL+"/sim/calls/"+placed.ID+"/joined", "", 200)
	if err := s.Hangup(context.Background(), placed.ID); err != nil {
		t.Fatal(err)
	}
	got := simCall(t, "GET", srv.URL+"/sim/calls/"+placed.ID, "", 200)
	if got.Status != platformsim.StatusEnded || got.EndedBy != platformsim.EndedByBridgeline || got.Room != nil {
		t.Errorf("after Bridgeline's hang-up = %+v", got)
	}
}

func TestBrowserPartyBadInput(t *testing.T) {
	_, _, srv := browserSim(t)
	if status, b := call(t, "POST", srv.URL+"/sim/calls", `{"to":"+15550100001","party":"robot"}`); status != 400 || !bytes.Contains(b, []byte("parameter_invalid")) {
		t.Errorf("party robot = %d %s, want 400 parameter_invalid", status, b)
	}
	bot := simCall(t, "POST", srv.URL+"/sim/calls", `{"to":"+15550100001","party":"bot"}`, 201)
	if bot.Party != "" {
		t.Errorf("bot call party = %q, want none", bot.Party)
	}
	if status, _ := call(t, "POST", srv.URL+"/sim/calls/"+bot.ID+"/joined", ""); status != 404 {
		t.Errorf("joined on a bot call = %d, want 404", status)
	}
}

// GET /sim/ serves the caller page, its script and style, and the LiveKit SDK from
// Config.ClientSDK ($LIVEKIT_CLIENT_JS; or says how to install it).
func TestPage(t *testing.T) {
	sdk := filepath.Join(t.TempDir(), "livekit-client.umd.js")
	if err := os.WriteFile(sdk, []byte("window.LivekitClient = {};"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, srv := browserSimSDK(t, sdk)
	for _, c := range []struct{ path, typ, has string }{
		{"/sim/", "text/html", `src="/sim/page/caller.js"`},
		{"/sim/", "text/html", `src="/sim/page/level-meter.js"`},
		{"/sim/page/level-meter.js", "text/javascript", "window.bridgelineLevelMeter"},
		{"/sim/page/caller.js", "text/javascript", "party: 'browser'"},
		{"/sim/page/style.css", "text/css", "#remote-video"},
		{"/sim/page/livekit-client.umd.js", "text/javascript", "window.LivekitClient"},
	} {
		resp, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), c.typ) || !strings.Contains(string(b), c.has) {
			t.Errorf("GET %s = %d %s, %d bytes; want 200 %s containing %q", c.path, resp.StatusCode, resp.Header.Get("Content-Type"), len(b), c.typ, c.has)
		}
	}
	for _, p := range []string{"/sim/page/../sim.go", "/sim/page/browser.go", "/sim/index.html"} {
		if status, _ := call(t, "GET", srv.URL+p, ""); status != 404 {
			t.Errorf("GET %s = %d, want 404", p, status)
		}
	}
	_, _, missing := browserSimSDK(t, filepath.Join(t.TempDir(), "missing.js"))
	if status, b := call(t, "GET", missing.URL+"/sim/page/livekit-client.umd.js", ""); status != 404 || !bytes.Contains(b, []byte(platformsim.ClientSDKEnv)) {
		t.Errorf("missing SDK = %d %s, want 404 naming %s", status, b, platformsim.ClientSDKEnv)
	}
}
