package lambda_test

// platform-sip under the Lambda runtime: the SIP gateway's notifications, signed as
// mediafleet/sipgateway signs them, reach the function as the private InternalApi
// delivers them (a REST API event, payload 1.0).

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	lkauth "github.com/livekit/protocol/auth"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/mediafleet/livekitserver"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/simhook"
	"github.com/bridgeline/bridgeline/shared/platform/sip"
	"github.com/bridgeline/bridgeline/shared/session"
)

// testSIPSecret is the SIP gateway's secret, where template.yaml's SIPCredentials holds it.
const testSIPSecret = "functions-test-sip-gateway-secret-0123456789"

// withSIPSecret puts the SIP gateway's secret in Secrets Manager, as template.yaml's
// SIPCredentials holds it (before platform-sip starts).
func (s *stack) withSIPSecret() {
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	sm := secretsmanager.NewFromConfig(cfg, func(o *secretsmanager.Options) { o.BaseEndpoint = aws.String(s.motoURL) })
	out, err := sm.CreateSecret(s.ctx, &secretsmanager.CreateSecretInput{Name: aws.String("bridgeline-test-sip"),
		SecretString: aws.String(testSIPSecret)})
	if err != nil {
		s.t.Fatal(err)
	}
	s.refs["SIPCredentials"] = aws.ToString(out.ARN)
}

// sipNotify posts one gateway notification to platform-sip, signed with secret as the
// gateway signs it, and returns the function's status and body.
func (s *stack) sipNotify(secret string, n platform.Notification) (int, []byte) {
	body, err := json.Marshal(n)
	if err != nil {
		s.t.Fatal(err)
	}
	resp := s.call(request{fn: "platform-sip", method: http.MethodPost, pattern: sip.Path, path: sip.Path, body: string(body),
		headers: map[string]string{"Content-Type": "application/json",
			simhook.Header: simhook.Sign(secret, simhook.ToControlPlane, http.MethodPost, sip.Path, body, time.Now())}})
	return resp.status, resp.body
}

