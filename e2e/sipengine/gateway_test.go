package sipengine_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	protologger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/e2e/sipphone"
	"github.com/bridgeline/bridgeline/mediafleet/livekitsip"
	"github.com/bridgeline/bridgeline/mediafleet/livekitsip/siptest"
	"github.com/bridgeline/bridgeline/mediafleet/sipgateway"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/simhook"
	"github.com/bridgeline/bridgeline/shared/platform/sip"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/rtc/lkapi"
)

const gatewaySecret = "gateway-test-secret-0123456789abcdef"

// controlPlane stands in for the control plane's SIP receiver: it checks each
// notification's signature as the real one does, keeps it, and answers inbound calls
// with decide.
type controlPlane struct {
	mu      sync.Mutex
	notes   []platform.Notification
	changed chan struct{}
	decide  func(n platform.Notification) sip.InboundReply
}

func (cp *controlPlane) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := simhook.VerifyBody(r, gatewaySecret, simhook.ToControlPlane, sip.Path, time.Now())
	if err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	var n platform.Notification
	if err := json.Unmarshal(body, &n); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cp.mu.Lock()
	cp.notes = append(cp.notes, n)
	close(cp.changed)
	cp.changed = make(chan struct{})
	decide := cp.decide
	cp.mu.Unlock()
	out := any(map[string]bool{"received": true})
	if n.Event == platform.EventInbound {
		out = decide(n)
	}
	json.NewEncoder(w).Encode(out)
}

// next waits for the first notification of event from index from on, and returns it
// with its index.
func (cp *controlPlane) next(ctx context.Context, t testing.TB, from int, event string) (platform.Notification, int) {
	t.Helper()
	for {
		cp.mu.Lock()
		for i := from; i < len(cp.notes); i++ {
			if cp.notes[i].Event == event {
				n := cp.notes[i]
				cp.mu.Unlock()
				return n, i
			}
		}
		changed := cp.changed
		cp.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			cp.mu.Lock()
			defer cp.mu.Unlock()
			t.Fatalf("no %s notification: %v (got %+v)", event, ctx.Err(), cp.notes)
		}
	}
}

func (cp *controlPlane) count() int {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return len(cp.notes)
}

// testWriter logs through t.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// gatewayRig is the engine with the gateway between livekit-sip and livekit-server, and
// a control plane of the test's behind the gateway.
type gatewayRig struct {
	*rig
	cp *controlPlane
}

func newGatewayRig(t testing.TB) *gatewayRig {
	t.Helper()
	lksdk.SetLogger(protologger.GetDiscardLogger())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cp := &controlPlane{changed: make(chan struct{})}
	cpSrv := &http.Server{Handler: cp}
	cpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go cpSrv.Serve(cpLn)
	t.Cleanup(func() { cpSrv.Close() })

	e := siptest.Start(t, siptest.Options{SIP: livekitsip.Config{WSURL: "ws://" + ln.Addr().String()}})
	cfg := e.LiveKit.Config()
	gw, err := sipgateway.New(sipgateway.Config{LiveKitURL: e.LiveKit.WSURL(), APIKey: cfg.APIKey, APISecret: cfg.APISecret,
		NotifyURL: "http://" + cpLn.Addr().String() + sip.Path, Secret: gatewaySecret, ReconnectWait: 3 * time.Second,
		Log: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: gw.Handler()}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close(); gw.Close() })

	lk, err := lkapi.New(lkapi.Config{URL: e.LiveKit.HTTPURL(), PublicURL: e.LiveKit.WSURL(), APIKey: cfg.APIKey, APISecret: cfg.APISecret})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{e: e, lk: lk, tone: t.TempDir() + "/tone.wav"}
	if err := sipphone.WriteTone(r.tone, phoneHz, 4*time.Second); err != nil {
		t.Fatal(err)
	}
	return &gatewayRig{rig: r, cp: cp}
}

// gatewayTrunk is the Bridgeline trunk the test's dispatch rule names in its room prefix,
// as siptrunk's Sync names each trunk's: the gateway tells the control plane the trunk.
const gatewayTrunk = "trunk_01kb0000000000000000000000"

