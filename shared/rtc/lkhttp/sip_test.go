package lkhttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/livekit/protocol/livekit"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/bridgeline/bridgeline/shared/lktoken"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/rtc/lkhttp"
)

// sipWire is one Twirp method as the test server sees it: the request type it decodes
// (protocol v1.49.0's, unknown fields refused), what it checks in it, and its answer.
type sipWire struct {
	req    proto.Message
	check  func(t *testing.T, m proto.Message)
	answer proto.Message
	status int // non-zero: answer this Twirp error status instead
}

// sipServer answers Twirp JSON calls of the SIP service with wires[method], checking
// the token's grants.
func sipServer(t *testing.T, wires map[string]sipWire) *lkhttp.Client {
	t.Helper()
	const key, secret = "APIsip", "sip-secret-sip-secret-sip-secret-0123"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method, ok := strings.CutPrefix(r.URL.Path, "/twirp/livekit.SIP/")
		wire, known := wires[method]
		if !ok || !known {
			t.Errorf("unexpected call %s", r.URL.Path)
			http.Error(w, `{"code":"bad_route","msg":"no"}`, http.StatusNotFound)
			return
		}
		claims, err := lktoken.Verify(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), lktoken.KeyPair(key, secret))
		if err != nil || claims.SIP == nil {
			t.Errorf("%s: token %+v, %v; want a SIP grant", method, claims, err)
		} else {
			admin := strings.Contains(method, "Trunk") || strings.Contains(method, "DispatchRule")
			if claims.SIP.Admin != admin || claims.SIP.Call == admin {
				t.Errorf("%s: SIP grant %+v, want admin %v, call %v", method, *claims.SIP, admin, !admin)
			}
			if method == "TransferSIPParticipant" && (claims.Video == nil || !claims.Video.RoomAdmin || claims.Video.Room != "ses_1") {
				t.Errorf("%s: video grant %+v, want roomAdmin on ses_1", method, claims.Video)
			}
		}
		body, _ := io.ReadAll(r.Body)
		m := wire.req.ProtoReflect().New().Interface()
		if err := (protojson.UnmarshalOptions{DiscardUnknown: false}).Unmarshal(body, m); err != nil {
			t.Errorf("%s: %s does not decode as livekit.%T: %v", method, body, wire.req, err)
		} else if wire.check != nil {
			wire.check(t, m)
		}
		if wire.status != 0 {
			w.WriteHeader(wire.status)
			io.WriteString(w, `{"code":"not_found","msg":"object cannot be found"}`)
			return
		}
		// What livekit-server's Twirp handlers write: proto field names, defaults emitted.
		out, _ := (protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}).Marshal(wire.answer)
		w.Header().Set("Content-Type", "application/json")
		w.Write(out)
	}))
	t.Cleanup(srv.Close)
	c, err := lkhttp.New(lkhttp.Config{URL: srv.URL, PublicURL: "ws://127.0.0.1:1", APIKey: key, APISecret: secret})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSIPTrunks(t *testing.T) {
	ctx := context.Background()
	in := rtc.SIPInboundTrunk{Name: "acme", Numbers: []string{"+15550100001"}, AllowedAddresses: []string{"203.0.113.0/24"},
		AuthUsername: "acme", AuthPassword: "s3cret", RingingTimeout: 20 * time.Second, MaxCallDuration: 90 * time.Minute,
		MediaEncryption: rtc.SIPEncryptAllow}
	storedIn := &livekit.SIPInboundTrunkInfo{SipTrunkId: "ST_in", Name: "acme", Numbers: in.Numbers,
		AllowedAddresses: in.AllowedAddresses, AuthUsername: "acme", AuthPassword: "s3cret",
		RingingTimeout: durationpb.New(20 * time.Second), MaxCallDuration: durationpb.New(90 * time.Minute),
		MediaEncryption: livekit.SIPMediaEncryption_SIP_MEDIA_ENCRYPT_ALLOW}
	checkIn := func(t *testing.T, got *livekit.SIPInboundTrunkInfo) {
		if got.GetName() != "acme" || !reflect.DeepEqual(got.GetNumbers(), in.Numbers) || !reflect.DeepEqual(got.GetAllowedAddresses(), in.AllowedAddresses) ||
			got.GetAuthUsername() != "acme" || got.GetAuthPassword() != "s3cret" ||
			got.GetRingingTimeout().AsDuration() != 20*time.Second || got.GetMaxCallDuration().AsDuration() != 90*time.Minute ||
			got.GetMediaEncryption() != livekit.SIPMediaEncryption_SIP_MEDIA_ENCRYPT_ALLOW {
			t.Errorf("inbound trunk sent = %v", got)
		}
	}
	out := rtc.SIPOutboundTrunk{Name: "acme out", Address: "sip.example.com:5061", Transport: rtc.SIPTransportTLS,
		Numbers: []string{"+15550100001"}, AuthUsername: "u", AuthPassword: "p", MediaEncryption: rtc.SIPEncryptRequire}
	storedOut := &livekit.SIPOutboundTrunkInfo{SipTrunkId: "ST_out", Name: "acme out", Address: out.Address,
		Transport: livekit.SIPTransport_SIP_TRANSPORT_TLS, Numbers: out.Numbers, AuthUsername: "u", AuthPassword: "p",
		MediaEncryption: livekit.SIPMediaEncryption_SIP_MEDIA_ENCRYPT_REQUIRE}
	checkOut := func(t *testing.T, got *livekit.SIPOutboundTrunkInfo) {
		if got.GetAddress() != out.Address || got.GetTransport() != livekit.SIPTransport_SIP_TRANSPORT_TLS ||
			!reflect.DeepEqual(got.GetNumbers(), out.Numbers) || got.GetAuthUsername() != "u" || got.GetAuthPassword() != "p" ||
			got.GetMediaEncryption() != livekit.SIPMediaEncryption_SIP_MEDIA_ENCRYPT_REQUIRE {
			t.Errorf("outbound trunk sent = %v", got)
		}
	}
	c := sipServer(t, map[string]sipWire{
		"CreateSIPInboundTrunk": {req: &livekit.CreateSIPInboundTrunkRequest{}, answer: storedIn,
			check: func(t *testing.T, m proto.Message) { checkIn(t, m.(*livekit.CreateSIPInboundTrunkRequest).GetTrunk()) }},
		"UpdateSIPInboundTrunk": {req: &livekit.UpdateSIPInboundTrunkRequest{}, answer: storedIn,
			check: func(t *testing.T, m proto.Message) {
				r := m.(*livekit.UpdateSIPInboundTrunkRequest)
				if r.GetSipTrunkId() != "ST_in" {
					t.Errorf("update trunk id = %q", r.GetSipTrunkId())
				}
				checkIn(t, r.GetReplace())
			}},
		"ListSIPInboundTrunk": {req: &livekit.ListSIPInboundTrunkRequest{}, answer: &livekit.ListSIPInboundTrunkResponse{Items: []*livekit.SIPInboundTrunkInfo{storedIn}}},
		"CreateSIPOutboundTrunk": {req: &livekit.CreateSIPOutboundTrunkRequest{}, answer: storedOut,
			check: func(t *testing.T, m proto.Message) {
				checkOut(t, m.(*livekit.CreateSIPOutboundTrunkRequest).GetTrunk())
			}},
		"UpdateSIPOutboundTrunk": {req: &livekit.UpdateSIPOutboundTrunkRequest{}, answer: storedOut,
			check: func(t *testing.T, m proto.Message) {
				checkOut(t, m.(*livekit.UpdateSIPOutboundTrunkRequest).GetReplace())
			}},
		"ListSIPOutboundTrunk": {req: &livekit.ListSIPOutboundTrunkRequest{}, answer: &livekit.ListSIPOutboundTrunkResponse{Items: []*livekit.SIPOutboundTrunkInfo{storedOut}}},
		"DeleteSIPTrunk": {req: &livekit.DeleteSIPTrunkRequest{}, status: http.StatusNotFound,
			check: func(t *testing.T, m proto.Message) {
				if m.(*livekit.DeleteSIPTrunkRequest).GetSipTrunkId() != "ST_gone" {
					t.Errorf("delete = %v", m)
				}
			}},
	})
	gotIn, err := c.CreateSIPInboundTrunk(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	wantIn := in
	wantIn.ID = "ST_in"
	if !reflect.DeepEqual(gotIn, wantIn) {
		t.Errorf("CreateSIPInboundTrunk = %+v, want %+v", gotIn, wantIn)
	}
	if _, err := c.UpdateSIPInboundTrunk(ctx, wantIn); err != nil {
		t.Fatal(err)
	}
	if list, err := c.ListSIPInboundTrunks(ctx); err != nil || len(list) != 1 || !reflect.DeepEqual(list[0], wantIn) {
		t.Errorf("ListSIPInboundTrunks = %+v, %v", list, err)
	}
	gotOut, err := c.CreateSIPOutboundTrunk(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	wantOut := out
	wantOut.ID = "ST_out"
	if !reflect.DeepEqual(gotOut, wantOut) {
		t.Errorf("CreateSIPOutboundTrunk = %+v, want %+v", gotOut, wantOut)
	}
	if _, err := c.UpdateSIPOutboundTrunk(ctx, wantOut); err != nil {
		t.Fatal(err)
	}
	if list, err := c.ListSIPOutboundTrunks(ctx); err != nil || len(list) != 1 || !reflect.DeepEqual(list[0], wantOut) {
		t.Errorf("ListSIPOutboundTrunks = %+v, %v", list, err)
	}
	// Deleting what is gone is done: a retry after a step that half failed.
	if err := c.DeleteSIPTrunk(ctx, "ST_gone"); err != nil {
		t.Errorf("DeleteSIPTrunk(gone) = %v, want nil", err)
	}
	for _, bad := range []rtc.SIPOutboundTrunk{{Address: "sip:x.example.com"}, {Address: ""}, {Address: "x.example.com", Transport: "sctp"},
		{Address: "x.example.com", MediaEncryption: "sometimes"}} {
		if _, err := c.CreateSIPOutboundTrunk(ctx, bad); err == nil {
			t.Errorf("CreateSIPOutboundTrunk(%+v) = nil error", bad)
		}
	}
}

func TestSIPDispatchRules(t *testing.T) {
	ctx := context.Background()
	direct := &livekit.SIPDispatchRuleInfo{SipDispatchRuleId: "SDR_1", TrunkIds: []string{"ST_in"}, Name: "line",
		Attributes: map[string]string{"bridgeline.line": "line_1"},
		Rule:       &livekit.SIPDispatchRule{Rule: &livekit.SIPDispatchRule_DispatchRuleDirect{DispatchRuleDirect: &livekit.SIPDispatchRuleDirect{RoomName: "lobby"}}}}
	individual := &livekit.SIPDispatchRuleInfo{SipDispatchRuleId: "SDR_2",
		Rule: &livekit.SIPDispatchRule{Rule: &livekit.SIPDispatchRule_DispatchRuleIndividual{DispatchRuleIndividual: &livekit.SIPDispatchRuleIndividual{RoomPrefix: "call"}}}}
	c := sipServer(t, map[string]sipWire{
		"CreateSIPDispatchRule": {req: &livekit.CreateSIPDispatchRuleRequest{}, answer: direct,
			check: func(t *testing.T, m proto.Message) {
				r := m.(*livekit.CreateSIPDispatchRuleRequest).GetDispatchRule()
				if r.GetRule().GetDispatchRuleDirect().GetRoomName() != "lobby" || !reflect.DeepEqual(r.GetTrunkIds(), []string{"ST_in"}) ||
					r.GetAttributes()["bridgeline.line"] != "line_1" {
					t.Errorf("dispatch rule sent = %v", r)
				}
			}},
		"UpdateSIPDispatchRule": {req: &livekit.UpdateSIPDispatchRuleRequest{}, answer: individual,
			check: func(t *testing.T, m proto.Message) {
				r := m.(*livekit.UpdateSIPDispatchRuleRequest)
				if r.GetSipDispatchRuleId() != "SDR_2" || r.GetReplace().GetRule().GetDispatchRuleIndividual().GetRoomPrefix() != "call" {
					t.Errorf("dispatch rule update sent = %v", r)
				}
			}},
		"ListSIPDispatchRule":   {req: &livekit.ListSIPDispatchRuleRequest{}, answer: &livekit.ListSIPDispatchRuleResponse{Items: []*livekit.SIPDispatchRuleInfo{direct, individual}}},
		"DeleteSIPDispatchRule": {req: &livekit.DeleteSIPDispatchRuleRequest{}, answer: direct},
	})
	want := rtc.SIPDispatchRule{ID: "SDR_1", TrunkIDs: []string{"ST_in"}, Name: "line", Room: "lobby", Attributes: map[string]string{"bridgeline.line": "line_1"}}
	got, err := c.CreateSIPDispatchRule(ctx, rtc.SIPDispatchRule{TrunkIDs: want.TrunkIDs, Name: "line", Room: "lobby", Attributes: want.Attributes})
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("CreateSIPDispatchRule = %+v, %v; want %+v", got, err, want)
	}
	if got, err := c.UpdateSIPDispatchRule(ctx, rtc.SIPDispatchRule{ID: "SDR_2", RoomPrefix: "call"}); err != nil || got.RoomPrefix != "call" || got.Room != "" {
		t.Errorf("UpdateSIPDispatchRule = %+v, %v", got, err)
	}
	list, err := c.ListSIPDispatchRules(ctx)
	if err != nil || len(list) != 2 || list[0].Room != "lobby" || list[1].RoomPrefix != "call" {
		t.Errorf("ListSIPDispatchRules = %+v, %v", list, err)
	}
	if err := c.DeleteSIPDispatchRule(ctx, "SDR_1"); err != nil {
		t.Error(err)
	}
	for _, bad := range []rtc.SIPDispatchRule{{}, {Room: "a", RoomPrefix: "b"}} {
		if _, err := c.CreateSIPDispatchRule(ctx, bad); err == nil {
			t.Errorf("CreateSIPDispatchRule(%+v) = nil error", bad)
		}
	}
}

func TestSIPCalls(t *testing.T) {
	ctx := context.Background()
	c := sipServer(t, map[string]sipWire{
		"CreateSIPParticipant": {req: &livekit.CreateSIPParticipantRequest{},
			answer: &livekit.SIPParticipantInfo{ParticipantId: "PA_1", ParticipantIdentity: "callee", RoomName: "ses_1", SipCallId: "SCL_1"},
			check: func(t *testing.T, m proto.Message) {
				r := m.(*livekit.CreateSIPParticipantRequest)
				if r.GetSipTrunkId() != "ST_out" || r.GetSipCallTo() != "+15557654321" || r.GetSipNumber() != "+15550100001" ||
					r.GetRoomName() != "ses_1" || r.GetParticipantIdentity() != "callee" || !r.GetWaitUntilAnswered() ||
					r.GetRingingTimeout().AsDuration() != 25*time.Second || r.GetParticipantAttributes()["a"] != "b" {
					t.Errorf("CreateSIPParticipant sent = %v", r)
				}
			}},
		"TransferSIPParticipant": {req: &livekit.TransferSIPParticipantRequest{}, answer: &livekit.SIPParticipantInfo{},
			check: func(t *testing.T, m proto.Message) {
				r := m.(*livekit.TransferSIPParticipantRequest)
				if r.GetRoomName() != "ses_1" || r.GetParticipantIdentity() != "callee" || r.GetTransferTo() != "sip:+15550199999@pbx.example.com" ||
					r.GetRingingTimeout().AsDuration() != 1500*time.Millisecond {
					t.Errorf("TransferSIPParticipant sent = %v", r)
				}
			}},
	})
	p, err := c.CreateSIPParticipant(ctx, rtc.SIPCall{TrunkID: "ST_out", To: "+15557654321", From: "+15550100001", Room: "ses_1",
		Identity: "callee", Attributes: map[string]string{"a": "b"}, WaitUntilAnswered: true, RingingTimeout: 25 * time.Second})
	want := rtc.SIPParticipant{ParticipantID: "PA_1", Identity: "callee", Room: "ses_1", CallID: "SCL_1"}
	if err != nil || p != want {
		t.Errorf("CreateSIPParticipant = %+v, %v; want %+v", p, err, want)
	}
	if err := c.TransferSIPParticipant(ctx, rtc.SIPTransfer{Room: "ses_1", Identity: "callee", To: "sip:+15550199999@pbx.example.com",
		RingingTimeout: 1500 * time.Millisecond}); err != nil {
		t.Error(err)
	}
	for _, bad := range []rtc.SIPCall{
		{TrunkID: "ST_out", Trunk: &rtc.SIPOutboundConfig{Address: "sip.example.com"}, To: "+1", From: "+2", Room: "r"},
		{Trunk: &rtc.SIPOutboundConfig{Address: "sip.example.com"}, To: "+1", Room: "r"},
		{Trunk: &rtc.SIPOutboundConfig{Address: "sip:sip.example.com"}, To: "+1", From: "+2", Room: "r"},
	} {
		if _, err := c.CreateSIPParticipant(ctx, bad); err == nil {
			t.Errorf("CreateSIPParticipant(%+v) = nil error", bad)
		}
	}
	if _, err := c.CreateSIPParticipant(ctx, rtc.SIPCall{To: "+1"}); err == nil {
		t.Error("CreateSIPParticipant without a trunk = nil error")
	}
	if err := c.TransferSIPParticipant(ctx, rtc.SIPTransfer{Room: "ses_1"}); err == nil {
		t.Error("TransferSIPParticipant without a destination = nil error")
	}
}

func TestSIPNotFound(t *testing.T) {
	c := sipServer(t, map[string]sipWire{
		"UpdateSIPInboundTrunk": {req: &livekit.UpdateSIPInboundTrunkRequest{}, status: http.StatusNotFound},
	})
	_, err := c.UpdateSIPInboundTrunk(context.Background(), rtc.SIPInboundTrunk{ID: "ST_gone", Numbers: []string{"+15550100001"}})
	if !errors.Is(err, lkhttp.ErrNotFound) {
		t.Errorf("UpdateSIPInboundTrunk(gone) = %v, want ErrNotFound", err)
	}
}

// TestSIPCallWithItsOwnTrunk: a call given its trunk sends it as CreateSIPParticipant's
// trunk (livekit.SIPOutboundConfig, credentials included) with its media encryption,
// and no stored trunk's id.
func TestSIPCallWithItsOwnTrunk(t *testing.T) {
	ctx := context.Background()
	c := sipServer(t, map[string]sipWire{
		"CreateSIPParticipant": {req: &livekit.CreateSIPParticipantRequest{},
			answer: &livekit.SIPParticipantInfo{ParticipantId: "PA_2", ParticipantIdentity: "callee", RoomName: "ses_2", SipCallId: "SCL_2"},
			check: func(t *testing.T, m proto.Message) {
				r := m.(*livekit.CreateSIPParticipantRequest)
				tr := r.GetTrunk()
				if r.GetSipTrunkId() != "" || tr.GetHostname() != "acme.pstn.twilio.com:5061" || tr.GetTransport() != livekit.SIPTransport_SIP_TRANSPORT_TLS ||
					tr.GetAuthUsername() != "acme-out" || tr.GetAuthPassword() != "s3cret-pass" || r.GetSipNumber() != "+15550100001" ||
					r.GetMediaEncryption() != livekit.SIPMediaEncryption_SIP_MEDIA_ENCRYPT_ALLOW {
					t.Errorf("CreateSIPParticipant sent = %v", r)
				}
			}},
	})
	p, err := c.CreateSIPParticipant(ctx, rtc.SIPCall{Trunk: &rtc.SIPOutboundConfig{Address: "acme.pstn.twilio.com:5061",
		Transport: rtc.SIPTransportTLS, AuthUsername: "acme-out", AuthPassword: "s3cret-pass", MediaEncryption: rtc.SIPEncryptAllow},
		To: "+15557654321", From: "+15550100001", Room: "ses_2", Identity: "callee"})
	if err != nil || p.CallID != "SCL_2" {
		t.Errorf("CreateSIPParticipant = %+v, %v", p, err)
	}
}
