package lambda_test

// The session, call and receiver functions under the runtime harness, with a real
// livekit-server: its webhooks reach livekit-webhook through a small stand-in for API
// Gateway (an HTTP server on 127.0.0.1 that turns each request into an HTTP API event),
// and the functions read the LiveKit credentials from Secrets Manager (moto).

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	lkauth "github.com/livekit/protocol/auth"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver/livekittest"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/lktoken"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform/simhook"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/rtc/lkapi"
	"github.com/bridgeline/bridgeline/shared/session"
)

// gateway stands in for API Gateway in front of the public (no authorizer) routes:
// each request becomes an HTTP API v2 event for the route's function.
type gateway struct {
	s      *stack
	routes map[string]string // path -> function
	mu     sync.Mutex
	seen   []int // statuses the functions answered
	// inflight counts, per function, the invocations running now.
	inflight map[string]int
	srv      *httptest.Server
	// platform is the sim platform gateway, whose notifications come through here.
	platform *platformGateway
}

func (s *stack) newGateway(routes map[string]string) *gateway {
	g := &gateway{s: s, routes: routes}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	s.t.Cleanup(g.srv.Close)
	return g
}

func (g *gateway) serve(w http.ResponseWriter, r *http.Request) {
	fn, ok := g.routes[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	headers := map[string]string{}
	for k := range r.Header {
		headers[k] = r.Header.Get(k)
	}
	rq := request{fn: fn, method: r.Method, pattern: r.URL.Path, path: r.URL.Path, body: string(body), headers: headers}
	p := g.s.proc(fn)
	g.mu.Lock()
	if g.inflight == nil {
		g.inflight = map[string]int{}
	}
	g.inflight[fn]++
	g.mu.Unlock()
	res, err := p.Invoke(g.s.ctx, httpEvent(g.s.t, rq))
	g.mu.Lock()
	g.inflight[fn]--
	g.mu.Unlock()
	var out events.APIGatewayV2HTTPResponse
	if err != nil || json.Unmarshal(res.Payload, &out) != nil {
		http.Error(w, "function failed", http.StatusBadGateway)
		return
	}
	g.mu.Lock()
	g.seen = append(g.seen, out.StatusCode)
	g.mu.Unlock()
	w.WriteHeader(out.StatusCode)
	io.WriteString(w, out.Body)
}

// running is how many invocations of fn are running now.
func (g *gateway) running(fn string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inflight[fn]
}

func (g *gateway) statuses() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]int(nil), g.seen...)
}

// testReportSecret is the persona report secret the test keeps where template.yaml's
// PersonaReportCredentials holds it.
const testReportSecret = "functions-test-report-secret-0123456789"

// withLiveKit starts livekit-server with its webhooks going to the gateway, and puts
// its credentials in Secrets Manager as template.yaml's LiveKitCredentials holds them.
func (s *stack) withLiveKit() (*livekitserver.Server, *gateway) {
	t := s.t
	gw := s.newGateway(map[string]string{httpapi.LiveKitWebhookPath: "livekit-webhook", simhook.Path: "platform-sim"})
	lk := livekittest.Start(t, livekitserver.Config{WebhookURLs: []string{gw.srv.URL + httpapi.LiveKitWebhookPath}})
	conf := lk.Config()
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	sm := secretsmanager.NewFromConfig(cfg, func(o *secretsmanager.Options) { o.BaseEndpoint = aws.String(s.motoURL) })
	secret, _ := json.Marshal(map[string]string{"api_key": conf.APIKey, "api_secret": conf.APISecret,
		"keys": conf.APIKey + ": " + conf.APISecret})
	out, err := sm.CreateSecret(s.ctx, &secretsmanager.CreateSecretInput{Name: aws.String("bridgeline-test-livekit"), SecretString: aws.String(string(secret))})
	if err != nil {
		t.Fatal(err)
	}
	s.refs["LiveKitCredentials"] = aws.ToString(out.ARN)
	rep, err := sm.CreateSecret(s.ctx, &secretsmanager.CreateSecretInput{Name: aws.String("bridgeline-test-persona-report"),
		SecretString: aws.String(testReportSecret)})
	if err != nil {
		t.Fatal(err)
	}
	s.refs["PersonaReportCredentials"] = aws.ToString(rep.ARN)
	s.refs["LiveKitURL"] = lk.HTTPURL()
	s.refs["LiveKitPublicURL"] = lk.WSURL()
	s.refs["TokenTTLMinutes"] = "10"
	gw.platform = s.withPlatformGateway(gw.srv.URL)
	return lk, gw
}

