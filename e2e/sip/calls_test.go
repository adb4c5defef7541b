package sip_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/e2e/sipphone"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/shared/call"
)

// incoming waits for the call.incoming of a call to the line and returns the call's id.
func (r *rig) incoming(t testing.TB, lineID string, after map[string]bool) string {
	t.Helper()
	var id string
	harness.WaitFor(t, 30*time.Second, "call.incoming", func() bool {
		var list struct {
			Data []struct {
				Data struct {
					CallID string `json:"call_id"`
					LineID string `json:"line_id"`
				} `json:"data"`
			} `json:"data"`
		}
		r.do(t, http.MethodGet, "/v1/events?type=call.incoming&limit=100", nil, &list)
		for _, e := range list.Data {
			if e.Data.LineID == lineID && !after[e.Data.CallID] {
				id = e.Data.CallID
				return true
			}
		}
		return false
	})
	return id
}

// receiver is a webhook endpoint of call.incoming that acknowledges it and leaves the
// decision to POST /v1/calls/{id}/answer; removed after the test.
func (r *rig) receiver(t testing.TB) *eventtest.Receiver {
	t.Helper()
	return r.endpoint(t, callevent.TypeCallIncoming)
}

// assistantSaid waits for the call.transcript event of the call's assistant turn that
// contains text: the turn's event comes once it played to the caller.
func assistantSaid(t testing.TB, turns *eventtest.Receiver, callID, text string) {
	t.Helper()
	turns.WaitFor(t, callevent.TypeCallTranscript, 30*time.Second, func(data json.RawMessage) bool {
		var turn callevent.CallTranscript
		json.Unmarshal(data, &turn)
		return turn.CallID == callID && turn.Speaker == "assistant" && strings.Contains(turn.Text, text)
	})
}

// endpoint is a webhook endpoint of the account's for events; removed after the test.
func (r *rig) endpoint(t testing.TB, events ...string) *eventtest.Receiver {
	t.Helper()
	recv := eventtest.NewReceiver(t)
	var ep struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	// A test key's endpoint: a live key's must use https.
	harness.Must(t, r.st.Do(t, http.MethodPost, "/v1/webhook_endpoints", map[string]any{"url": recv.URL, "events": events}, &ep),
		http.StatusCreated, "create endpoint")
	recv.SetSecret(ep.Secret)
	t.Cleanup(func() { r.st.Do(t, http.MethodDelete, "/v1/webhook_endpoints/"+ep.ID, nil, nil) })
	return recv
}

// endedWithin bounds call.ended after the caller reached the transfer's destination
// (the bridge hangs its leg up a second after the phone's NOTIFY, the worker reports,
// and call.ended goes out): the bound docs/deploy.md states.
const endedWithin = 5 * time.Second

