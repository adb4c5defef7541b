package lambda_test

// The sim platform gateway (cmd/platform-gateway) as it runs beside the media fleet: a
// process of its own that sessions-create and sessions-delete drive over HTTP
// (shared/platform/simclient) and that posts its notifications through API Gateway to
// platform-sim.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/functions/functiontest"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/decision"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/platform/simhook"
	"github.com/bridgeline/bridgeline/shared/session"
)

// platformGateway is a running cmd/platform-gateway.
// gatewayAPIToken is the gateway's SIM_API_TOKEN: its /sim/ API requires it.
const gatewayAPIToken = "functions-test-sim-api-token-0123456789"

type platformGateway struct {
	url    string
	secret string
}

// withPlatformGateway puts the sim secret in Secrets Manager as template.yaml's
// SimCredentials holds it, and starts the gateway notifying controlPlane (the API
// Gateway stand-in's URL).
func (s *stack) withPlatformGateway(controlPlane string) *platformGateway {
	t := s.t
	secret := ident.New("simsecret") + strings.Repeat("x", 16)
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	sm := secretsmanager.NewFromConfig(cfg, func(o *secretsmanager.Options) { o.BaseEndpoint = aws.String(s.motoURL) })
	out, err := sm.CreateSecret(s.ctx, &secretsmanager.CreateSecretInput{Name: aws.String("bridgeline-test-sim"), SecretString: aws.String(secret)})
	if err != nil {
		t.Fatal(err)
	}
	s.refs["SimCredentials"] = aws.ToString(out.ARN)

	bin := filepath.Join(buildDir, "platform-gateway")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/platform-gateway")
	build.Dir = functiontest.Root(t)
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/platform-gateway: %v\n%s", err, b)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "CONTROL_PLANE_URL="+controlPlane, "SIM_SECRET="+secret,
		"LISTEN_ADDR=127.0.0.1:0", "RING_DELAY=50ms",
		"SIM_API_TOKEN="+gatewayAPIToken)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	// It prints its address once listening.
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), "listening on "); ok {
				lines <- strings.TrimSuffix(strings.Fields(rest)[0], "/")
				break
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case u := <-lines:
		s.refs["PlatformGatewayURL"] = u
		return &platformGateway{url: u, secret: secret}
	case <-time.After(30 * time.Second):
		t.Fatalf("platform-gateway did not start; log:\n%s", logs.String())
		return nil
	}
}

// simCall is the gateway's record of a call (GET /sim/calls).
type simCall struct {
	ID      string `json:"id"`
	CallID  string `json:"call_id"`
	Status  string `json:"status"`
	InRoom  bool   `json:"in_room"`
	EndedBy string `json:"ended_by"`
}