// sipScenario: a SIP trunk and a SIP line with the assistant asstID, made through the
// API; a call to the line as the gateway reports it while it holds the bridge's room
// join: platform-sip answers with the session's room and a token for it and records the
// call (platform sip, from, to); a replayed notification is refused, one signed with
// another secret is 401. The customer transfers the call: calls-transfer answers 202 with
// the transfer pending and queues it, call-transfers runs it and records its outcome
// (failed here: no bridge put the call's leg in the room), and tells the room, where the
// assistant's worker would hear it (a participant here). Then the assistant's
// transfer_call: persona-transfer answers 202 pending and queues it the same way, and
// call-transfers' failure reaches the room again. The gateway's hangup then ends the
// call as a remote hang-up.
func (s *stack) sipScenario(lk *livekitserver.Server, auth map[string]any, asstID string) {
	t := s.t
	const to, from = "+15550106666", "+15550107777"
	post := func(fn, pattern, path, body string) request {
		return request{fn: fn, method: http.MethodPost, pattern: pattern, path: path, body: body, auth: auth,
			headers: map[string]string{"Content-Type": "application/json", "Idempotency-Key": ident.New("idem")}}
	}
	tr := s.expect(post("sip-trunks-create", "/v1/sip_trunks", "/v1/sip_trunks",
		`{"name":"Carrier","inbound":{"allowed_addresses":["198.51.100.0/24"]},"outbound":{"address":"198.51.100.20","transport":"tcp"}}`),
		http.StatusCreated)
	s.expect(post("lines-create", "/v1/lines", "/v1/lines",
		`{"platform":"sip","handle":"`+to+`","sip_trunk_id":"`+tr["id"].(string)+`","assistant_id":"`+asstID+`"}`), http.StatusCreated)

	pcid := "SCL_" + strings.ToLower(ident.New("x")[2:14])
	in := platform.Notification{ID: ident.New("sipevt"), Event: platform.EventInbound, PlatformCallID: pcid,
		From: from, To: to, Media: platform.MediaAudio, At: time.Now().UTC(), Trunk: tr["id"].(string)}
	if st, body := s.sipNotify("another-secret-of-the-right-length-0123456789", in); st != http.StatusUnauthorized {
		t.Errorf("notification signed with another secret = %d %s, want 401", st, body)
	}
	st, body := s.sipNotify(testSIPSecret, in)
	if st != http.StatusOK {
		t.Fatalf("inbound notification = %d %s, want 200; log:\n%s", st, body, s.proc("platform-sip").Output())
	}
	var reply sip.InboundReply
	if err := json.Unmarshal(body, &reply); err != nil {
		t.Fatal(err)
	}
	if reply.Answer == nil || reply.CallID == "" || reply.Answer.Token == "" || reply.Answer.Name == "" || reply.Reject != "" {
		t.Fatalf("inbound reply = %+v, want the call answered into a room with a token", reply)
	}
	c, err := s.store.GetCall(s.ctx, reply.CallID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Platform != sip.Name || c.From != from || c.To != to || c.PlatformCallID != pcid || c.SessionID != reply.Answer.Name ||
		c.Direction != call.Inbound || c.Status != call.StatusActive {
		t.Errorf("call = %+v, want active inbound on sip from %s to %s, platform call %s, in room %s", c, from, to, pcid, reply.Answer.Name)
	}
	if st, _ := s.sipNotify(testSIPSecret, in); st != http.StatusConflict {
		t.Errorf("replayed inbound notification = %d, want 409", st)
	}

	// A participant in the call's room, where the assistant's worker would be, to hear the
	// control plane's notices.
	notices := s.listenTransferNotices(lk, c.SessionID)

	// The transfer: 202 at once, pending, and one job on the transfer queue.
	accepted := s.expect(post("calls-transfer", "/v1/calls/{id}/transfer", "/v1/calls/"+c.ID+"/transfer", `{"to":"+15550109999"}`),
		http.StatusAccepted)
	if tr, _ := accepted["transfer"].(map[string]any); tr["status"] != call.TransferPending || tr["to"] != "+15550109999" {
		t.Errorf("transfer answer = %v, want the transfer pending to +15550109999", accepted)
	}
	s.runTransferJob(c.ID, notices, "customer")

	// The assistant's transfer_call: persona-transfer queues it (202 pending) instead of
	// waiting for the destination, and call-transfers runs it.
	tbody, _ := json.Marshal(persona.TransferRequest{CallID: c.ID, To: "+15550109999"})
	tauth, err := persona.SignReport(tbody, testReportSecret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pending := s.expect(request{fn: "persona-transfer", method: http.MethodPost, pattern: persona.TransferPath, path: persona.TransferPath,
		body: string(tbody), headers: map[string]string{"Content-Type": "application/json", "Authorization": tauth}}, http.StatusAccepted)
	if pending["pending"] != true {
		t.Errorf("the worker's transfer answered %v, want {pending: true}", pending)
	}
	if rec, _ := s.store.GetCall(s.ctx, c.ID); rec.Transfer == nil || rec.Transfer.Status != call.TransferPending || rec.Transfer.By != "assistant" {
		t.Errorf("call after the worker's transfer = transfer %+v, want pending, by the assistant", rec.Transfer)
	}
	s.runTransferJob(c.ID, notices, "assistant")

	// The phone hangs up (or, transferred, its leg is gone): the gateway says so.
	bye := platform.Notification{ID: ident.New("sipevt"), Event: platform.EventHangup, PlatformCallID: pcid, CallID: reply.CallID,
		From: from, To: to, Media: platform.MediaAudio, At: time.Now().UTC(), Trunk: tr["id"].(string)}
	if st, body := s.sipNotify(testSIPSecret, bye); st != http.StatusOK {
		t.Fatalf("hangup notification = %d %s, want 200; log:\n%s", st, body, s.proc("platform-sip").Output())
	}
	ses, err := s.store.GetSession(s.ctx, reply.Answer.Name)
	if err != nil {
		t.Fatal(err)
	}
	if ses.Status != session.StatusEnded || ses.EndReason != call.ReasonRemoteHangup {
		t.Errorf("session after the hangup = %s (%s), want ended, %s", ses.Status, ses.EndReason, call.ReasonRemoteHangup)
	}
}

// runTransferJob takes the one job on the transfer queue, for callID, and has
// call-transfers run it. LiveKit finds no SIP participant in the room (no bridge joined
// it here): the transfer is recorded failed, the call goes on, and the failure is told
// in the room (notices) as asked by by.
func (s *stack) runTransferJob(callID string, notices <-chan persona.TransferNotice, by string) {
	t := s.t
	job := s.receive("TransferQueue")
	var queued session.TransferJob
	if err := json.Unmarshal([]byte(job), &queued); err != nil || queued.CallID != callID {
		t.Fatalf("transfer job = %s (%v), want one for call %s", job, err, callID)
	}
	ev := readJSON(t, "sqs-from-eventbridge.json")
	ev["Records"].([]any)[0].(map[string]any)["body"] = job
	var resp events.SQSEventResponse
	if err := json.Unmarshal(s.invoke("call-transfers", mustJSON(t, ev)), &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 0 {
		t.Errorf("call-transfers failures: %+v; log:\n%s", resp.BatchItemFailures, s.proc("call-transfers").Output())
	}
	after, err := s.store.GetCall(s.ctx, callID)
	if err != nil {
		t.Fatal(err)
	}
	const failure = "the call was no longer in progress"
	if after.Transfer == nil || after.Transfer.Status != call.TransferFailed || after.Transfer.Failure != failure ||
		after.Status != call.StatusActive {
		t.Errorf("call after call-transfers = %s, transfer %+v; want active with the transfer failed (no longer in progress); log:\n%s",
			after.Status, after.Transfer, s.proc("call-transfers").Output())
	}
	select {
	case n := <-notices:
		if n.CallID != callID || n.Status != persona.TransferFailed || n.Failure != failure || n.By != by || !n.RequestedAt.Equal(queued.RequestedAt) {
			t.Errorf("notice in the room = %+v, want call %s's transfer by the %s failed (%s)", n, callID, by, failure)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("no notice of the failed transfer in the room; log:\n%s", s.proc("call-transfers").Output())
	}
}

// listenTransferNotices joins room as a participant and delivers the control plane's
// transfer notices sent there (persona.TransferTopic, from the server).
func (s *stack) listenTransferNotices(lk *livekitserver.Server, room string) <-chan persona.TransferNotice {
	t := s.t
	conf := lk.Config()
	tok, err := lkauth.NewAccessToken(conf.APIKey, conf.APISecret).SetIdentity("listener").
		SetVideoGrant(&lkauth.VideoGrant{RoomJoin: true, Room: room}).SetValidFor(10 * time.Minute).ToJWT()
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan persona.TransferNotice, 4)
	cb := lksdk.NewRoomCallback()
	cb.OnDataPacket = func(data lksdk.DataPacket, params lksdk.DataReceiveParams) {
		var n persona.TransferNotice
		if u, ok := data.(*lksdk.UserDataPacket); ok && u.Topic == persona.TransferTopic && params.SenderIdentity == "" &&
			json.Unmarshal(u.Payload, &n) == nil {
			out <- n
		}
	}
	r, err := lksdk.ConnectToRoomWithToken(lk.WSURL(), tok, cb, lksdk.WithAutoSubscribe(false))
	if err != nil {
		t.Fatalf("join room %s: %v", room, err)
	}
	t.Cleanup(r.Disconnect)
	return out
}
