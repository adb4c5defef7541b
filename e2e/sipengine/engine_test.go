package sipengine_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/livekit/protocol/livekit"
	protologger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/e2e/sipphone"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/livekitsip/siptest"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/rtc/lkapi"
	"github.com/bridgeline/bridgeline/shared/rtc/lkhttp"
)

// Numbers of the test: the line the phones call, its trunk's credentials, and a second
// line whose trunk takes calls only from an address the phones are not on.
const (
	lineNumber   = "+15550100001"
	closedNumber = "+15550100002"
	trunkUser    = "acme"
	trunkPass    = "s3cret-trunk-password"
)

// Tones: the phone says 440 Hz, the room's participant 1 kHz (callerbot.Tone).
const phoneHz, roomHz = 440, 1000

// rig is the engine, the LiveKit client the control plane uses, and what a test made in
// LiveKit.
type rig struct {
	e       *siptest.Engine
	lk      *lkapi.Client
	inbound rtc.SIPInboundTrunk
	tone    string // the phone's WAV
}

func newRig(t testing.TB) *rig {
	t.Helper()
	lksdk.SetLogger(protologger.GetDiscardLogger())
	e := siptest.Start(t, siptest.Options{})
	cfg := e.LiveKit.Config()
	lk, err := lkapi.New(lkapi.Config{URL: e.LiveKit.HTTPURL(), PublicURL: e.LiveKit.WSURL(), APIKey: cfg.APIKey, APISecret: cfg.APISecret})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{e: e, lk: lk, tone: filepath.Join(t.TempDir(), "tone.wav")}
	if err := sipphone.WriteTone(r.tone, phoneHz, 4*time.Second); err != nil {
		t.Fatal(err)
	}
	return r
}

// line makes the inbound trunk of lineNumber (loopback only, with digest credentials)
// and a rule sending its calls to room.
func (r *rig) line(ctx context.Context, t testing.TB, room string) {
	t.Helper()
	var err error
	r.inbound, err = r.lk.CreateSIPInboundTrunk(ctx, rtc.SIPInboundTrunk{Name: "line", Numbers: []string{lineNumber},
		AllowedAddresses: []string{"127.0.0.1/32"}, AuthUsername: trunkUser, AuthPassword: trunkPass})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.lk.CreateSIPDispatchRule(ctx, rtc.SIPDispatchRule{TrunkIDs: []string{r.inbound.ID}, Room: room,
		Attributes: map[string]string{"bridgeline.test": "inbound"}}); err != nil {
		t.Fatal(err)
	}
}

func (r *rig) room(ctx context.Context, t testing.TB, name string) {
	t.Helper()
	if _, err := r.lk.CreateRoom(ctx, rtc.RoomSpec{Name: name, EmptyTimeout: 2 * time.Minute}); err != nil {
		t.Fatal(err)
	}
}

func (r *rig) phone(ctx context.Context, t testing.TB, cfg sipphone.Config) *sipphone.Phone {
	t.Helper()
	cfg.Dir = t.TempDir()
	p, err := sipphone.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("baresip %s log:\n%s\nevents: %+v", cfg.Number, p.Log(), p.Events())
		}
		p.Close()
	})
	return p
}

// bot joins room publishing the room's tone, and hears.
func (r *rig) bot(ctx context.Context, t testing.TB, room string) *callerbot.Bot {
	t.Helper()
	tok, err := r.lk.ParticipantToken(rtc.Grant{Room: room, Identity: "customer"})
	if err != nil {
		t.Fatal(err)
	}
	tone := callerbot.Tone(roomHz)
	b, err := callerbot.Join(ctx, callerbot.Options{URL: r.e.LiveKit.WSURL(), Token: tok.JWT, Audio: &tone})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Leave)
	return b
}

// watcher is a participant that only watches the room: who comes and goes, and the SIP
// DTMF packets.
type watcher struct {
	room *lksdk.Room

	mu      sync.Mutex
	changed chan struct{}
	joined  map[string]time.Time
	left    map[string]time.Time
	kinds   map[string]lksdk.ParticipantKind
	attrs   map[string]map[string]string
	dtmf    []*livekit.SipDTMF
}