// byCallID returns the gateway's call bridged for Bridgeline's call id.
func (g *platformGateway) byCallID(callID string) (simCall, error) {
	req, err := http.NewRequest(http.MethodGet, g.url+"/sim/calls", nil)
	if err != nil {
		return simCall{}, err
	}
	req.Header.Set("Authorization", "Bearer "+gatewayAPIToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return simCall{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return simCall{}, fmt.Errorf("GET /sim/calls = %d", resp.StatusCode)
	}
	var list struct {
		Data []simCall `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return simCall{}, err
	}
	for _, c := range list.Data {
		if c.CallID == callID {
			return c, nil
		}
	}
	return simCall{}, fmt.Errorf("the gateway has no call for %s (calls %+v)", callID, list.Data)
}

// place has the gateway place an inbound audio call from to (POST /sim/calls).
func (g *platformGateway) place(t testing.TB, from, to string) simCall {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, g.url+"/sim/calls",
		strings.NewReader(`{"from":"`+from+`","to":"`+to+`","media":"audio"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+gatewayAPIToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var placed simCall
	json.NewDecoder(resp.Body).Decode(&placed)
	if resp.StatusCode != http.StatusCreated || placed.ID == "" {
		t.Fatalf("POST /sim/calls = %d %+v, want 201 and a call", resp.StatusCode, placed)
	}
	return placed
}

// sendNotification hands platform-sim the testdata notification event, as the private
// InternalApi (a REST API, payload 1.0) delivers it, signed with secret at t; it returns
// the function's status.
func (s *stack) sendNotification(secret string, at time.Time) int {
	ev := readJSON(s.t, "rest-api-v1-platform-sim.json")
	if secret != "" {
		ev["headers"].(map[string]any)["Sim-Signature"] = simhook.SignNotification(secret, []byte(ev["body"].(string)), at)
	}
	var out events.APIGatewayProxyResponse
	if err := json.Unmarshal(s.invoke("platform-sim", mustJSON(s.t, multiValueHeaders(ev))), &out); err != nil {
		s.t.Fatal(err)
	}
	return out.StatusCode
}

// inboundScenario: a customer_decides line (set through lines-update), an endpoint
// subscribed to call.incoming that answers accept in its response body, and a second
// one that answers 410; the gateway places an inbound call on the line (POST
// /sim/calls), platform-sim posts the signed call.incoming, disables the gone endpoint,
// takes the accept and bridges: the call is active, decided by the webhook response.
func (s *stack) inboundScenario(gw *gateway, lineID string, auth map[string]any) {
	t := s.t
	post := func(fn, pattern, path, body string) request {
		return request{fn: fn, method: http.MethodPost, pattern: pattern, path: path, body: body, auth: auth,
			headers: map[string]string{"Content-Type": "application/json", "Idempotency-Key": ident.New("idem")}}
	}
	ln := s.expect(request{fn: "lines-update", method: http.MethodPatch, pattern: "/v1/lines/{id}", path: "/v1/lines/" + lineID,
		body: `{"inbound_mode":"customer_decides","decision_timeout_seconds":10}`, auth: auth,
		headers: map[string]string{"Content-Type": "application/json"}}, http.StatusOK)
	handle, _ := ln["handle"].(string)
	if ln["inbound_mode"] != "customer_decides" || handle == "" {
		t.Fatalf("line after the update = %v, want customer_decides with a handle", ln)
	}
	recv := eventtest.NewReceiver(t)
	recv.AnswerIncoming(func(callevent.CallIncoming) string { return decision.Accept })
	ep := s.expect(post("webhook-endpoints-create", "/v1/webhook_endpoints", "/v1/webhook_endpoints",
		`{"url":"`+recv.URL+`","events":["call.incoming"]}`), http.StatusCreated)
	recv.SetSecret(ep["secret"].(string))
	gone := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) }))
	defer gone.Close()
	goneEP := s.expect(post("webhook-endpoints-create", "/v1/webhook_endpoints", "/v1/webhook_endpoints",
		`{"url":"`+gone.URL+`/hooks","events":["call.incoming"]}`), http.StatusCreated)

	placed := gw.platform.place(t, "+15550142424", handle)

	got := recv.WaitFor(t, callevent.TypeCallIncoming, 30*time.Second, nil)
	var in callevent.CallIncoming
	if err := json.Unmarshal(got.Event.Data, &in); err != nil {
		t.Fatal(err)
	}
	if in.LineID != lineID || in.From != "+15550142424" || in.Session.ParticipantToken == "" {
		t.Errorf("call.incoming = %+v, want the line %s, the caller and a session payload", in, lineID)
	}
	var c call.Call
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; {
		if c, err = s.store.GetCall(s.ctx, in.CallID); err != nil {
			t.Fatal(err)
		}
		if c.Status != call.StatusRinging || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if c.Status != call.StatusActive || c.Decision != decision.Accept || c.DecisionSource != decision.SourceWebhook {
		t.Fatalf("inbound call = status %s, decision %q from %q; want active, accept from %s; platform-sim log:\n%s",
			c.Status, c.Decision, c.DecisionSource, decision.SourceWebhook, s.proc("platform-sim").Output())
	}
	if ses, err := s.store.GetSession(s.ctx, in.Session.SessionID); err != nil || ses.Status != session.StatusActive {
		t.Errorf("inbound session = %+v, %v; want active", ses, err)
	}
	// The gateway's party joins the room after the answer: its call turns answered then.
	var pc simCall
	for deadline := time.Now().Add(20 * time.Second); ; {
		if pc, err = gw.platform.byCallID(in.CallID); err != nil || pc.Status != "ringing" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || pc.ID != placed.ID || pc.Status != "answered" || !pc.InRoom {
		t.Errorf("gateway call = %+v, %v; want %s answered, in the room", pc, err, placed.ID)
	}
	disabled := s.expect(request{fn: "webhook-endpoints-get", method: http.MethodGet, pattern: "/v1/webhook_endpoints/{id}",
		path: "/v1/webhook_endpoints/" + goneEP["id"].(string), auth: auth}, http.StatusOK)
	if disabled["status"] != "disabled" {
		t.Errorf("endpoint answering call.incoming with 410 = %v, want disabled", disabled)
	}
	s.expect(request{fn: "sessions-delete", method: http.MethodDelete, pattern: "/v1/sessions/{id}",
		path: "/v1/sessions/" + in.Session.SessionID, auth: auth}, http.StatusOK)
	// The next scenario's calls are for its own receiver.
	s.expect(request{fn: "webhook-endpoints-delete", method: http.MethodDelete, pattern: "/v1/webhook_endpoints/{id}",
		path: "/v1/webhook_endpoints/" + ep["id"].(string), auth: auth}, http.StatusOK)
}