// sessionScenario drives the session, call and receiver functions. acct and auth are
// the account and its authorizer context; lineID a line of the account.
func (s *stack) sessionScenario(lk *livekitserver.Server, gw *gateway, acctID, lineID string, auth map[string]any) {
	t := s.t
	ctx := s.ctx
	conf := lk.Config()

	// A session as sessions-create leaves it (ringing, room created), made directly.
	now := time.Now().UTC().Truncate(time.Millisecond)
	ses := session.Session{ID: ident.New("ses"), AccountID: acctID, LineID: lineID, Mode: session.ModeHuman, Media: "video",
		PlatformHandle: "+15557654321", Status: session.StatusRinging, CreatedAt: now}
	c := call.Call{ID: ident.New("call"), AccountID: acctID, Direction: call.Outbound, LineID: lineID, From: "+15550109999",
		To: ses.PlatformHandle, Media: "video", Status: call.StatusRinging, HandledBy: call.HandledByCustomer,
		SessionID: ses.ID, Platform: "sim", PlatformCallID: ident.New("simcall"), StartedAt: now}
	ses.CallID = c.ID
	if err := s.store.SaveSession(ctx, ses, c, nil); err != nil {
		t.Fatal(err)
	}
	rooms, err := lkapi.New(lkapi.Config{URL: lk.HTTPURL(), PublicURL: lk.WSURL(), APIKey: conf.APIKey, APISecret: conf.APISecret})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rooms.CreateRoom(ctx, rtc.RoomSpec{Name: ses.ID, EmptyTimeout: time.Minute}); err != nil {
		t.Fatal(err)
	}

	get := func(fn, pattern, path string) request {
		return request{fn: fn, method: http.MethodGet, pattern: pattern, path: path, auth: auth}
	}
	list := s.expect(get("sessions-list", "/v1/sessions", "/v1/sessions"), http.StatusOK)
	if data := list["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != ses.ID {
		t.Errorf("sessions list = %v, want [%s]", list, ses.ID)
	}
	got := s.expect(get("sessions-get", "/v1/sessions/{id}", "/v1/sessions/"+ses.ID), http.StatusOK)
	if got["rtc_url"] != lk.WSURL() || got["participant_token"] != nil {
		t.Errorf("session = %v, want rtc_url %s and no token", got, lk.WSURL())
	}

	// A fresh participant token: this room only, no admin grants, signed with the fleet key.
	tok := s.expect(request{fn: "sessions-tokens", method: http.MethodPost, pattern: "/v1/sessions/{id}/tokens",
		path: "/v1/sessions/" + ses.ID + "/tokens", auth: auth, headers: map[string]string{"Idempotency-Key": ident.New("idem")}}, http.StatusCreated)
	v, err := lkauth.ParseAPIToken(tok["participant_token"].(string))
	if err != nil {
		t.Fatal(err)
	}
	_, grants, err := v.Verify(conf.APISecret)
	if err != nil {
		t.Fatalf("token does not verify with the fleet secret: %v", err)
	}
	if g := grants.Video; g == nil || g.Room != ses.ID || !g.RoomJoin || g.RoomCreate || g.RoomAdmin || g.RoomList {
		t.Errorf("token grants = %+v, want a join of room %s only", grants.Video, ses.ID)
	}
	if id, _ := tok["participant_identity"].(string); grants.Identity != id || !strings.HasPrefix(id, session.CustomerIdentityPrefix) || tok["watch_only"] != false {
		t.Errorf("token identity %q, answer %v: want the answer's own customer- identity, publishing", grants.Identity, tok)
	}

	calls := s.expect(get("calls-list", "/v1/calls", "/v1/calls"), http.StatusOK)
	if data := calls["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != c.ID {
		t.Errorf("calls list = %v, want [%s]", calls, c.ID)
	}
	s.expect(get("calls-get", "/v1/calls/{id}", "/v1/calls/"+c.ID), http.StatusOK)
	// A call that was not recorded has no recording to download or delete.
	for _, rq := range []request{get("calls-recording-get", "/v1/calls/{id}/recording", "/v1/calls/"+c.ID+"/recording"),
		{fn: "calls-recording-delete", method: http.MethodDelete, pattern: "/v1/calls/{id}/recording", path: "/v1/calls/" + c.ID + "/recording", auth: auth}} {
		if e := s.expect(rq, http.StatusNotFound); e["error"].(map[string]any)["code"] != "recording_not_found" {
			t.Errorf("%s %s = %v, want 404 recording_not_found", rq.method, rq.path, e)
		}
	}

	// Metadata: the session's and the call's are each their own, changed by their PATCH.
	patch := func(fn, pattern, path, body string) request {
		return request{fn: fn, method: http.MethodPatch, pattern: pattern, path: path, body: body, auth: auth,
			headers: map[string]string{"Content-Type": "application/json"}}
	}
	sesMeta := s.expect(patch("sessions-update", "/v1/sessions/{id}", "/v1/sessions/"+ses.ID, `{"metadata":{"order_id":"6735"}}`), http.StatusOK)
	if m, _ := sesMeta["metadata"].(map[string]any); len(m) != 1 || m["order_id"] != "6735" {
		t.Errorf("session after its metadata update = %v, want metadata {order_id: 6735}", sesMeta)
	}
	callMeta := s.expect(patch("calls-update", "/v1/calls/{id}", "/v1/calls/"+c.ID, `{"metadata":{"ticket":"T-1042"}}`), http.StatusOK)
	if m, _ := callMeta["metadata"].(map[string]any); len(m) != 1 || m["ticket"] != "T-1042" {
		t.Errorf("call after its metadata update = %v, want metadata {ticket: T-1042}", callMeta)
	}
	if got, err := s.store.GetSession(ctx, ses.ID); err != nil || got.Metadata["order_id"] != "6735" {
		t.Errorf("stored session metadata = %v (%v), want order_id 6735", got.Metadata, err)
	}

	// A persona worker's reports on a second call, signed with the fleet key as
	// mediafleet/report signs them: a metric, then the worker's end of the call.
	ses2, c2 := ses, c
	ses2.ID, c2.ID, c2.PlatformCallID = ident.New("ses"), ident.New("call"), ident.New("simcall")
	ses2.CallID, c2.SessionID = c2.ID, ses2.ID
	if err := s.store.SaveSession(ctx, ses2, c2, nil); err != nil {
		t.Fatal(err)
	}
	report := func(rep persona.Report) request {
		body, _ := json.Marshal(rep)
		authz, err := persona.SignReport(body, testReportSecret, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return request{fn: "persona-report", method: http.MethodPost, pattern: persona.ReportPath, path: persona.ReportPath,
			body: string(body), headers: map[string]string{"Content-Type": "application/json", "Authorization": authz}}
	}
	s.expect(report(persona.Report{Kind: persona.ReportGreeting, CallID: c2.ID, SessionID: ses2.ID, At: time.Now().UTC(),
		Metrics: persona.Metrics{ResponseMS: &persona.Percentiles{P50: 420, P95: 610}}}), http.StatusOK)
	if got, _ := s.store.GetCall(ctx, c2.ID); got.Metrics == nil || got.Metrics.ResponseMS == nil || got.Metrics.ResponseMS.P50 != 420 {
		t.Errorf("call metrics after the report = %+v, want response p50 420", got.Metrics)
	}
	// A transfer of a sim call is refused (the sim cannot transfer), through the API and
	// through the assistant's transfer_call.
	transfer := request{fn: "calls-transfer", method: http.MethodPost, pattern: "/v1/calls/{id}/transfer", path: "/v1/calls/" + c2.ID + "/transfer",
		body: `{"to":"+15550100009"}`, auth: auth, headers: map[string]string{"Content-Type": "application/json", "Idempotency-Key": ident.New("idem")}}
	if resp := s.call(transfer); resp.status != http.StatusConflict {
		t.Errorf("transfer of a sim call = %d %s, want 409", resp.status, resp.body)
	}
	tbody, _ := json.Marshal(persona.TransferRequest{CallID: c2.ID, To: "+15550100009"})
	tauth, err := persona.SignReport(tbody, testReportSecret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if resp := s.call(request{fn: "persona-transfer", method: http.MethodPost, pattern: persona.TransferPath, path: persona.TransferPath,
		body: string(tbody), headers: map[string]string{"Content-Type": "application/json", "Authorization": tauth}}); resp.status != http.StatusBadRequest {
		t.Errorf("the worker's transfer of a call that runs no assistant = %d %s, want 400", resp.status, resp.body)
	}
	forged := report(persona.Report{Kind: persona.ReportEnded, CallID: c2.ID, SessionID: ses2.ID, At: time.Now().UTC()})
	forged.headers["Authorization"] = "Bearer " + strings.Repeat("x", 40)
	if resp := s.call(forged); resp.status != http.StatusUnauthorized {
		t.Errorf("unsigned report = %d %s, want 401", resp.status, resp.body)
	}
	// Signed with the LiveKit API secret, which livekit-server holds too: refused.
	sum := sha256.Sum256([]byte(forged.body))
	lkSigned, err := lkauth.NewAccessToken(conf.APIKey, conf.APISecret).SetIdentity(persona.ReportSubject).
		SetValidFor(time.Minute).SetSha256(base64.StdEncoding.EncodeToString(sum[:])).ToJWT()
	if err != nil {
		t.Fatal(err)
	}
	forged.headers["Authorization"] = "Bearer " + lkSigned
	if resp := s.call(forged); resp.status != http.StatusUnauthorized {
		t.Errorf("report signed with the LiveKit secret = %d %s, want 401", resp.status, resp.body)
	}
	s.expect(report(persona.Report{Kind: persona.ReportEnded, CallID: c2.ID, SessionID: ses2.ID, At: time.Now().UTC(),
		EndReason: "caller_hangup"}), http.StatusOK)
	if got, _ := s.store.GetSession(ctx, ses2.ID); !got.Over() {
		t.Errorf("session after the worker's ended report = %s, want it over", got.Status)
	}
	// A tool request of the worker (signed under the tool subject) for a call the
	// control plane does not know: persona-tool finds no call and runs nothing.
	toolBody, _ := json.Marshal(persona.ToolRequest{CallID: ident.New("call"), ToolCallID: "tc_1", Name: "lookup_order",
		Arguments: json.RawMessage(`{}`)})
	toolAuthz, err := persona.SignToolRequest(toolBody, testReportSecret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s.expect(request{fn: "persona-tool", method: http.MethodPost, pattern: persona.ToolPath, path: persona.ToolPath,
		body: string(toolBody), headers: map[string]string{"Content-Type": "application/json", "Authorization": toolAuthz}},
		http.StatusNotFound)
	// A worker's registration token (it holds no LiveKit secret): signed with the report
	// secret under the agent-token subject, answered with a token whose only grant is
	// agent, signed with the fleet's key.
	tokAuthz, err := persona.SignAgentTokenRequest(testReportSecret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	agentTok := s.expect(request{fn: "persona-agent-token", method: http.MethodPost, pattern: persona.AgentTokenPath,
		path: persona.AgentTokenPath, body: string(persona.AgentTokenRequestBody()),
		headers: map[string]string{"Content-Type": "application/json", "Authorization": tokAuthz}}, http.StatusOK)
	tokText, _ := agentTok["token"].(string)
	if c, err := lktoken.Verify(tokText, lktoken.KeyPair(conf.APIKey, conf.APISecret)); err != nil || c.Video == nil || !c.Video.Agent || c.Video.RoomAdmin || c.Video.Room != "" {
		t.Errorf("persona-agent-token's token: claims %+v, %v; want the agent grant only, signed with the fleet's key", c, err)
	}

	// The scheduled sweeper ends a session past its maximum length, with call.ended.
	old, oldCall := ses, c
	old.ID, oldCall.ID, oldCall.PlatformCallID = ident.New("ses"), ident.New("call"), ident.New("simcall")
	old.CallID, oldCall.SessionID = oldCall.ID, old.ID
	old.CreatedAt, oldCall.StartedAt = now.Add(-2*time.Hour), now.Add(-2*time.Hour)
	if err := s.store.SaveSession(ctx, old, oldCall, nil); err != nil {
		t.Fatal(err)
	}
	s.overrides["session-sweeper"] = []string{"SWEEP_WINDOW_SECONDS=1"}
	sched := readJSON(t, "eventbridge-scheduled.json")
	s.invoke("session-sweeper", mustJSON(t, sched))
	if got, err := s.store.GetSession(ctx, old.ID); err != nil || !got.Over() || got.EndReason != call.ReasonMaxDuration {
		t.Errorf("session past its maximum after a sweep = %+v, %v; want it over with max_duration", got, err)
	}
	if got, _ := s.store.GetSession(ctx, ses.ID); got.Over() {
		t.Errorf("sweep ended the young session %s", ses.ID)
	}

	// An assistant call's call.ended waits for its worker's final report: sessions-delete
	// ends the call at once and holds the event; the worker's ended report, through
	// persona-report, writes it in the same transaction as the transcript. A call whose
	// worker never reports gets its call.ended from session-sweeper once the wait is
	// over, and its record says the report is missing.
	countEnded := func(callID string) int {
		evts, err := s.store.ListEvents(ctx, acctID, callevent.TypeCallEnded, listing.Query{Limit: listing.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range evts {
			if bytes.Contains(e.Data, []byte(callID)) {
				n++
			}
		}
		return n
	}
	assistantCall := func() (session.Session, call.Call) {
		a, ac := ses, c
		a.ID, ac.ID, ac.PlatformCallID = ident.New("ses"), ident.New("call"), ident.New("simcall")
		a.CallID, ac.SessionID = ac.ID, a.ID
		seen := time.Now().UTC().Truncate(time.Millisecond)
		a.Mode, a.Status, a.AnsweredAt, a.AssistantSeenAt = session.ModeAssistant, session.StatusActive, &seen, &seen
		ac.HandledBy, ac.Status, ac.AnsweredAt = call.HandledByAssistant, call.StatusActive, &seen
		if err := s.store.SaveSession(ctx, a, ac, nil); err != nil {
			t.Fatal(err)
		}
		s.expect(request{fn: "sessions-delete", method: http.MethodDelete, pattern: "/v1/sessions/{id}",
			path: "/v1/sessions/" + a.ID, auth: auth}, http.StatusOK)
		rec := s.expect(get("calls-get", "/v1/calls/{id}", "/v1/calls/"+ac.ID), http.StatusOK)
		if rec["status"] != call.StatusEnded || rec["assistant_report"] != call.ReportPending || countEnded(ac.ID) != 0 {
			t.Errorf("assistant call after DELETE: %v, %d call.ended; want ended, report pending, call.ended held",
				rec, countEnded(ac.ID))
		}
		return a, ac
	}
	reported, reportedCall := assistantCall()
	worked := persona.Usage{STTAudioMS: 1500, TTSCharacters: 12, LLMPromptTokens: 40, LLMCompletionTokens: 9}
	before := s.expect(get("usage-get", "/v1/usage", "/v1/usage"), http.StatusOK)["total"].(map[string]any)
	s.expect(report(persona.Report{Kind: persona.ReportEnded, CallID: reportedCall.ID, SessionID: reported.ID, At: time.Now().UTC(),
		EndReason: persona.EndRoomClosed, Transcript: []persona.Turn{{Speaker: persona.SpeakerAssistant, Text: "Hello there.", EndMS: 900}},
		Usage: &worked}), http.StatusOK)
	rec := s.expect(get("calls-get", "/v1/calls/{id}", "/v1/calls/"+reportedCall.ID), http.StatusOK)
	if n := countEnded(reportedCall.ID); n != 1 || rec["assistant_report"] != call.ReportReceived || len(rec["transcript"].([]any)) != 1 {
		t.Errorf("after the worker's report: %d call.ended, record %v; want 1, received, the transcript", n, rec)
	}
	// usage-get: the report's counts are added to the day's usage, once.
	after := s.expect(get("usage-get", "/v1/usage", "/v1/usage"), http.StatusOK)["total"].(map[string]any)
	if d := after["tts_characters"].(float64) - before["tts_characters"].(float64); d != 12 ||
		after["llm_prompt_tokens"].(float64)-before["llm_prompt_tokens"].(float64) != 40 || after["calls"].(float64) < 1 {
		t.Errorf("usage before the report %v, after %v: want the report's 12 characters and 40 prompt tokens added", before, after)
	}
	silent, silentCall := assistantCall()
	time.Sleep(session.DefaultReportWait)
	s.invoke("session-sweeper", mustJSON(t, sched))
	rec = s.expect(get("calls-get", "/v1/calls/{id}", "/v1/calls/"+silentCall.ID), http.StatusOK)
	if n := countEnded(silentCall.ID); n != 1 || rec["assistant_report"] != call.ReportMissing {
		t.Errorf("after the wait and a sweep: %d call.ended, record %v; want 1, missing", n, rec)
	}
	if got, _ := s.store.GetSession(ctx, silent.ID); got.Held() {
		t.Errorf("session %s still held after the sweep released its call.ended", silent.ID)
	}

	s.dialScenario(gw, lineID, auth)
	s.inboundScenario(gw, lineID, auth)
	s.decideLaterScenario(gw, lineID, auth)

	// DELETE ends the session: the room goes (livekit-server says so through its
	// webhook, to livekit-webhook), and call.ended is in the event log exactly once.
	ended := s.expect(request{fn: "sessions-delete", method: http.MethodDelete, pattern: "/v1/sessions/{id}",
		path: "/v1/sessions/" + ses.ID, auth: auth}, http.StatusOK)
	if ended["status"] != session.StatusEnded {
		t.Errorf("delete = %v, want ended", ended)
	}
	evts, err := s.store.ListEvents(ctx, acctID, callevent.TypeCallEnded, listing.Query{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evts {
		if bytes.Contains(e.Data, []byte(c.ID)) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("call.ended events for %s: %d, want 1", c.ID, n)
	}
	// DELETE /v1/calls/{id}: the ended call's numbers go, its record stays for billing;
	// a second DELETE answers the same.
	for range 2 {
		red := s.expect(request{fn: "calls-delete", method: http.MethodDelete, pattern: "/v1/calls/{id}",
			path: "/v1/calls/" + c.ID, auth: auth}, http.StatusOK)
		if red["redacted_at"] == nil || red["from"] != "" || red["to"] != "" || red["status"] != call.StatusEnded || red["id"] != c.ID {
			t.Errorf("DELETE /v1/calls/%s = %v, want the ended record, redacted, without its numbers", c.ID, red)
		}
	}
	if got, err := s.store.GetSession(ctx, ses.ID); err != nil || got.PlatformHandle != "" {
		t.Errorf("session of the deleted call: handle %q (%v), want none", got.PlatformHandle, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok := false
		for _, st := range gw.statuses() {
			ok = ok || st == http.StatusOK
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("livekit-webhook answered no LiveKit webhook with 200 (statuses %v)", gw.statuses())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, st := range gw.statuses() {
		if st != http.StatusOK {
			t.Errorf("livekit-webhook answered a LiveKit webhook with %d", st)
		}
	}
}

// dialScenario: POST /v1/sessions dials through the sim platform gateway (simclient);
// the dialled handle answers, its party joins the room, and the gateway's answered
// notification reaches platform-sim through API Gateway: the session is active. DELETE
// hangs the call up at the gateway.
func (s *stack) dialScenario(gw *gateway, lineID string, auth map[string]any) {
	t := s.t
	created := s.expect(request{fn: "sessions-create", method: http.MethodPost, pattern: "/v1/sessions", path: "/v1/sessions",
		body: `{"platform_handle":"+15557654321","line_id":"` + lineID + `","media":"audio"}`, auth: auth,
		headers: map[string]string{"Content-Type": "application/json", "Idempotency-Key": ident.New("idem")}}, http.StatusCreated)
	sesID, callID := created["id"].(string), created["call_id"].(string)
	if created["status"] != session.StatusRinging || created["participant_token"] == nil {
		t.Errorf("created = %v, want a ringing session with a token", created)
	}
	var last session.Session
	for deadline := time.Now().Add(30 * time.Second); ; {
		got, err := s.store.GetSession(s.ctx, sesID)
		if err != nil {
			t.Fatal(err)
		}
		if last = got; got.Status != session.StatusRinging || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if last.Status != session.StatusActive {
		t.Fatalf("session after the gateway answered = %s (%s), want active; platform-sim log:\n%s", last.Status, last.EndReason, s.proc("platform-sim").Output())
	}
	pc, err := gw.platform.byCallID(callID)
	if err != nil {
		t.Fatal(err)
	}
	if pc.Status != "answered" || !pc.InRoom {
		t.Errorf("gateway call = %+v, want answered and in the room", pc)
	}
	if c, err := s.store.GetCall(s.ctx, callID); err != nil || c.PlatformCallID != pc.ID || c.Status != call.StatusActive {
		t.Errorf("call = %+v, %v; want active with the gateway's platform call id %s", c, err, pc.ID)
	}

	// A notification as API Gateway delivers it (testdata): as recorded (signed long ago,
	// with another secret) it is refused; signed now with the deployment's secret, its
	// "t=...,v1=..." signature survives the proxy adapter's splitting of headers at commas,
	// and an answer for a call nobody placed changes nothing.
	if st := s.sendNotification("", time.Time{}); st != http.StatusUnauthorized {
		t.Errorf("recorded notification = %d, want 401", st)
	}
	if st := s.sendNotification(gw.platform.secret, time.Now()); st != http.StatusOK {
		t.Errorf("freshly signed notification = %d, want 200; log:\n%s", st, s.proc("platform-sim").Output())
	}

	ended := s.expect(request{fn: "sessions-delete", method: http.MethodDelete, pattern: "/v1/sessions/{id}",
		path: "/v1/sessions/" + sesID, auth: auth}, http.StatusOK)
	if ended["status"] != session.StatusEnded {
		t.Errorf("delete = %v, want ended", ended)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if pc, err = gw.platform.byCallID(callID); err != nil || pc.Status == "ended" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if pc.Status != "ended" || pc.EndedBy != "bridgeline" || pc.InRoom {
		t.Errorf("gateway call after DELETE = %+v, %v; want ended by bridgeline, out of the room", pc, err)
	}
}