func (r *rig) watch(t testing.TB, room string) *watcher {
	t.Helper()
	tok, err := r.lk.ParticipantToken(rtc.Grant{Room: room, Identity: "watcher", SubscribeOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	w := &watcher{changed: make(chan struct{}), joined: map[string]time.Time{}, left: map[string]time.Time{},
		kinds: map[string]lksdk.ParticipantKind{}, attrs: map[string]map[string]string{}}
	cb := lksdk.NewRoomCallback()
	cb.OnParticipantConnected = func(p *lksdk.RemoteParticipant) {
		w.note(func() {
			w.joined[p.Identity()], w.kinds[p.Identity()], w.attrs[p.Identity()] = time.Now(), p.Kind(), p.Attributes()
		})
	}
	cb.OnParticipantDisconnected = func(p *lksdk.RemoteParticipant) {
		w.note(func() { w.left[p.Identity()] = time.Now() })
	}
	cb.OnDataPacket = func(data lksdk.DataPacket, _ lksdk.DataReceiveParams) {
		if d, ok := data.(*livekit.SipDTMF); ok {
			w.note(func() { w.dtmf = append(w.dtmf, d) })
		}
	}
	w.room, err = lksdk.ConnectToRoomWithToken(r.e.LiveKit.WSURL(), tok.JWT, cb)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.room.Disconnect)
	return w
}

func (w *watcher) note(f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f()
	close(w.changed)
	w.changed = make(chan struct{})
}

// until waits for cond (read under the lock) or fails t.
func (w *watcher) until(ctx context.Context, t testing.TB, what string, cond func() bool) {
	t.Helper()
	for {
		w.mu.Lock()
		ok, changed := cond(), w.changed
		w.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		}
	}
}

