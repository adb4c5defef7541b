// Package simgateway_test drives a sim platform gateway (the sim with its GatewayHandler,
// as cmd/platform-gateway serves it) through the control plane's client for it,
// shared/platform/simclient, against a real livekit-server.
package simgateway_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver/livekittest"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/simclient"
	"github.com/bridgeline/bridgeline/shared/platform/simhook"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/rtc/lkapi"
)

const secret = "gateway-secret"

// notes is the control plane's receiver of the gateway's notifications.
type notes struct {
	mu  sync.Mutex
	got []platform.Notification
	bad int
}

func (n *notes) serve(w http.ResponseWriter, r *http.Request) {
	got, err := simhook.Verify(r, secret, time.Now())
	n.mu.Lock()
	defer n.mu.Unlock()
	if err != nil {
		n.bad++
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	n.got = append(n.got, got)
}

// wait returns the first notification of event for a sim call.
func (n *notes) wait(t *testing.T, simCallID, event string) platform.Notification {
	t.Helper()
	var found *platform.Notification
	waitFor(t, event+" notification for "+simCallID, func() bool {
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.bad > 0 {
			t.Fatalf("%d notifications failed verification", n.bad)
		}
		for _, g := range n.got {
			if g.PlatformCallID == simCallID && g.Event == event {
				found = &g
				return true
			}
		}
		return false
	})
	return *found
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type env struct {
	rooms   *lkapi.Client
	sim     *platformsim.Sim
	notes   *notes
	gateway *httptest.Server
	client  *simclient.Client
}

// setup runs a sim gateway (the sim with its GatewayHandler, as cmd/platform-gateway
// serves it) against livekit-server, and a client for it.
func setup(t *testing.T) env {
	harness.SkipShort(t)
	lk := livekittest.Start(t, livekitserver.Config{})
	cfg := lk.Config()
	rooms, err := lkapi.New(lkapi.Config{URL: lk.HTTPURL(), PublicURL: lk.WSURL(), APIKey: cfg.APIKey, APISecret: cfg.APISecret})
	if err != nil {
		t.Fatal(err)
	}
	n := &notes{}
	recv := httptest.NewServer(http.HandlerFunc(n.serve))
	t.Cleanup(recv.Close)
	s, err := platformsim.New(platformsim.Config{NotifyURL: recv.URL + simhook.Path, Secret: secret, APIToken: apiToken, RingDelay: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("sim Close: %v", err)
		}
	})
	gw := httptest.NewServer(s.GatewayHandler())
	t.Cleanup(gw.Close)
	c, err := simclient.New(simclient.Config{URL: gw.URL + "/", Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	return env{rooms: rooms, sim: s, notes: n, gateway: gw, client: c}
}

func (e env) room(t *testing.T, name string) platform.Room {
	t.Helper()
	if _, err := e.rooms.CreateRoom(context.Background(), rtc.RoomSpec{Name: name}); err != nil {
		t.Fatal(err)
	}
	tok, err := e.rooms.ParticipantToken(rtc.Grant{Room: name, Identity: platform.ParticipantIdentity, Kind: rtc.KindSIP})
	if err != nil {
		t.Fatal(err)
	}
	return platform.Room{URL: e.rooms.PublicURL(), Token: tok.JWT}
}

// TestGateway drives a sim gateway through the client: a dialled handle answers and its
// party is in the LiveKit room, hang-up takes it out; an inbound call is answered into
// a room, another rejected; unknown calls are platform.ErrUnknownCall.
func TestGateway(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	if e.client.Name() != platformsim.Name {
		t.Errorf("Name = %q, want %q", e.client.Name(), platformsim.Name)
	}

	// Outbound: dial, answered (notified to the control plane), hang up.
	id, err := e.client.Dial(ctx, platform.DialRequest{CallID: "call_out", From: "+15550100001", To: "+15557654321",
		Media: platform.MediaAudio, Room: e.room(t, "ses_out")})
	if err != nil {
		t.Fatal(err)
	}
	if n := e.notes.wait(t, id, platform.EventAnswered); n.CallID != "call_out" || n.Media != platform.MediaAudio {
		t.Errorf("answered = %+v, want call_out, audio", n)
	}
	if c, _ := e.sim.Get(id); !c.InRoom || c.Status != platformsim.StatusAnswered {
		t.Errorf("dialled call = %+v, want answered, in the room", c)
	}
	parts, err := e.rooms.ListParticipants(ctx, "ses_out")
	if err != nil || len(parts) != 1 || parts[0].Identity != platform.ParticipantIdentity {
		t.Errorf("room participants = %v, %v; want the platform party", parts, err)
	}
	if err := e.client.Hangup(ctx, id); err != nil {
		t.Fatal(err)
	}
	if c, _ := e.sim.Get(id); c.Status != platformsim.StatusEnded || c.EndedBy != platformsim.EndedByBridgeline {
		t.Errorf("after Hangup: %+v, want ended by bridgeline", c)
	}
	if err := e.client.Hangup(ctx, id); err != nil {
		t.Errorf("second Hangup = %v, want nil", err)
	}

	// A dial the sim refuses is an error, not a call.
	if _, err := e.client.Dial(ctx, platform.DialRequest{CallID: "call_x", From: "a", To: "b", Media: platform.MediaAudio}); err == nil {
		t.Error("Dial without a room succeeded")
	}

	// Inbound: placed on the sim, answered through the gateway.
	in, err := e.sim.Place(platformsim.PlaceRequest{From: "+15550100002", To: "+15550109999", Media: platform.MediaAudio})
	if err != nil {
		t.Fatal(err)
	}
	e.notes.wait(t, in.ID, platform.EventInbound)
	if err := e.client.Answer(ctx, in.ID, "call_in", e.room(t, "ses_in")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the inbound party in the room", func() bool { c, _ := e.sim.Get(in.ID); return c.InRoom })
	// The gateway serves the sim's own API too: its party speaks when told.
	resp := simAPI(t, http.MethodPost, e.gateway.URL+"/sim/calls/"+in.ID+"/say", `{"text":"hello"}`, "Bearer "+apiToken)
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("say through the gateway = %d, want 202", resp.StatusCode)
	}
	waitFor(t, "the party to say it", func() bool {
		c, _ := e.sim.Get(in.ID)
		return len(c.Said) == 1 && c.Said[0].Status == platformsim.UtteranceSpoken
	})
	if err := e.client.Answer(ctx, in.ID, "call_in", e.room(t, "ses_in")); !errors.Is(err, platform.ErrUnknownCall) {
		t.Errorf("answering an answered call = %v, want ErrUnknownCall", err)
	}

	// Inbound, rejected.
	rej, err := e.sim.Place(platformsim.PlaceRequest{From: "+15550100003", To: "+15550109999", Media: platform.MediaAudio})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.client.Reject(ctx, rej.ID, "no assistant"); err != nil {
		t.Fatal(err)
	}
	if c, _ := e.sim.Get(rej.ID); c.Status != platformsim.StatusRejected || c.Reason != "no assistant" || c.CallID != "" {
		t.Errorf("rejected call = %+v, want rejected with the reason and no call id", c)
	}
	// Rejected naming Bridgeline's call: the sim call shows it, as an answered one does.
	named, err := e.sim.Place(platformsim.PlaceRequest{From: "+15550100003", To: "+15550109999", Media: platform.MediaAudio})
	if err != nil {
		t.Fatal(err)
	}
	if err := platform.RejectCall(ctx, e.client, named.ID, "call_declined", "decision_timeout"); err != nil {
		t.Fatal(err)
	}
	if c, _ := e.sim.Get(named.ID); c.Status != platformsim.StatusRejected || c.CallID != "call_declined" {
		t.Errorf("call rejected with its call id = %+v, want rejected naming call_declined", c)
	}
	if err := e.client.Reject(ctx, "simcall_nope", ""); !errors.Is(err, platform.ErrUnknownCall) {
		t.Errorf("Reject(unknown) = %v, want ErrUnknownCall", err)
	}
}

// TestGatewaySignature: the control routes take only requests signed with the secret.
func TestGatewaySignature(t *testing.T) {
	e := setup(t)
	wrong, err := simclient.New(simclient.Config{URL: e.gateway.URL, Secret: "not-the-secret"})
	if err != nil {
		t.Fatal(err)
	}
	if err := wrong.Hangup(context.Background(), "simcall_1"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("Hangup with the wrong secret = %v, want a 401", err)
	}
	resp, err := http.Post(e.gateway.URL+simhook.DialPath, "application/json", strings.NewReader(`{"call_id":"c"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("unsigned dial = %d, want 401", resp.StatusCode)
	}
	if len(e.sim.List()) != 0 {
		t.Errorf("sim calls after refused requests = %v, want none", e.sim.List())
	}
	// A control request signed for another route, or a notification's signature (the
	// other direction, same secret), is refused.
	body := `{"platform_call_id":"simcall_1"}`
	for name, sig := range map[string]string{
		"dial's signature":       simhook.Sign(secret, simhook.ToPlatform, "POST", simhook.DialPath, []byte(body), time.Now()),
		"a notification's":       simhook.SignNotification(secret, []byte(body), time.Now()),
		"hangup path, wrong way": simhook.Sign(secret, simhook.ToControlPlane, "POST", simhook.HangupPath, []byte(body), time.Now()),
	} {
		req, _ := http.NewRequest(http.MethodPost, e.gateway.URL+simhook.HangupPath, strings.NewReader(body))
		req.Header.Set(simhook.Header, sig)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("hangup signed with %s = %d, want 401", name, resp.StatusCode)
		}
	}
	if len(e.sim.List()) != 0 {
		t.Errorf("sim calls after refused requests = %v, want none", e.sim.List())
	}
	// The sim's own API is served beside the control routes, to holders of its token only.
	placed := `{"to":"+15550109999","media":"audio"}`
	for _, tc := range []struct {
		name, authz string
		want        int
	}{
		{"no credential", "", http.StatusUnauthorized},
		{"wrong token", "Bearer not-the-token-not-the-token-not-the", http.StatusUnauthorized},
		{"the sim secret instead", "Bearer " + secret, http.StatusUnauthorized},
		{"bearer token", "Bearer " + apiToken, http.StatusOK},
		{"basic, token as the password (a browser)", "Basic " + base64.StdEncoding.EncodeToString([]byte("me:"+apiToken)), http.StatusOK},
	} {
		if got := simAPI(t, http.MethodGet, e.gateway.URL+"/sim/calls", "", tc.authz).StatusCode; got != tc.want {
			t.Errorf("%s: GET /sim/calls = %d, want %d", tc.name, got, tc.want)
		}
		want := tc.want
		if want == http.StatusOK {
			want = http.StatusCreated
		}
		if got := simAPI(t, http.MethodPost, e.gateway.URL+"/sim/calls", placed, tc.authz).StatusCode; got != want {
			t.Errorf("%s: POST /sim/calls = %d, want %d", tc.name, got, want)
		}
	}
	if n := len(e.sim.List()); n != 2 {
		t.Errorf("sim calls placed = %d, want 2 (the two with the token)", n)
	}
}

// TestGatewayWithoutAPIToken: a gateway given no SIM_API_TOKEN serves no /sim/ API.
func TestGatewayWithoutAPIToken(t *testing.T) {
	s, err := platformsim.New(platformsim.Config{NotifyURL: "http://127.0.0.1:9" + simhook.Path, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	gw := httptest.NewServer(s.GatewayHandler())
	defer gw.Close()
	if got := simAPI(t, http.MethodPost, gw.URL+"/sim/calls", `{"to":"+15550109999"}`, "").StatusCode; got != http.StatusNotFound {
		t.Errorf("POST /sim/calls without a token configured = %d, want 404", got)
	}
	if n := len(s.List()); n != 0 {
		t.Errorf("sim calls = %d, want 0", n)
	}
}

// apiToken is the gateway's SIM_API_TOKEN in these tests.
const apiToken = "sim-api-token-0123456789-0123456789"

// simAPI sends one request to the sim's API with authz as its Authorization header.
func simAPI(t *testing.T, method, url, body, authz string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}
