// Package livekit_test runs shared/rtc/lkapi, the control plane's LiveKit client, against
// a real livekit-server: rooms, agent dispatch, and the webhooks it posts.
package livekit_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/livekit/protocol/auth"
	"github.com/livekit/protocol/livekit"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver/livekittest"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/rtc/lkapi"
)

// startLiveKit starts a livekit-server for the test (skipped under -short).
func startLiveKit(t *testing.T, cfg livekitserver.Config) *livekitserver.Server {
	t.Helper()
	harness.SkipShort(t)
	return livekittest.Start(t, cfg)
}

func newClient(t *testing.T, s *livekitserver.Server) *lkapi.Client {
	t.Helper()
	cfg := s.Config()
	c, err := lkapi.New(lkapi.Config{URL: s.HTTPURL(), PublicURL: s.WSURL(), APIKey: cfg.APIKey, APISecret: cfg.APISecret})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// TestRooms runs the room lifecycle on a real livekit-server: create, join with a
// participant token, list, remove, delete (twice), and a token for a deleted room no
// longer joins because rooms are never auto-created.
func TestRooms(t *testing.T) {
	s := startLiveKit(t, livekitserver.Config{})
	c := newClient(t, s)

	if ps, err := c.ListParticipants(ctx(t), "ses_missing"); err != nil || len(ps) != 0 {
		t.Fatalf("ListParticipants(missing) = %v, %v; want none", ps, err)
	}
	if err := c.DeleteRoom(ctx(t), "ses_never_created"); err != nil {
		t.Fatalf("DeleteRoom(never created) = %v, want nil", err)
	}
	room, err := c.CreateRoom(ctx(t), rtc.RoomSpec{Name: "ses_a", EmptyTimeout: 30 * time.Second, MaxParticipants: 4})
	if err != nil {
		t.Fatal(err)
	}
	if room.Name != "ses_a" || room.MaxParticipants != 4 || room.EmptyTimeout != 30*time.Second {
		t.Errorf("room = %v, want ses_a, 4 participants, 30 s", room)
	}
	tok, err := c.ParticipantToken(rtc.Grant{Room: "ses_a", Identity: "customer"})
	if err != nil {
		t.Fatal(err)
	}
	disconnected := make(chan livekit.DisconnectReason, 1)
	cb := lksdk.NewRoomCallback()
	cb.OnDisconnectedWithReason = func(r lksdk.DisconnectionReason) {
		select {
		case disconnected <- livekit.DisconnectReason_UNKNOWN_REASON:
		default:
		}
	}
	type packet struct {
		topic, sender string
		payload       []byte
	}
	packets := make(chan packet, 4)
	cb.OnDataPacket = func(data lksdk.DataPacket, params lksdk.DataReceiveParams) {
		if u, ok := data.(*lksdk.UserDataPacket); ok {
			select {
			case packets <- packet{u.Topic, params.SenderIdentity, u.Payload}:
			default: // a packet sent again that arrived late
			}
		}
	}
	client, err := lksdk.ConnectToRoomWithToken(c.PublicURL(), tok.JWT, cb, lksdk.WithAutoSubscribe(false))
	if err != nil {
		t.Fatalf("join ses_a: %v", err)
	}
	defer client.Disconnect()

	ps, err := c.ListParticipants(ctx(t), "ses_a")
	if err != nil || len(ps) != 1 || ps[0].Identity != "customer" {
		t.Fatalf("ListParticipants = %v, %v; want [customer]", ps, err)
	}
	// The same list in the control plane's own types (what the Lambdas read).
	if got, err := c.Participants(ctx(t), "ses_a"); err != nil || len(got) != 1 || got[0] != (rtc.Participant{Identity: "customer", Kind: rtc.KindStandard, CanPublish: true}) {
		t.Fatalf("Participants = %+v, %v; want [customer standard, may publish]", got, err)
	}
	// The server's data packet reaches the participant on its topic, naming no sender
	// (how a worker tells the control plane's notices from a participant's packets). A
	// participant that has just joined may not have its data channel open yet (under
	// load): the packet is sent again each second until one arrives.
	deadline := time.After(20 * time.Second)
	for sent := false; !sent; {
		if err := c.SendData(ctx(t), "ses_a", "bridgeline.test", []byte(`{"n":1}`)); err != nil {
			t.Fatal(err)
		}
		select {
		case p := <-packets:
			sent = true
			if p.topic != "bridgeline.test" || p.sender != "" || string(p.payload) != `{"n":1}` {
				t.Errorf("data packet = %+v, want topic bridgeline.test, no sender, the payload", p)
			}
		case <-time.After(time.Second):
		case <-deadline:
			t.Fatal("the server's data packet did not arrive")
		}
	}
	// Made subscribe-only, it stays in the room and may no longer publish.
	if err := c.SubscribeOnly(ctx(t), "ses_a", "customer"); err != nil {
		t.Fatal(err)
	}
	if err := c.SubscribeOnly(ctx(t), "ses_a", "nobody"); err != nil {
		t.Errorf("SubscribeOnly(absent participant) = %v, want nil", err)
	}
	ps, err = c.ListParticipants(ctx(t), "ses_a")
	if err != nil || len(ps) != 1 || ps[0].Permission.GetCanPublish() || ps[0].Permission.GetCanPublishData() || !ps[0].Permission.GetCanSubscribe() {
		t.Fatalf("after SubscribeOnly, participants = %v, %v; want customer subscribing only", ps, err)
	}
	if got, err := c.Participants(ctx(t), "ses_a"); err != nil || len(got) != 1 || got[0].CanPublish {
		t.Fatalf("after SubscribeOnly, Participants = %+v, %v; want CanPublish false", got, err)
	}
	if got, err := c.Participants(ctx(t), "ses_missing"); err != nil || len(got) != 0 {
		t.Fatalf("Participants(missing) = %+v, %v; want none", got, err)
	}
	if _, err := c.CreateRoom(ctx(t), rtc.RoomSpec{Name: "ses_b"}); err != nil {
		t.Fatal(err)
	}
	if r, err := lksdk.ConnectToRoomWithToken(c.PublicURL(), retarget(t, tok.JWT, "ses_b"), lksdk.NewRoomCallback()); err == nil {
		r.Disconnect()
		t.Error("a token edited to name another room joined it")
	}

	if err := c.DeleteRoom(ctx(t), "ses_a"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-disconnected:
	case <-time.After(10 * time.Second):
		t.Fatal("client not disconnected by DeleteRoom")
	}
	if err := c.DeleteRoom(ctx(t), "ses_a"); err != nil {
		t.Errorf("second DeleteRoom = %v, want nil", err)
	}
	if r, err := lksdk.ConnectToRoomWithToken(c.PublicURL(), tok.JWT, lksdk.NewRoomCallback()); err == nil {
		r.Disconnect()
		t.Error("the token joined its room after DeleteRoom (auto_create must be off)")
	}
}

func TestAgentDispatch(t *testing.T) {
	s := startLiveKit(t, livekitserver.Config{})
	c := newClient(t, s)
	_, err := c.CreateRoom(ctx(t), rtc.RoomSpec{Name: "ses_agent",
		Agent: &rtc.AgentDispatch{AgentName: "bridgeline-persona", Metadata: `{"call_id":"call_1"}`}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.Config()
	ds := lksdk.NewAgentDispatchServiceClient(s.HTTPURL(), cfg.APIKey, cfg.APISecret)
	list, err := ds.ListDispatch(ctx(t), &livekit.ListAgentDispatchRequest{Room: "ses_agent"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.AgentDispatches) != 1 || list.AgentDispatches[0].AgentName != "bridgeline-persona" ||
		list.AgentDispatches[0].Metadata != `{"call_id":"call_1"}` {
		t.Errorf("dispatches = %v, want one bridgeline-persona with the job metadata", list.AgentDispatches)
	}

	if _, err := c.CreateRoom(ctx(t), rtc.RoomSpec{Name: "ses_later"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Dispatch(ctx(t), "ses_later", rtc.AgentDispatch{AgentName: "bridgeline-persona", Metadata: "{}"}); err != nil {
		t.Fatal(err)
	}
	list, err = ds.ListDispatch(ctx(t), &livekit.ListAgentDispatchRequest{Room: "ses_later"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range list.AgentDispatches {
		if d.AgentName == "bridgeline-persona" && d.Metadata == "{}" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("dispatches after Dispatch = %v; want one bridgeline-persona", list.AgentDispatches)
	}
}

// TestWebhooks has livekit-server send its webhooks to a receiver that verifies them,
// and checks forged, altered and unsigned deliveries are refused.
func TestWebhooks(t *testing.T) {
	type got struct {
		ev   rtc.WebhookEvent
		err  error
		auth string
		body []byte
	}
	received := make(chan got, 64)
	var c *lkapi.Client
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := readAll(r)
		r.Body = nopCloser(body)
		ev, err := c.ReceiveWebhook(r)
		received <- got{ev, err, r.Header.Get("Authorization"), body}
	}))
	defer recv.Close()
	s := startLiveKit(t, livekitserver.Config{WebhookURLs: []string{recv.URL + "/internal/livekit/webhook"}})
	c = newClient(t, s)
	if _, err := c.CreateRoom(ctx(t), rtc.RoomSpec{Name: "ses_hook"}); err != nil {
		t.Fatal(err)
	}
	var first got
	deadline := time.After(15 * time.Second)
	for first.ev.Event == "" {
		select {
		case g := <-received:
			if g.err != nil {
				t.Fatalf("ReceiveWebhook(real delivery) = %v", g.err)
			}
			if g.ev.Event == "room_started" && g.ev.Room == "ses_hook" {
				first = g
			}
		case <-deadline:
			t.Fatal("no room_started webhook")
		}
	}

	post := func(body []byte, authz string) error {
		r := httptest.NewRequest(http.MethodPost, "/internal/livekit/webhook", bytes.NewReader(body))
		if authz != "" {
			r.Header.Set("Authorization", authz)
		}
		_, err := c.ReceiveWebhook(r)
		return err
	}
	if err := post(first.body, first.auth); err != nil {
		t.Errorf("replayed genuine webhook = %v, want nil", err)
	}
	altered := bytes.Replace(first.body, []byte("ses_hook"), []byte("ses_evil"), 1)
	if err := post(altered, first.auth); !errors.Is(err, rtc.ErrWebhookSignature) {
		t.Errorf("altered body = %v, want ErrWebhookSignature", err)
	}
	if err := post(first.body, ""); !errors.Is(err, rtc.ErrWebhookUnsigned) {
		t.Errorf("unsigned = %v, want ErrWebhookUnsigned", err)
	}
	forged := signWebhook(t, altered, s.Config().APIKey, strings.Repeat("f", 32))
	if err := post(altered, forged); !errors.Is(err, rtc.ErrWebhookSignature) {
		t.Errorf("forged with another secret = %v, want ErrWebhookSignature", err)
	}
	wrongKey := signWebhook(t, altered, "APIother", s.Config().APISecret)
	if err := post(altered, wrongKey); !errors.Is(err, rtc.ErrWebhookSignature) {
		t.Errorf("unknown key = %v, want ErrWebhookSignature", err)
	}
	garbage := []byte("{not json")
	if err := post(garbage, signWebhook(t, garbage, s.Config().APIKey, s.Config().APISecret)); !errors.Is(err, rtc.ErrWebhookMalformed) {
		t.Errorf("signed garbage = %v, want ErrWebhookMalformed", err)
	}
}

// TestWebhookEventFilter runs livekit-server configured as the control plane runs it
// (only rtc.ReceivedEvents posted): a room made and deleted posts its room_finished and
// nothing before it (LiveKit posts one room's events in order, so a room_started would
// have come first).
func TestWebhookEventFilter(t *testing.T) {
	events := make(chan string, 64)
	var c *lkapi.Client
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ev, err := c.ReceiveWebhook(r)
		if err != nil {
			t.Errorf("ReceiveWebhook = %v", err)
			return
		}
		if ev.Room == "ses_filtered" {
			events <- ev.Event
		}
	}))
	defer recv.Close()
	s := startLiveKit(t, livekitserver.Config{WebhookURLs: []string{recv.URL}, WebhookEvents: rtc.ReceivedEvents})
	c = newClient(t, s)
	if _, err := c.CreateRoom(ctx(t), rtc.RoomSpec{Name: "ses_filtered"}); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteRoom(ctx(t), "ses_filtered"); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-events:
		if ev != rtc.EventRoomFinished {
			t.Errorf("first webhook of the room = %s, want room_finished (room_started is filtered out)", ev)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no room_finished webhook")
	}
}

func signWebhook(t *testing.T, body []byte, key, secret string) string {
	t.Helper()
	sum := sha256.Sum256(body)
	tok, err := auth.NewAccessToken(key, secret).SetValidFor(5 * time.Minute).
		SetSha256(base64.StdEncoding.EncodeToString(sum[:])).ToJWT()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