// sipLine makes what Bridgeline keeps in LiveKit for a SIP line: an inbound trunk for
// its number and a dispatch rule giving each call a room named by sip.RoomPrefix.
func (r *gatewayRig) sipLine(ctx context.Context, t testing.TB) {
	t.Helper()
	var err error
	r.inbound, err = r.lk.CreateSIPInboundTrunk(ctx, rtc.SIPInboundTrunk{Name: "line", Numbers: []string{lineNumber},
		AllowedAddresses: []string{"127.0.0.1/32"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.lk.CreateSIPDispatchRule(ctx, rtc.SIPDispatchRule{TrunkIDs: []string{r.inbound.ID},
		RoomPrefix: sip.RoomPrefix + gatewayTrunk}); err != nil {
		t.Fatal(err)
	}
}

// answerInto answers inbound calls into room with the party token the control plane
// mints (platform.ParticipantIdentity, kind SIP), after wait.
func (r *gatewayRig) answerInto(t testing.TB, room string, wait time.Duration) func(platform.Notification) sip.InboundReply {
	return func(n platform.Notification) sip.InboundReply {
		time.Sleep(wait)
		tok, err := r.lk.ParticipantToken(rtc.Grant{Room: room, Identity: platform.ParticipantIdentity, Name: n.From,
			Kind: rtc.KindSIP, UpdateOwnMetadata: true})
		if err != nil {
			t.Error(err)
			return sip.InboundReply{Received: true, Reject: "test"}
		}
		return sip.InboundReply{Received: true, CallID: "call_test" + n.From[1:],
			Answer: &sip.Room{URL: r.e.LiveKit.WSURL(), Token: tok.JWT, Name: room}}
	}
}

// TestGatewayInbound: with the gateway as the bridge's ws_url, a phone's call to a line
// asks the control plane (signed), rings while it decides, and joins the room it names
// as its party; the phone's BYE is a hangup notification. A refused call is 486 Busy
// Here at the phone, and reaches no room.
func TestGatewayInbound(t *testing.T) {
	r := newGatewayRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r.sipLine(ctx, t)

	t.Run("answered", func(t *testing.T) {
		r.room(ctx, t, "ses_gwin")
		w := r.watch(t, "ses_gwin")
		b := r.bot(ctx, t, "ses_gwin")
		const decision = 3 * time.Second
		r.cp.decide = r.answerInto(t, "ses_gwin", decision)
		phone := r.phone(ctx, t, sipphone.Config{Number: "+15559990001", Speak: r.tone})
		invite := time.Now()
		call, err := phone.Dial(ctx, "sip:"+lineNumber+"@"+r.e.SIP.SIPAddr())
		if err != nil {
			t.Fatal(err)
		}
		in, _ := r.cp.next(ctx, t, 0, platform.EventInbound)
		if in.From != "+15559990001" || in.To != lineNumber || in.PlatformCallID == "" || in.Media != platform.MediaAudio ||
			in.Trunk != gatewayTrunk {
			t.Errorf("inbound notification = %+v, want from the phone to the line, audio, on trunk %s, with the bridge's call id", in, gatewayTrunk)
		}
		id, joined := w.sipJoined(ctx, t)
		if id != platform.ParticipantIdentity {
			t.Errorf("the call joined as %q, want %q", id, platform.ParticipantIdentity)
		}
		if d := joined.Sub(invite); d < decision {
			t.Errorf("the call joined %v after the INVITE, before the control plane answered (%v)", d, decision)
		}
		ev, err := call.Next(ctx, "CALL_ESTABLISHED")
		if err != nil {
			t.Fatal(err)
		}
		if ev.At.Sub(invite) < decision {
			t.Errorf("the phone was answered %v after its INVITE, before the decision", ev.At.Sub(invite))
		}
		w.mu.Lock()
		attrs := w.attrs[id]
		w.mu.Unlock()
		if attrs[rtc.AttrSIPCallID] != in.PlatformCallID || attrs[rtc.AttrSIPPhoneNumber] != "+15559990001" {
			t.Errorf("the party's attributes = %v, want the bridge's sip.* attributes of call %s", attrs, in.PlatformCallID)
		}
		time.Sleep(2 * time.Second)
		if got := sipphone.ToneLevel(heardRoom(b, invite), phoneHz); got < 0.05 {
			t.Errorf("the room heard the phone's tone at %.3f, want it", got)
		}
		if err := phone.Hangup(ctx); err != nil {
			t.Fatal(err)
		}
		hup, _ := r.cp.next(ctx, t, 0, platform.EventHangup)
		if hup.PlatformCallID != in.PlatformCallID || hup.CallID != "call_test15559990001" {
			t.Errorf("hangup notification = %+v, want call %s (call_test15559990001)", hup, in.PlatformCallID)
		}
	})

	t.Run("refused", func(t *testing.T) {
		r.cp.decide = func(platform.Notification) sip.InboundReply {
			return sip.InboundReply{Received: true, Reject: "line disabled"}
		}
		from := r.cp.count()
		phone := r.phone(ctx, t, sipphone.Config{Number: "+15559990002", Speak: r.tone})
		call, err := phone.Dial(ctx, "sip:"+lineNumber+"@"+r.e.SIP.SIPAddr())
		if err != nil {
			t.Fatal(err)
		}
		r.cp.next(ctx, t, from, platform.EventInbound)
		ev, err := call.Closed(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Status() != 486 {
			t.Errorf("a refused call closed with %q at the phone, want 486 Busy Here", ev.Param)
		}
		for _, e := range phone.Events() {
			if e.Type == "CALL_ESTABLISHED" {
				t.Errorf("the refused call was answered: %+v", phone.Events())
			}
		}
		rooms, err := r.lk.Participants(ctx, "ses_gwin")
		if err == nil {
			for _, p := range rooms {
				if p.Kind == rtc.KindSIP {
					t.Errorf("a SIP participant %q is in a room after a refused call", p.Identity)
				}
			}
		}
	})
}

// TestGatewayOutbound: a call the control plane dials through the gateway is reported
// answered when the phone answers, and hung up when the phone hangs up; a phone that
// declines is busy; a call the control plane takes out of the room is not reported.
func TestGatewayOutbound(t *testing.T) {
	r := newGatewayRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	r.room(ctx, t, "ses_gwout")
	r.bot(ctx, t, "ses_gwout")
	callee := r.phone(ctx, t, sipphone.Config{Number: "+15557654321", Speak: r.tone, AutoAnswer: true})
	decliner := r.phone(ctx, t, sipphone.Config{Number: "+15557654322"})
	trunk, err := r.lk.CreateSIPOutboundTrunk(ctx, rtc.SIPOutboundTrunk{Name: "to the phones", Address: callee.Address(),
		Transport: rtc.SIPTransportUDP, Numbers: []string{lineNumber}})
	if err != nil {
		t.Fatal(err)
	}
	busyTrunk, err := r.lk.CreateSIPOutboundTrunk(ctx, rtc.SIPOutboundTrunk{Name: "to the decliner", Address: decliner.Address(),
		Transport: rtc.SIPTransportUDP, Numbers: []string{lineNumber}})
	if err != nil {
		t.Fatal(err)
	}
	dial := func(trunkID, to, callID string) rtc.SIPParticipant {
		t.Helper()
		p, err := r.lk.CreateSIPParticipant(ctx, rtc.SIPCall{TrunkID: trunkID, To: to, From: lineNumber, Room: "ses_gwout",
			Identity: platform.ParticipantIdentity, Metadata: `{"call_id":"` + callID + `"}`, RingingTimeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	t.Run("answered then hung up by the phone", func(t *testing.T) {
		from := r.cp.count()
		p := dial(trunk.ID, callee.Number(), "call_out1")
		in, err := callee.Incoming(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.Next(ctx, "CALL_ESTABLISHED"); err != nil {
			t.Fatal(err)
		}
		ans, _ := r.cp.next(ctx, t, from, platform.EventAnswered)
		if ans.CallID != "call_out1" || ans.PlatformCallID != p.CallID {
			t.Errorf("answered = %+v, want call_out1, platform id %s", ans, p.CallID)
		}
		time.Sleep(time.Second)
		if err := callee.Hangup(ctx); err != nil {
			t.Fatal(err)
		}
		hup, _ := r.cp.next(ctx, t, from, platform.EventHangup)
		if hup.CallID != "call_out1" {
			t.Errorf("hangup = %+v, want call_out1", hup)
		}
	})

	t.Run("declined is busy", func(t *testing.T) {
		from := r.cp.count()
		dial(busyTrunk.ID, decliner.Number(), "call_out2")
		in, err := decliner.Incoming(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.Next(ctx, "CALL_INCOMING"); err != nil {
			t.Fatal(err)
		}
		// A person declines once it rings. livekit-sip joins the room while it sends
		// the INVITE: a decline within a few ms of it (seen on a loaded machine, 18 ms
		// before the join was done) aborts the join with no leave and no reason, and the
		// call counts as failed, not busy.
		time.Sleep(500 * time.Millisecond)
		if err := decliner.Hangup(ctx); err != nil {
			t.Fatal(err)
		}
		busy, _ := r.cp.next(ctx, t, from, platform.EventBusy)
		if busy.CallID != "call_out2" {
			t.Errorf("busy = %+v, want call_out2", busy)
		}
	})

	t.Run("removed by the control plane", func(t *testing.T) {
		from := r.cp.count()
		dial(trunk.ID, callee.Number(), "call_out3")
		in, err := callee.Incoming(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.Next(ctx, "CALL_ESTABLISHED"); err != nil {
			t.Fatal(err)
		}
		r.cp.next(ctx, t, from, platform.EventAnswered)
		if err := r.lk.RemoveParticipant(ctx, "ses_gwout", platform.ParticipantIdentity); err != nil {
			t.Fatal(err)
		}
		if _, err := in.Closed(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Second) // past the gateway's reconnect wait
		r.cp.mu.Lock()
		defer r.cp.mu.Unlock()
		for _, n := range r.cp.notes[from:] {
			if n.Event != platform.EventAnswered {
				t.Errorf("notification %+v after the control plane removed the call, want none", n)
			}
		}
	})
}
