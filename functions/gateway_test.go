package functions_test

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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/platform/sim/simhook"
)

// platformGateway is a running cmd/platform-gateway.
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
	if b, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "../cmd/platform-gateway").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/platform-gateway: %v\n%s", err, b)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "CONTROL_PLANE_URL="+controlPlane, "SIM_SECRET="+secret,
		"LISTEN_ADDR=127.0.0.1:0", "RING_DELAY=50ms")
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
	resp, err := http.Get(g.url + "/sim/calls")
	if err != nil {
		return simCall{}, err
	}
	defer resp.Body.Close()
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

// sendNotification hands platform-sim the testdata notification event, as API Gateway
// delivers it, signed with secret at t; it returns the function's status.
func (s *stack) sendNotification(secret string, at time.Time) int {
	ev := readJSON(s.t, "http-api-v2-platform-sim.json")
	if secret != "" {
		ev["headers"].(map[string]any)["sim-signature"] = simhook.Sign(secret, []byte(ev["body"].(string)), at)
	}
	var out events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(s.invoke("platform-sim", mustJSON(s.t, ev)), &out); err != nil {
		s.t.Fatal(err)
	}
	return out.StatusCode
}