// transferredTo waits for target to answer the transferred call and for the call's
// record to read transferred to it, completed, with call.ended within endedWithin of
// the answer, and no transfer.reported_error: the bridge we build never loses the
// phone's answer to the REFER (scripts/livekit-sip.patch).
func (r *rig) transferredTo(ctx context.Context, t *testing.T, target *sipphone.Phone, callID string) recordObj {
	t.Helper()
	moved, err := target.Incoming(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := moved.Next(ctx, "CALL_ESTABLISHED"); err != nil {
		t.Fatal(err)
	}
	reached := time.Now()
	rec, evt := r.ended(t, callID)
	if str(rec.EndReason) != "transferred" || rec.Transfer == nil || rec.Transfer.To != target.URI() || rec.Transfer.Status != "completed" {
		t.Fatalf("record end %q transfer %+v, want transferred to %s, completed", str(rec.EndReason), rec.Transfer, target.URI())
	}
	if rep := str(rec.Transfer.ReportedError); rep != "" {
		// The bridge we build reads every answer to its REFER (scripts/livekit-sip.patch).
		t.Errorf("the transfer went through with LiveKit's error %q: the bridge lost the phone's answer to the REFER", rep)
	}
	if late := evt.CreatedAt.Sub(reached); late > endedWithin {
		t.Errorf("call.ended %v after the destination answered, want within %v", late.Round(time.Millisecond), endedWithin)
	}
	return rec
}

// answered dials uri and wants the call answered.
func answered(ctx context.Context, t *testing.T, phone *sipphone.Phone, uri string) *sipphone.Call {
	t.Helper()
	out, err := phone.Dial(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := out.Next(ctx, "CALL_ESTABLISHED", "CALL_CLOSED"); err != nil || ev.Type != "CALL_ESTABLISHED" {
		t.Fatalf("the call: %+v %v, want it answered", ev, err)
	}
	return out
}

// refusedAtPhone dials the line and wants the call refused with 486 Busy Here, never
// answered.
func refusedAtPhone(ctx context.Context, t *testing.T, phone *sipphone.Phone, uri string, during func()) {
	t.Helper()
	c, err := phone.Dial(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	if during != nil {
		during()
	}
	ev, err := c.Next(ctx, "CALL_CLOSED", "CALL_ESTABLISHED")
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != "CALL_CLOSED" || ev.Status() != 486 {
		t.Errorf("the phone saw %s %q, want the call refused with 486 Busy Here", ev.Type, ev.Param)
	}
}

// TestInboundRefused: a disabled line, an account at its concurrent-session limit, and a
// customer_decides line whose customer declines or whose decision times out all refuse
// a phone's call with 486 Busy Here without answering it; a caller from an address the trunk does not allow never
// reaches a room and leaves no call record.
func TestInboundRefused(t *testing.T) {
	r := theRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	a := r.assistant(t, "Hello.", nil)
	tr := r.trunk(t, "")

	t.Run("disabled", func(t *testing.T) {
		l := r.line(t, "+15550170011", tr.ID, map[string]any{"inbound_mode": "disabled"})
		phone := r.phone(t, sipphone.Config{Number: "+15559990011"})
		refusedAtPhone(ctx, t, phone, r.dialURI(l.Handle), nil)
		c := r.callOf(t, l.ID, nil)
		if c.Platform != "sip" || c.Status != call.StatusDeclined || c.SessionID != nil {
			t.Errorf("record %+v, want a declined sip call without a session", c)
		}
		// livekit-sip logged the call at info level; its relay masked every number.
		if tail := r.st.SIP.LogTail(1 << 20); strings.Contains(tail, "5559990011") || strings.Contains(tail, "5550170011") {
			t.Errorf("livekit-sip's log holds a full number of the call:\n%s", tail)
		} else if !strings.Contains(tail, "***0011") {
			t.Errorf("livekit-sip's log shows no masked number of the call (did it log the call?):\n%s", tail)
		}
	})

	t.Run("concurrent session limit", func(t *testing.T) {
		l := r.line(t, "+15550170012", tr.ID, map[string]any{"assistant_id": a.ID})
		zero := 0
		if _, err := r.st.Store.SetMaxConcurrentSessions(ctx, r.st.AccountID, &zero); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.st.Store.SetMaxConcurrentSessions(context.Background(), r.st.AccountID, nil) })
		phone := r.phone(t, sipphone.Config{Number: "+15559990012"})
		refusedAtPhone(ctx, t, phone, r.dialURI(l.Handle), nil)
		c := r.callOf(t, l.ID, nil)
		if c.Status != call.StatusDeclined || str(c.EndReason) != "concurrent_session_limit" || c.SessionID != nil {
			t.Errorf("record %+v, want declined over the concurrent-session limit", c)
		}
	})

	t.Run("the customer declines", func(t *testing.T) {
		r.receiver(t)
		l := r.line(t, "+15550170013", tr.ID, map[string]any{"inbound_mode": "customer_decides", "decision_timeout_seconds": 30})
		phone := r.phone(t, sipphone.Config{Number: "+15559990013"})
		refusedAtPhone(ctx, t, phone, r.dialURI(l.Handle), func() {
			id := r.incoming(t, l.ID, nil)
			var c recordObj
			harness.Must(t, r.do(t, http.MethodPost, "/v1/calls/"+id+"/answer", map[string]any{"action": "decline"}, &c), http.StatusOK, "decline")
			if str(c.Decision) != "decline" {
				t.Errorf("decline answered %+v", c)
			}
		})
		c := r.callOf(t, l.ID, nil)
		if c.Status != call.StatusDeclined || c.From != "+15559990013" || c.To != l.Handle {
			t.Errorf("record %+v, want the phone's call to the line, declined", c)
		}
	})

	t.Run("the decision times out", func(t *testing.T) {
		r.receiver(t)
		l := r.line(t, "+15550170015", tr.ID, map[string]any{"inbound_mode": "customer_decides",
			"decision_timeout_seconds": 2, "on_decision_timeout": "decline"})
		phone := r.phone(t, sipphone.Config{Number: "+15559990015"})
		start := time.Now()
		var id string
		refusedAtPhone(ctx, t, phone, r.dialURI(l.Handle), func() {
			id = r.incoming(t, l.ID, nil) // call.incoming went out; nobody answers it
		})
		if took := time.Since(start); took < 2*time.Second {
			t.Errorf("the phone was refused %v after dialling, before the 2 s decision timeout", took)
		}
		for _, e := range phone.Events() {
			if e.Type == "CALL_ESTABLISHED" {
				t.Errorf("the phone was answered: %+v", phone.Events())
			}
		}
		c := r.record(t, id)
		if c.Status != call.StatusDeclined || str(c.EndReason) != "decision_timeout" || c.AnsweredAt != nil {
			t.Errorf("record %+v, want declined by the decision timeout, never answered", c)
		}
	})

	t.Run("a caller the trunk does not allow", func(t *testing.T) {
		shut := trunkObj{}
		harness.Must(t, r.do(t, http.MethodPost, "/v1/sip_trunks", map[string]any{"name": "provider only",
			"inbound": map[string]any{"allowed_addresses": []string{"203.0.113.0/24"}}}, &shut), http.StatusCreated, "create trunk")
		l := r.line(t, "+15550170014", shut.ID, map[string]any{"assistant_id": a.ID})
		phone := r.phone(t, sipphone.Config{Number: "+15559990014"})
		c, err := phone.Dial(ctx, r.dialURI(l.Handle))
		if err != nil {
			t.Fatal(err)
		}
		// LiveKit's bridge drops a call no trunk matches without an answer.
		wait, stop := context.WithTimeout(ctx, 5*time.Second)
		ev, err := c.Next(wait, "CALL_CLOSED", "CALL_ESTABLISHED")
		stop()
		if err == nil && ev.Type == "CALL_ESTABLISHED" {
			t.Errorf("a call from an address the trunk does not allow was answered")
		}
		if err := phone.Hangup(ctx); err != nil {
			t.Fatal(err)
		}
		var list struct {
			Data []recordObj `json:"data"`
		}
		harness.Must(t, r.do(t, http.MethodGet, "/v1/calls?line_id="+l.ID, nil, &list), http.StatusOK, "list calls")
		if len(list.Data) != 0 {
			t.Errorf("calls of the line %+v, want none", list.Data)
		}
	})
}

// TestInboundCustomerAccepts: on a customer_decides line the phone rings while
// call.incoming waits; accept hands the customer the session, the customer's client
// publishing audio answers the phone, and DELETE /v1/sessions/{id} hangs it up (BYE).
func TestInboundCustomerAccepts(t *testing.T) {
	r := theRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r.receiver(t)
	tr := r.trunk(t, "")
	l := r.line(t, "+15550170021", tr.ID, map[string]any{"inbound_mode": "customer_decides", "decision_timeout_seconds": 30})
	phone := r.phone(t, sipphone.Config{Number: "+15559990021"})
	out, err := phone.Dial(ctx, r.dialURI(l.Handle))
	if err != nil {
		t.Fatal(err)
	}
	id := r.incoming(t, l.ID, nil)
	for _, e := range phone.Events() {
		if e.Type == "CALL_ESTABLISHED" {
			t.Fatalf("the phone was answered before the decision: %+v", phone.Events())
		}
	}
	var payload struct {
		SessionID        string `json:"session_id"`
		RTCURL           string `json:"rtc_url"`
		ParticipantToken string `json:"participant_token"`
	}
	harness.Must(t, r.do(t, http.MethodPost, "/v1/calls/"+id+"/answer", map[string]any{"action": "accept"}, &payload), http.StatusCreated, "accept")
	if payload.SessionID == "" || payload.ParticipantToken == "" {
		t.Fatalf("accept answered %+v, want the session payload", payload)
	}
	tone := callerbot.Tone(440)
	b, err := callerbot.Join(ctx, callerbot.Options{URL: payload.RTCURL, Token: payload.ParticipantToken, Audio: &tone})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Leave()
	if ev, err := out.Next(ctx, "CALL_ESTABLISHED", "CALL_CLOSED"); err != nil || ev.Type != "CALL_ESTABLISHED" {
		t.Fatalf("the phone after accept: %+v %v, want it answered", ev, err)
	}
	c := r.record(t, id)
	if c.Status != call.StatusActive || str(c.Decision) != "accept" || c.HandledBy != call.HandledByCustomer || c.Platform != "sip" {
		t.Errorf("record %+v, want an active call the customer accepted", c)
	}
	time.Sleep(2 * time.Second)
	harness.Must(t, r.do(t, http.MethodDelete, "/v1/sessions/"+payload.SessionID, nil, nil), http.StatusOK, "DELETE session")
	if ev, err := out.Closed(ctx); err != nil || ev.Status() != 0 {
		t.Errorf("the phone's call after DELETE: %+v %v, want a BYE", ev, err)
	}
	rec, _ := r.ended(t, id)
	if str(rec.EndReason) != "deleted" || str(rec.EndedBy) != "customer" {
		t.Errorf("ended record %+v, want deleted by the customer", rec)
	}
	heard, err := phone.Heard()
	if err != nil {
		t.Fatal(err)
	}
	if got := sipphone.ToneLevel(heard, 440); got < 0.05 {
		t.Errorf("the phone heard the customer's tone at %.3f, want it", got)
	}
}

// TestOutbound: POST /v1/sessions on a SIP line needs a live key; with one it rings a
// listening phone through the line's trunk with the line's number as caller id, the
// assistant greets when the phone answers, and its end_call hangs the phone up (BYE).
func TestOutbound(t *testing.T) {
	r := theRig(t)
	r.worker(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const greeting = "Hello, this is the front desk calling about your order."
	r.fake.SetReplies(script(llmtest.Reply{Text: "Thank you, goodbye.", EndCall: true}))
	wav, _ := speechWAV(t, part{pause: 6 * time.Second}, part{say: "Yes, that is fine."}, part{pause: 10 * time.Second})
	callee := r.phone(t, sipphone.Config{Number: "+15557650031", Speak: wav, AutoAnswer: true})
	// An outbound address inside the deployment is refused as webhook and tool URLs are
	// (the stack allows loopback, as a local stack does; a private address, never).
	for _, internal := range []string{"10.0.0.7:5060", "169.254.169.254", "[fd00::1]:5060"} {
		status, raw, err := r.st.Request(http.MethodPost, "/v1/sip_trunks", map[string]any{"name": "internal",
			"outbound": map[string]any{"address": internal}}, r.liveKey)
		if err != nil || status != http.StatusBadRequest || !strings.Contains(string(raw), `"url_not_allowed"`) {
			t.Errorf("POST /v1/sip_trunks with outbound.address %s = %d %s, %v; want 400 url_not_allowed", internal, status, raw, err)
		}
	}
	tr := r.trunk(t, callee.Address())
	a := r.assistant(t, greeting, nil)
	l := r.line(t, "+15550170031", tr.ID, map[string]any{"assistant_id": a.ID})
	body := map[string]any{"line_id": l.ID, "platform_handle": callee.Number(), "mode": "assistant", "assistant_id": a.ID}

	status, raw, err := r.st.Request(http.MethodPost, "/v1/sessions", body, r.st.APIKey)
	if err != nil || status != http.StatusForbidden || !strings.Contains(string(raw), `"live_key_required"`) {
		t.Errorf("POST /v1/sessions on a sip line with a test key = %d %s, %v; want 403 live_key_required", status, raw, err)
	}
	var ses struct {
		ID     string `json:"id"`
		CallID string `json:"call_id"`
	}
	harness.Must(t, r.do(t, http.MethodPost, "/v1/sessions", body, &ses), http.StatusCreated, "POST /v1/sessions")
	in, err := callee.Incoming(ctx)
	if err != nil {
		t.Fatal(err)
	}
	est, err := in.Next(ctx, "CALL_ESTABLISHED", "CALL_CLOSED")
	if err != nil || est.Type != "CALL_ESTABLISHED" {
		t.Fatalf("the callee: %+v %v, want the call answered", est, err)
	}
	if !strings.Contains(in.Peer, l.Handle) {
		t.Errorf("the callee sees the call from %q, want the line's number %s", in.Peer, l.Handle)
	}
	ev, err := in.Closed(ctx)
	if err != nil || ev.Status() != 0 {
		t.Errorf("the callee's call: %+v %v, want the assistant's end_call as a BYE", ev, err)
	}
	rec, _ := r.ended(t, ses.CallID)
	if rec.Direction != call.Outbound || rec.Platform != "sip" || rec.From != l.Handle || rec.To != callee.Number() ||
		str(rec.EndReason) != call.ReasonAssistantHangup {
		t.Errorf("record %+v, want an outbound sip call from the line to the phone the assistant ended", rec)
	}
	if len(rec.Transcript) < 2 || rec.Transcript[0].Text != greeting {
		t.Errorf("transcript %+v, want the greeting first", rec.Transcript)
	}
	heard, err := callee.Heard()
	if err != nil {
		t.Fatal(err)
	}
	keepAudio(t, "heard", heard.Samples)
	if snds := sounds(heard.Samples); len(snds) == 0 || heardSentence(t, heard.Samples, snds[0], greeting, "Thank you, goodbye.") != words(greeting) {
		t.Errorf("the callee's first sound (%v) is not the greeting", snds)
	}
}

// TestKeypadAndTransfer: a key the caller presses reaches the model as "[pressed 1]" and
// the transcript; the model's transfer_call to a listed destination says a handover
// sentence and refers the phone to a second phone, which answers; the record reads
// transferred. POST /v1/calls/{id}/transfer of the ended call is call_not_active.
func TestKeypadAndTransfer(t *testing.T) {
	r := theRig(t)
	r.worker(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	target := r.phone(t, sipphone.Config{Number: "+15557650041", AutoAnswer: true})
	const handover = "Let me put you through to our sales team."
	before := len(r.fake.Requests())
	r.fake.SetReplies(script(llmtest.Reply{Text: handover, ToolCalls: []llmtest.ToolCall{{Name: "transfer_call",
		Arguments: `{"destination":"` + target.URI() + `"}`}}}))
	a := r.assistant(t, "Hello, press one for sales.", map[string]any{"transfer_destinations": []map[string]any{
		{"to": target.URI(), "description": "the sales team"}}})
	tr := r.trunk(t, "")
	l := r.line(t, "+15550170041", tr.ID, map[string]any{"assistant_id": a.ID})
	turns := r.endpoint(t, callevent.TypeCallTranscript)
	phone := r.phone(t, sipphone.Config{Number: "+15559990041"})
	out := answered(ctx, t, phone, r.dialURI(l.Handle))
	c := r.callOf(t, l.ID, nil)
	assistantSaid(t, turns, c.ID, "press one") // the greeting played
	if err := phone.SendDTMF(ctx, "1", 0); err != nil {
		t.Fatal(err)
	}
	harness.WaitFor(t, 30*time.Second, "the model's request", func() bool { return len(r.fake.Requests()) > before })
	req := r.fake.Requests()[before]
	if m := req.Messages; len(m) == 0 || m[len(m)-1].Role != "user" || !strings.Contains(m[len(m)-1].Content, "[pressed 1]") {
		t.Errorf("the model got %+v, want the caller's turn with [pressed 1]", req.Messages)
	}
	if ev, err := out.Next(ctx, "TRANSFER"); err != nil || !strings.Contains(ev.Param, target.Address()) {
		t.Errorf("the phone's REFER: %+v %v, want one to %s", ev, err, target.URI())
	}
	rec := r.transferredTo(ctx, t, target, c.ID)
	var texts []string
	for _, turn := range rec.Transcript {
		texts = append(texts, turn.Speaker+": "+turn.Text)
	}
	joined := strings.Join(texts, " | ")
	if !strings.Contains(joined, "caller: [pressed 1]") || !strings.Contains(joined, "assistant: "+handover) {
		t.Errorf("transcript %s, want the key press and the handover sentence", joined)
	}
	status, raw, _ := r.st.Request(http.MethodPost, "/v1/calls/"+c.ID+"/transfer", map[string]any{"to": "+15557650042"}, r.liveKey)
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	json.Unmarshal(raw, &e)
	if status != http.StatusConflict || e.Error.Code != "call_not_active" {
		t.Errorf("transfer of the ended call = %d %s, want 409 call_not_active", status, raw)
	}
	if err := phone.Hangup(ctx); err != nil {
		t.Logf("hang up the transferred call: %v", err)
	}
}

// TestAPITransfer: POST /v1/calls/{id}/transfer of a live SIP call answers 202 at once
// with the transfer pending; a destination that refuses (a phone that turns the call
// down) leaves the call going on, its record's transfer failed with the reason, and the
// assistant that handles the call tells the caller (the control plane's notice in the
// room); a second transfer to a phone that answers moves the caller there and the
// record reads transferred, completed.
func TestAPITransfer(t *testing.T) {
	r := theRig(t)
	r.worker(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	refuser := r.phone(t, sipphone.Config{Number: "+15557650051"})
	target := r.phone(t, sipphone.Config{Number: "+15557650052", AutoAnswer: true})
	a := r.assistant(t, "Hello, this is the front desk.", nil)
	tr := r.trunk(t, "")
	l := r.line(t, "+15550170051", tr.ID, map[string]any{"assistant_id": a.ID})
	turns := r.endpoint(t, callevent.TypeCallTranscript)
	phone := r.phone(t, sipphone.Config{Number: "+15559990051"})
	out := answered(ctx, t, phone, r.dialURI(l.Handle))
	c := r.callOf(t, l.ID, func(c recordObj) bool { return c.Status == call.StatusActive })

	// The account's test key can neither transfer the live phone call (toll fraud: issue
	// 30) nor join it: 403 live_key_required, and the call goes on untouched.
	refused := map[string]string{"/v1/calls/" + c.ID + "/transfer": `{"to":"` + target.URI() + `"}`}
	if c.SessionID != nil {
		refused["/v1/sessions/"+*c.SessionID+"/tokens"] = `{}`
	}
	for path, body := range refused {
		var v map[string]any
		json.Unmarshal([]byte(body), &v)
		status, raw, _ := r.st.Request(http.MethodPost, path, v, r.st.APIKey)
		if status != http.StatusForbidden || !strings.Contains(string(raw), `"live_key_required"`) || !strings.Contains(string(raw), "sip platform") {
			t.Errorf("POST %s with the test key = %d %s, want 403 live_key_required naming the sip platform", path, status, raw)
		}
	}
	if rec := r.record(t, c.ID); rec.Transfer != nil || rec.Status != call.StatusActive {
		t.Errorf("after the test key's transfer the call is %s, transfer %+v; want it active with none", rec.Status, rec.Transfer)
	}

	transfer := func(to string) recordObj {
		t.Helper()
		start := time.Now()
		var rec recordObj
		harness.Must(t, r.do(t, http.MethodPost, "/v1/calls/"+c.ID+"/transfer", map[string]any{"to": to}, &rec), http.StatusAccepted, "transfer")
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("the transfer answered after %v, want at once", took)
		}
		if rec.Transfer == nil || rec.Transfer.To != to || rec.Transfer.Status != "pending" || rec.Status != call.StatusActive {
			t.Errorf("the transfer answered %+v, want the active call, its transfer to %s pending", rec, to)
		}
		return rec
	}

	// The destination refuses: the call goes on.
	transfer(refuser.URI())
	status, raw, _ := r.st.Request(http.MethodPost, "/v1/calls/"+c.ID+"/transfer", map[string]any{"to": target.URI()}, r.liveKey)
	if status != http.StatusConflict || !strings.Contains(string(raw), "call_not_active") {
		t.Errorf("a second transfer while one is pending = %d %s, want 409 call_not_active", status, raw)
	}
	if _, err := refuser.Incoming(ctx); err != nil {
		t.Fatalf("the refusing destination was not called: %v", err)
	}
	if err := refuser.Hangup(ctx); err != nil {
		t.Fatal(err)
	}
	var failed recordObj
	harness.WaitFor(t, 60*time.Second, "the failed transfer in the record", func() bool {
		failed = r.record(t, c.ID)
		return failed.Transfer != nil && failed.Transfer.Status != "pending"
	})
	if failed.Transfer.Status != "failed" || str(failed.Transfer.Failure) == "" || failed.Status != call.StatusActive {
		t.Errorf("after the refusal the record is %s, transfer %+v; want the call active, the transfer failed with a reason", failed.Status, failed.Transfer)
	}
	for _, e := range phone.Events() {
		if e.Type == "CALL_CLOSED" && e.CallID == out.ID { // not the phone's own refused call to the destination
			t.Errorf("the caller's call closed after a failed transfer: %+v", phone.Events())
		}
	}
	assistantSaid(t, turns, c.ID, "could not transfer") // the assistant told the caller

	// The destination answers: the caller moves there.
	transfer(target.URI())
	rec := r.transferredTo(ctx, t, target, c.ID)
	if str(rec.EndedBy) != "customer" {
		t.Errorf("the transfer ended the call by %q, want the customer (the API)", str(rec.EndedBy))
	}
	var said []string
	for _, turn := range rec.Transcript {
		said = append(said, turn.Speaker+": "+turn.Text)
	}
	if joined := strings.Join(said, " | "); !strings.Contains(joined, "assistant: I am sorry, I could not transfer your call.") {
		t.Errorf("transcript %s, want the assistant telling the caller the transfer failed", joined)
	}
	if err := phone.Hangup(ctx); err != nil {
		t.Logf("hang up the transferred call: %v", err)
	}
}

// TestTransferOverTCP: three calls that come in over TCP, each transferred through the
// API to a phone that answers within a millisecond. livekit-sip v1.8.0 as released could
// lose such an answer to its REFER on a loaded machine (docs/deploy.md); the bridge we
// build reads it: every record reads transferred, completed, with no reported_error,
// call.ended comes within endedWithin, and the caller's call to the bridge is hung up.
func TestTransferOverTCP(t *testing.T) {
	r := theRig(t)
	r.worker(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	target := r.phone(t, sipphone.Config{Number: "+15557650061", AutoAnswer: true})
	a := r.assistant(t, "Hello, this is the front desk.", nil)
	tr := r.trunk(t, "")
	l := r.line(t, "+15550170061", tr.ID, map[string]any{"assistant_id": a.ID})
	phone := r.phone(t, sipphone.Config{Number: "+15559990061"})
	seen := map[string]bool{}
	for i := range 3 {
		out := answered(ctx, t, phone, r.dialURI(l.Handle)+";transport=tcp")
		c := r.callOf(t, l.ID, func(c recordObj) bool { return !seen[c.ID] && c.Status == call.StatusActive })
		seen[c.ID] = true
		var rec recordObj
		harness.Must(t, r.do(t, http.MethodPost, "/v1/calls/"+c.ID+"/transfer", map[string]any{"to": target.URI()}, &rec),
			http.StatusAccepted, "transfer")
		r.transferredTo(ctx, t, target, c.ID)
		if _, err := out.Closed(ctx); err != nil {
			t.Fatalf("transfer %d: the caller's call to the bridge was not hung up: %v", i+1, err)
		}
		if err := target.Hangup(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