// sipJoined waits for a participant of kind SIP and returns its identity and when it
// joined.
func (w *watcher) sipJoined(ctx context.Context, t testing.TB) (string, time.Time) {
	t.Helper()
	var id string
	w.until(ctx, t, "a SIP participant", func() bool {
		for p, k := range w.kinds {
			if k == lksdk.ParticipantSIP && w.left[p].IsZero() {
				id = p
				return true
			}
		}
		return false
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	return id, w.joined[id]
}

// sdpAnswer finds the connection address of livekit-sip's SDP (session name LiveKit) in
// its log, where the SDP's line ends are written \r\n.
var sdpAnswer = regexp.MustCompile(`s=LiveKit\\r\\nc=IN IP4 ([0-9.]+)`)

func heardRoom(b *callerbot.Bot, since time.Time) tts.PCM {
	return tts.PCM{Rate: callerbot.HearRate, Samples: b.Heard(since)}
}

// TestInboundCall: a phone calls a line's number through its trunk and dispatch rule;
// the call joins the rule's room as a SIP participant; the two hear each other; a key
// pressed on the phone arrives in the room as LiveKit's SIP DTMF packet; the phone's BYE
// takes the participant out.
func TestInboundCall(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r.room(ctx, t, "ses_inbound")
	r.line(ctx, t, "ses_inbound")
	w := r.watch(t, "ses_inbound")
	b := r.bot(ctx, t, "ses_inbound")
	phone := r.phone(ctx, t, sipphone.Config{Number: "+15559990001", Speak: r.tone, AuthUser: trunkUser, AuthPassword: trunkPass})

	invite := time.Now()
	call, err := phone.Dial(ctx, "sip:"+lineNumber+"@"+r.e.SIP.SIPAddr())
	if err != nil {
		t.Fatal(err)
	}
	id, joined := w.sipJoined(ctx, t)
	t.Logf("INVITE to SIP participant joined: %v", joined.Sub(invite).Round(time.Millisecond))
	if _, err := call.Next(ctx, "CALL_ESTABLISHED"); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	attrs := w.attrs[id]
	w.mu.Unlock()
	for k, want := range map[string]string{rtc.AttrSIPPhoneNumber: "+15559990001", rtc.AttrSIPTrunkID: r.inbound.ID, "bridgeline.test": "inbound"} {
		if attrs[k] != want {
			t.Errorf("SIP participant attribute %s = %q, want %q (all: %v)", k, attrs[k], want, attrs)
		}
	}

	time.Sleep(2500 * time.Millisecond)
	if err := phone.SendDTMF(ctx, "5#", 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	w.until(ctx, t, "the DTMF packets 5 and #", func() bool { return len(w.dtmf) >= 2 })
	w.mu.Lock()
	digits := []string{w.dtmf[0].Digit, w.dtmf[1].Digit}
	w.mu.Unlock()
	if !slices.Equal(digits, []string{"5", "#"}) {
		t.Errorf("DTMF in the room = %v, want [5 #]", digits)
	}

	// The bridge advertises the loopback address it listens on (nat_1_to_1_ip): its SDP
	// answer, which its debug log quotes, names 127.0.0.1, not the machine's first other
	// address; and the phone's RTP comes from there.
	if m := sdpAnswer.FindStringSubmatch(r.e.SIP.LogTail(1 << 20)); m == nil || m[1] != "127.0.0.1" {
		t.Errorf("the bridge's SDP answer has connection address %v, want 127.0.0.1", m)
	}
	if log := phone.Log(); !strings.Contains(log, "receiving from 127.0.0.1:") {
		t.Errorf("phone's RTP does not come from 127.0.0.1:\n%s", log)
	}
	// Both ways: the room hears the phone's 440 Hz, the phone the room's 1 kHz.
	inRoom := heardRoom(b, invite)
	if got := sipphone.ToneLevel(inRoom, phoneHz); got < 0.05 {
		t.Errorf("the room heard the phone's %d Hz at %.3f of full scale over %d samples, want its tone", phoneHz, got, len(inRoom.Samples))
	}
	heard, err := phone.Heard()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the room heard %d Hz at %.3f (%d Hz at %.3f); the phone heard %d Hz at %.3f (%d Hz at %.3f)",
		phoneHz, sipphone.ToneLevel(inRoom, phoneHz), roomHz, sipphone.ToneLevel(inRoom, roomHz),
		roomHz, sipphone.ToneLevel(heard, roomHz), phoneHz, sipphone.ToneLevel(heard, phoneHz))
	if got := sipphone.ToneLevel(heard, roomHz); got < 0.05 {
		t.Errorf("the phone heard the room's %d Hz at %.3f of full scale, want its tone (the recording is %.3f loud)", roomHz, got, sipphone.Loudest(heard, 20*time.Millisecond))
	}

	bye := time.Now()
	if err := phone.Hangup(ctx); err != nil {
		t.Fatal(err)
	}
	w.until(ctx, t, "the SIP participant to leave after the phone's BYE", func() bool { return !w.left[id].IsZero() })
	w.mu.Lock()
	gone := w.left[id]
	w.mu.Unlock()
	if gone.Before(bye) {
		t.Errorf("the SIP participant left %v before the phone hung up", bye.Sub(gone))
	}
	t.Logf("BYE to SIP participant gone: %v", gone.Sub(bye).Round(time.Millisecond))
}

// TestOutboundCallAndTransfer: CreateSIPParticipant rings a phone through an outbound
// trunk and returns once it answered; TransferSIPParticipant sends that phone a REFER,
// which it follows to a third phone, and the bridge's leg leaves the room;
// RemoveParticipant hangs another outbound call up with a BYE.
func TestOutboundCallAndTransfer(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	r.room(ctx, t, "ses_outbound")
	w := r.watch(t, "ses_outbound")
	r.bot(ctx, t, "ses_outbound")
	callee := r.phone(ctx, t, sipphone.Config{Number: "+15557654321", Speak: r.tone, AutoAnswer: true})
	target := r.phone(ctx, t, sipphone.Config{Number: "+15550199999", AutoAnswer: true})
	trunk, err := r.lk.CreateSIPOutboundTrunk(ctx, rtc.SIPOutboundTrunk{Name: "to the phones", Address: callee.Address(),
		Transport: rtc.SIPTransportUDP, Numbers: []string{lineNumber}})
	if err != nil {
		t.Fatal(err)
	}
	dial := func(identity string) rtc.SIPParticipant {
		t.Helper()
		start := time.Now()
		p, err := r.lk.CreateSIPParticipant(ctx, rtc.SIPCall{TrunkID: trunk.ID, To: callee.Number(), From: lineNumber,
			Room: "ses_outbound", Identity: identity, WaitUntilAnswered: true, RingingTimeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("CreateSIPParticipant waiting for the answer: %v", time.Since(start).Round(time.Millisecond))
		if p.Identity != identity || p.Room != "ses_outbound" || p.CallID == "" {
			t.Errorf("CreateSIPParticipant = %+v, want %s in ses_outbound with a call id", p, identity)
		}
		return p
	}

	t.Run("RemoveParticipant hangs up", func(t *testing.T) {
		dial("callee-1")
		in, err := callee.Incoming(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := in.Next(ctx, "CALL_ESTABLISHED")
		if err != nil {
			t.Fatal(err)
		}
		if ev.PeerURI == "" || !strings.Contains(ev.PeerURI, lineNumber) {
			t.Errorf("the callee sees the call from %q, want the line's number %s", ev.PeerURI, lineNumber)
		}
		if err := r.lk.RemoveParticipant(ctx, "ses_outbound", "callee-1"); err != nil {
			t.Fatal(err)
		}
		if ev, err := in.Closed(ctx); err != nil || ev.Status() != 0 {
			t.Errorf("callee's call closed: %+v, %v; want a BYE from the bridge", ev, err)
		}
	})

	t.Run("REFER to a third phone", func(t *testing.T) {
		// livekit-sip v1.8.0 loses the phone's 202 when it comes back before the bridge
		// armed the REFER transaction's timers (its sipgo writes the request first, and a
		// phone on this machine answers within a millisecond): "transaction failed to
		// complete (0 intermediate responses)", and the bridge gives up on the transfer
		// (no BYE, the NOTIFYs unread) although the phone follows it. siptest runs the
		// bridge at TestNice so that this is rare, yet it still came in a CI run with the
		// machine nearly idle. When it does, the test checks what the phone did, hangs
		// both calls up and transfers a new call, up to three times; any other error, or
		// the race every time, fails it.
		for attempt := 1; ; attempt++ {
			identity := fmt.Sprintf("callee-2-%d", attempt)
			dial(identity)
			in, err := callee.Incoming(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := in.Next(ctx, "CALL_ESTABLISHED"); err != nil {
				t.Fatal(err)
			}
			w.until(ctx, t, identity+" in the room", func() bool { return !w.joined[identity].IsZero() })
			err = r.lk.TransferSIPParticipant(ctx, rtc.SIPTransfer{Room: "ses_outbound", Identity: identity,
				To: target.URI(), RingingTimeout: 15 * time.Second})
			lost := err != nil && strings.Contains(err.Error(), "transaction failed to complete (0 intermediate responses)")
			if err != nil && !lost {
				t.Fatal(err)
			}
			if ev, err := in.Next(ctx, "TRANSFER"); err != nil || !strings.Contains(ev.Param, target.Address()) {
				t.Errorf("callee's REFER: %+v, %v; want one naming %s", ev, err, target.URI())
			}
			moved, err := target.Incoming(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := moved.Next(ctx, "CALL_ESTABLISHED"); err != nil {
				t.Fatal(err)
			}
			if lost {
				t.Logf("attempt %d: TransferSIPParticipant: %v (livekit-sip lost the phone's answer to the REFER; the phone followed it)", attempt, err)
				if attempt == 3 {
					t.Fatal("livekit-sip lost the phone's answer to the REFER three times in a row")
				}
				if err := r.lk.RemoveParticipant(ctx, "ses_outbound", identity); err != nil {
					t.Fatal(err)
				}
				if _, err := in.Closed(ctx); err != nil {
					t.Fatalf("the bridge's leg of the lost transfer did not hang up: %v", err)
				}
				if err := target.Hangup(ctx); err != nil {
					t.Fatal(err)
				}
				if _, err := moved.Closed(ctx); err != nil {
					t.Fatalf("the target's call did not hang up: %v", err)
				}
				continue
			}
			if _, err := in.Closed(ctx); err != nil {
				t.Errorf("the callee's call to the bridge did not end after the transfer: %v", err)
			}
			w.until(ctx, t, identity+" to leave the room", func() bool { return !w.left[identity].IsZero() })
			return
		}
	})

	t.Run("transfer of nobody", func(t *testing.T) {
		err := r.lk.TransferSIPParticipant(ctx, rtc.SIPTransfer{Room: "ses_outbound", Identity: "nobody", To: target.URI()})
		if err == nil {
			t.Error("TransferSIPParticipant(nobody) = nil, want an error")
		}
	})
}

// TestRefusedCalls: a call whose source address no trunk allows, and calls without the
// trunk's credentials or with wrong ones, never reach the room. LiveKit's bridge drops a
// call no trunk matches without a final response (a flood, to it: port scanners learn
// nothing), so that caller hears ringing until it gives up; a call to a trunk with
// credentials is challenged and fails with the challenge's status.
func TestRefusedCalls(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r.room(ctx, t, "ses_open")
	r.room(ctx, t, "ses_closed")
	r.line(ctx, t, "ses_open")
	closed, err := r.lk.CreateSIPInboundTrunk(ctx, rtc.SIPInboundTrunk{Name: "provider only", Numbers: []string{closedNumber},
		AllowedAddresses: []string{"203.0.113.0/24"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.lk.CreateSIPDispatchRule(ctx, rtc.SIPDispatchRule{TrunkIDs: []string{closed.ID}, Room: "ses_closed"}); err != nil {
		t.Fatal(err)
	}
	open := r.watch(t, "ses_open")
	shut := r.watch(t, "ses_closed")
	dial := func(t *testing.T, number, user, pass string) (*sipphone.Phone, *sipphone.Call) {
		phone := r.phone(ctx, t, sipphone.Config{Number: "+15559990002", AuthUser: user, AuthPassword: pass})
		call, err := phone.Dial(ctx, "sip:"+number+"@"+r.e.SIP.SIPAddr())
		if err != nil {
			t.Fatal(err)
		}
		return phone, call
	}

	t.Run("source address not allowed: dropped", func(t *testing.T) {
		phone, call := dial(t, closedNumber, "", "")
		wait, stop := context.WithTimeout(ctx, 3*time.Second)
		ev, err := call.Next(wait, "CALL_CLOSED", "CALL_ESTABLISHED")
		stop()
		if err == nil {
			t.Fatalf("the bridge answered a call from an address no trunk allows: %s %q", ev.Type, ev.Param)
		}
		if err := phone.Hangup(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := call.Closed(ctx); err != nil {
			t.Fatal(err)
		}
	})
	for _, tc := range []struct{ name, user, pass string }{
		{"no credentials", "", ""},
		{"wrong password", trunkUser, "guess"},
	} {
		t.Run(tc.name+": refused", func(t *testing.T) {
			_, call := dial(t, lineNumber, tc.user, tc.pass)
			ev, err := call.Next(ctx, "CALL_CLOSED", "CALL_ESTABLISHED")
			if err != nil {
				t.Fatal(err)
			}
			if ev.Type != "CALL_CLOSED" || ev.Status() < 400 {
				t.Errorf("%s: %s %q, want a SIP failure", tc.name, ev.Type, ev.Param)
			}
			t.Logf("%s: the phone saw %q", tc.name, ev.Param)
		})
	}
	// Nothing reached either room: a SIP participant would have joined by now.
	time.Sleep(time.Second)
	for name, w := range map[string]*watcher{"ses_open": open, "ses_closed": shut} {
		w.mu.Lock()
		if len(w.joined) > 0 {
			t.Errorf("%s: participants joined: %v", name, w.joined)
		}
		w.mu.Unlock()
	}
}

// TestRoomsAreNeverMadeByACall: with room.auto_create off (as in every Bridgeline
// LiveKit config), a dispatch rule that names a room that does not exist, or a new room
// per call, puts no call anywhere: the room must exist before the call arrives.
func TestRoomsAreNeverMadeByACall(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	trunk, err := r.lk.CreateSIPInboundTrunk(ctx, rtc.SIPInboundTrunk{Name: "line", Numbers: []string{lineNumber}, AllowedAddresses: []string{"127.0.0.1/32"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.lk.CreateSIPDispatchRule(ctx, rtc.SIPDispatchRule{TrunkIDs: []string{trunk.ID}, RoomPrefix: "call"}); err != nil {
		t.Fatal(err)
	}
	phone := r.phone(ctx, t, sipphone.Config{Number: "+15559990003"})
	call, err := phone.Dial(ctx, "sip:"+lineNumber+"@"+r.e.SIP.SIPAddr())
	if err != nil {
		t.Fatal(err)
	}
	ev, err := call.Next(ctx, "CALL_CLOSED", "CALL_ESTABLISHED")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a call into a room that does not exist: %s %q", ev.Type, ev.Param)
	if ev.Type != "CALL_CLOSED" {
		t.Errorf("the call was %s, want it refused", ev.Type)
	}
	cfg := r.e.LiveKit.Config()
	rooms, err := lksdk.NewRoomServiceClient(r.e.LiveKit.HTTPURL(), cfg.APIKey, cfg.APISecret).ListRooms(ctx, &livekit.ListRoomsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rooms.Rooms) > 0 {
		t.Errorf("rooms after the call: %v, want none", rooms.Rooms)
	}
}

// TestAdminOnTheRealServer: the client's trunk and rule calls against livekit-server
// v1.11.0: create, replace, list and delete, and deleting twice.
func TestAdminOnTheRealServer(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in, err := r.lk.CreateSIPInboundTrunk(ctx, rtc.SIPInboundTrunk{Name: "a", Numbers: []string{lineNumber},
		AuthUsername: "u", AuthPassword: "p", RingingTimeout: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	in.Name, in.AllowedAddresses = "b", []string{"198.51.100.7/32"}
	if got, err := r.lk.UpdateSIPInboundTrunk(ctx, in); err != nil || got.Name != "b" || !slices.Equal(got.AllowedAddresses, in.AllowedAddresses) ||
		got.RingingTimeout != 15*time.Second || got.ID != in.ID {
		t.Errorf("UpdateSIPInboundTrunk = %+v, %v", got, err)
	}
	out, err := r.lk.CreateSIPOutboundTrunk(ctx, rtc.SIPOutboundTrunk{Name: "o", Address: "sip.example.com", Transport: rtc.SIPTransportTCP, Numbers: []string{lineNumber}})
	if err != nil {
		t.Fatal(err)
	}
	out.Transport = rtc.SIPTransportTLS
	if got, err := r.lk.UpdateSIPOutboundTrunk(ctx, out); err != nil || got.Transport != rtc.SIPTransportTLS {
		t.Errorf("UpdateSIPOutboundTrunk = %+v, %v", got, err)
	}
	rule, err := r.lk.CreateSIPDispatchRule(ctx, rtc.SIPDispatchRule{TrunkIDs: []string{in.ID}, Room: "lobby"})
	if err != nil {
		t.Fatal(err)
	}
	rule.Room, rule.RoomPrefix = "", "call"
	if got, err := r.lk.UpdateSIPDispatchRule(ctx, rule); err != nil || got.RoomPrefix != "call" || got.Room != "" {
		t.Errorf("UpdateSIPDispatchRule = %+v, %v", got, err)
	}
	ins, err1 := r.lk.ListSIPInboundTrunks(ctx)
	outs, err2 := r.lk.ListSIPOutboundTrunks(ctx)
	rules, err3 := r.lk.ListSIPDispatchRules(ctx)
	if err1 != nil || err2 != nil || err3 != nil || len(ins) != 1 || ins[0].AuthPassword != "p" || len(outs) != 1 || len(rules) != 1 || rules[0].RoomPrefix != "call" {
		t.Errorf("lists = %+v %+v %+v (%v %v %v)", ins, outs, rules, err1, err2, err3)
	}
	for range 2 {
		if err := r.lk.DeleteSIPDispatchRule(ctx, rule.ID); err != nil {
			t.Errorf("DeleteSIPDispatchRule = %v", err)
		}
		if err := r.lk.DeleteSIPTrunk(ctx, in.ID); err != nil {
			t.Errorf("DeleteSIPTrunk = %v", err)
		}
	}
	if err := r.lk.DeleteSIPTrunk(ctx, out.ID); err != nil {
		t.Error(err)
	}
	if _, err := r.lk.UpdateSIPInboundTrunk(ctx, in); !errors.Is(err, lkhttp.ErrNotFound) {
		t.Errorf("UpdateSIPInboundTrunk(deleted) = %v, want ErrNotFound", err)
	}
	ins, _ = r.lk.ListSIPInboundTrunks(ctx)
	rules, _ = r.lk.ListSIPDispatchRules(ctx)
	if len(ins) != 0 || len(rules) != 0 {
		t.Errorf("after delete: %d trunks, %d rules", len(ins), len(rules))
	}
}
