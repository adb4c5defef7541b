package infra_test

// TURN as clients are told about it: the pinned livekit-server runs the fleet's own
// configuration (LIVEKIT_CONFIG of livekit-fleet.yaml, with loopback addresses and free
// ports in place of the node's) beside a real Redis that requires AUTH over TLS, a
// client joins a room at the signal level, and every ICE server URL of the join response
// must name a listener the template declares. Then a TURN client allocates a relay
// through a TLS terminator standing in for the TURN load balancer's listener (the
// hostname's certificate, plain TCP on to turn.tls_port), with the join's credentials.
//
// TURN listens on turn.bind_addresses, not on the top-level bind_addresses, and its
// default is 0.0.0.0 (pkg/service/turn.go and pkg/config/config.go, v1.11.0; v1.8.4 had
// no such setting and always bound 0.0.0.0), so the test sets it to loopback as well,
// picks free ports and kills the server when it ends.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/livekit/protocol/auth"
	lkproto "github.com/livekit/protocol/livekit"
	lksdk "github.com/livekit/server-sdk-go/v2"
	"github.com/pion/turn/v5"
	"google.golang.org/protobuf/proto"
	"gopkg.in/yaml.v3"

	"github.com/bridgeline/bridgeline/infra/cfn"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver/livekittest"
)

const (
	turnTestKey    = "fleetkey"
	turnTestSecret = "fleet-secret-fleet-secret-fleet-secret-0"
)

// certFor names, for each hostname parameter, the certificate parameter of its TLS
// listener.
var certFor = map[string]string{
	"DomainName":     "CertificateArn",
	"TurnDomainName": "TurnCertificateArn",
}

func TestTurnICEServers(t *testing.T) {
	bin := livekitServerBin(t)
	redisBin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is required in CI (scripts/install-media-deps.sh installs it)")
		}
		t.Skip("redis-server not installed")
	}
	tpl := load(t, "livekit-fleet.yaml")
	dir := t.TempDir()
	certFile, keyFile := selfSigned(t, dir)
	password := "fleet-redis-token-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	redisAddr := startRedis(t, redisBin, certFile, keyFile, password)

	webhooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer webhooks.Close()

	conf, ports := loopbackFleetConfig(t, tpl, redisAddr, certFile, webhooks.URL)
	body, err := yaml.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	base := append(os.Environ(), "LIVEKIT_CONFIG="+string(body), "LIVEKIT_KEYS="+turnTestKey+": "+turnTestSecret)

	// Without the token the server cannot use Redis: AUTH is really required.
	t.Run("no REDIS_PASSWORD", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin)
		cmd.Env = withoutEnv(base, "REDIS_PASSWORD")
		out, _ := cmd.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("livekit-server kept running without the Redis token; log:\n%s", out)
		}
		if !strings.Contains(string(out), "NOAUTH") {
			t.Errorf("livekit-server log lacks Redis's NOAUTH refusal:\n%s", out)
		}
	})

	srv := startFleetServer(t, bin, append(withoutEnv(base, "REDIS_PASSWORD"), "REDIS_PASSWORD="+password), ports.signal)
	httpURL := fmt.Sprintf("http://127.0.0.1:%d", ports.signal)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rooms := lksdk.NewRoomServiceClient(httpURL, turnTestKey, turnTestSecret)
	if _, err := rooms.CreateRoom(ctx, &lkproto.CreateRoomRequest{Name: "turn-check"}); err != nil {
		t.Fatalf("CreateRoom: %v\n%s", err, srv.log())
	}
	join := signalJoin(t, ports.signal, "turn-check")
	if len(join.IceServers) == 0 {
		t.Fatal("join response has no ICE servers")
	}
	var turns int
	for _, s := range join.IceServers {
		t.Logf("join response ICE server: %v", s.Urls)
		for _, u := range s.Urls {
			if strings.HasPrefix(u, "turn") && (s.Username == "" || s.Credential == "") {
				t.Errorf("ICE server %s without TURN credentials", u)
			}
			if strings.HasPrefix(u, "turns:") {
				turns++
			}
			if err := matchListener(tpl, conf, ports, u); err != nil {
				t.Errorf("ICE server %s: %v", u, err)
			}
		}
	}
	if turns == 0 {
		t.Fatalf("no turns: URL among %v: TCP-443-only callers get no relay", join.IceServers)
	}

	// What the TURN load balancer does: TLS with the TURN hostname's certificate, then
	// TCP to the node's turn.tls_port.
	tlsPort := conf["turn"].(map[string]any)["tls_port"].(int)
	for _, s := range join.IceServers {
		for _, u := range s.Urls {
			if strings.HasPrefix(u, "turns:") {
				relayThroughTLS(t, u, s.Username, s.Credential, certFile, keyFile, tlsPort)
			}
		}
	}
}

// relayThroughTLS allocates a TURN relay for the turns: URL u, through a TLS terminator
// on loopback that presents the URL host's certificate and forwards to backendPort.
func relayThroughTLS(t *testing.T, u, username, credential, certFile, keyFile string, backendPort int) {
	t.Helper()
	host := strings.SplitN(strings.TrimPrefix(u, "turns:"), ":", 2)[0]
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer ln.Close()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			front, err := ln.Accept()
			if err != nil {
				return // the listener closed
			}
			back, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(backendPort)))
			if err != nil {
				front.Close()
				continue
			}
			wg.Add(2)
			// Each copy ends when either side closes; closing both ends the other.
			go func() { defer wg.Done(); io.Copy(back, front); back.Close(); front.Close() }()
			go func() { defer wg.Done(); io.Copy(front, back); back.Close(); front.Close() }()
		}
	}()

	pem, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	// The client checks the certificate against the URL's host, as a browser does.
	conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{ServerName: host, RootCAs: roots, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("TLS to the TURN listener as %s: %v", host, err)
	}
	defer conn.Close()
	client, err := turn.NewClient(&turn.ClientConfig{
		TURNServerAddr: ln.Addr().String(),
		STUNServerAddr: ln.Addr().String(),
		Username:       username,
		Password:       credential,
		Conn:           turn.NewSTUNConn(conn),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if err := client.Listen(); err != nil {
		t.Fatal(err)
	}
	relay, err := client.Allocate()
	if err != nil {
		t.Fatalf("TURN allocation through %s with the join's credentials: %v", u, err)
	}
	t.Logf("%s: relay allocated at %s", u, relay.LocalAddr())
	relay.Close()
}

// fleetPorts are the free ports the test runs on; original maps each back to the port
// the template configures there.
type fleetPorts struct {
	signal   int
	original map[int]int
}

// loopbackFleetConfig renders the template's LIVEKIT_CONFIG and replaces what ties it to
// a node on AWS: addresses become loopback, ports free ones (other than 7880-7882), the
// UDP range one port, Redis the test's, trusted through the test's CA.
func loopbackFleetConfig(t *testing.T, tpl *cfn.Template, redisAddr, caFile, webhookURL string) (map[string]any, fleetPorts) {
	t.Helper()
	host, port, _ := net.SplitHostPort(redisAddr)
	values := map[string]string{}
	for k, v := range fleetValues {
		values[k] = v
	}
	values["Redis.PrimaryEndPoint.Address"], values["Redis.PrimaryEndPoint.Port"] = host, port
	var conf map[string]any
	if err := yaml.Unmarshal([]byte(substitute(t, serverConfig(t, container(t, tpl)), values)), &conf); err != nil {
		t.Fatalf("LIVEKIT_CONFIG is not YAML: %v", err)
	}
	section := func(name string) map[string]any {
		m, ok := conf[name].(map[string]any)
		if !ok {
			t.Fatalf("LIVEKIT_CONFIG has no %s section", name)
		}
		return m
	}
	ports := fleetPorts{original: map[int]int{}}
	swap := func(m map[string]any, key string, free int) int {
		orig, ok := m[key].(int)
		if !ok {
			t.Fatalf("LIVEKIT_CONFIG %s = %v, want a port", key, m[key])
		}
		for _, reserved := range []int{7880, 7881, 7882} {
			if free == reserved {
				t.Fatalf("free port %d is one of the local stack's", free)
			}
		}
		m[key] = free
		ports.original[free] = orig
		return free
	}
	ports.signal = swap(conf, "port", livekittest.FreePort(t, "tcp"))
	conf["bind_addresses"] = []string{"127.0.0.1"}

	rtc := section("rtc")
	swap(rtc, "tcp_port", livekittest.FreePort(t, "tcp"))
	delete(rtc, "port_range_start")
	delete(rtc, "port_range_end")
	rtc["udp_port"] = strconv.Itoa(livekittest.FreePort(t, "udp"))
	rtc["use_external_ip"] = false
	rtc["node_ip"] = "127.0.0.1"

	turn := section("turn")
	turn["bind_addresses"] = []string{"127.0.0.1"}
	swap(turn, "tls_port", livekittest.FreePort(t, "tcp"))
	if _, ok := turn["udp_port"]; ok {
		swap(turn, "udp_port", livekittest.FreePort(t, "udp"))
	}

	redisTLS, _ := section("redis")["tls"].(map[string]any)
	if redisTLS == nil {
		t.Fatal("LIVEKIT_CONFIG redis has no tls section")
	}
	redisTLS["ca_cert_file"] = caFile
	section("webhook")["urls"] = []string{webhookURL}
	return conf, ports
}

// matchListener explains why an ICE server URL names no listener of the template, or
// returns nil.
func matchListener(tpl *cfn.Template, conf map[string]any, ports fleetPorts, raw string) error {
	scheme, rest, ok := strings.Cut(raw, ":")
	if !ok {
		return fmt.Errorf("no scheme")
	}
	u, err := url.Parse("ice://" + rest)
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return fmt.Errorf("no port")
	}
	transport := u.Query().Get("transport")
	turn, _ := conf["turn"].(map[string]any)
	switch scheme {
	case "turns":
		// TLS at a load balancer: host is one of the stack's hostnames, and its listener
		// on that port, with that hostname's certificate, forwards to turn.tls_port.
		if transport != "tcp" {
			return fmt.Errorf("transport %q, want tcp", transport)
		}
		domainParam := ""
		for p := range certFor {
			if fleetValues[p] == u.Hostname() {
				domainParam = p
			}
		}
		if domainParam == "" {
			return fmt.Errorf("host %q is none of the stack's hostnames", u.Hostname())
		}
		tlsPort := ports.original[turn["tls_port"].(int)]
		return tlsListenerTo(tpl, port, certFor[domainParam], tlsPort)
	case "turn":
		// TURN/UDP straight to the node: its own address, a port its security group
		// opens to everyone and the container maps.
		if transport != "udp" {
			return fmt.Errorf("transport %q, want udp (TURN/TCP has no listener)", transport)
		}
		rtc, _ := conf["rtc"].(map[string]any)
		if u.Hostname() != rtc["node_ip"] {
			return fmt.Errorf("host %q, want the node's address %v", u.Hostname(), rtc["node_ip"])
		}
		orig, ok := ports.original[port]
		if !ok || turn["udp_port"] != port {
			return fmt.Errorf("port %d is not turn.udp_port", port)
		}
		return nodePortOpen(tpl, "udp", orig)
	case "stun", "stuns":
		return fmt.Errorf("a STUN server outside the stack (TURN/UDP on the node serves STUN)")
	}
	return fmt.Errorf("unknown scheme %q", scheme)
}

func tlsListenerTo(tpl *cfn.Template, port int, certParam string, targetPort int) error {
	for id, l := range tpl.ResourcesOfType("AWS::ElasticLoadBalancingV2::Listener") {
		p := l.Properties
		if p["Protocol"] != "TLS" || p["Port"] != float64(port) {
			continue
		}
		if !containsString(refsIn(p["Certificates"]), certParam) {
			continue
		}
		for _, a := range list(p["DefaultActions"]) {
			for _, tgID := range refsIn(a["TargetGroupArn"]) {
				tg := tpl.Resources[tgID].Properties
				if tg["Port"] != float64(targetPort) || tg["Protocol"] != "TCP" {
					return fmt.Errorf("listener %s forwards to %s on %v/%v, want TCP %d (turn.tls_port)", id, tgID, tg["Protocol"], tg["Port"], targetPort)
				}
				for _, lb := range list(tpl.Resources["LiveKitService"].Properties["LoadBalancers"]) {
					if containsString(refsIn(lb["TargetGroupArn"]), tgID) && lb["ContainerPort"] == float64(targetPort) {
						return nodePortOpen(tpl, "tcp", targetPort)
					}
				}
				return fmt.Errorf("target group %s does not register livekit-server's port %d", tgID, targetPort)
			}
		}
	}
	return fmt.Errorf("no TLS listener on %d with certificate %s", port, certParam)
}

func nodePortOpen(tpl *cfn.Template, proto string, port int) error {
	for _, r := range list(tpl.Resources["NodeSecurityGroup"].Properties["SecurityGroupIngress"]) {
		if r["IpProtocol"] == proto && r["FromPort"] == float64(port) && r["ToPort"] == float64(port) {
			c := containerNamed(tpl, "LiveKitTask", "livekit-server")
			for _, m := range list(c["PortMappings"]) {
				if m["ContainerPort"] == float64(port) && m["Protocol"] == proto {
					return nil
				}
			}
			return fmt.Errorf("the container does not map %s/%d", proto, port)
		}
	}
	return fmt.Errorf("NodeSecurityGroup does not open %s/%d", proto, port)
}

// signalJoin joins room at the signal level and returns the server's join response.
func signalJoin(t *testing.T, port int, room string) *lkproto.JoinResponse {
	t.Helper()
	tok, err := auth.NewAccessToken(turnTestKey, turnTestSecret).SetIdentity("caller").SetValidFor(time.Minute).
		SetVideoGrant(&auth.VideoGrant{RoomJoin: true, Room: room}).ToJWT()
	if err != nil {
		t.Fatal(err)
	}
	q := url.Values{"access_token": {tok}, "protocol": {"15"}, "sdk": {"go"}, "auto_subscribe": {"1"}}
	ws, resp, err := websocket.DefaultDialer.Dial(fmt.Sprintf("ws://127.0.0.1:%d/rtc?%s", port, q.Encode()), nil)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("signal connect: %v (HTTP %d)", err, status)
	}
	defer ws.Close()
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("read join response: %v", err)
		}
		var res lkproto.SignalResponse
		if err := proto.Unmarshal(msg, &res); err != nil {
			t.Fatalf("signal message: %v", err)
		}
		if j := res.GetJoin(); j != nil {
			return j
		}
	}
}

type fleetServer struct {
	mu   sync.Mutex
	logs strings.Builder
}

func (s *fleetServer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.Write(p)
}

func (s *fleetServer) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// startFleetServer runs livekit-server until the test ends and waits until it answers.
func startFleetServer(t *testing.T, bin string, env []string, port int) *fleetServer {
	t.Helper()
	srv := &fleetServer{}
	cmd := exec.Command(bin)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = srv, srv
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		// A drain would wait for the test's room to close; nothing here needs one.
		cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("livekit-server log:\n%s", srv.log())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port)); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return srv
			}
		}
		select {
		case <-done:
			t.Fatalf("livekit-server exited; log:\n%s", srv.log())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("livekit-server not ready; log:\n%s", srv.log())
	return nil
}

// startRedis runs redis-server on loopback, TLS only, AUTH required, until the test ends.
func startRedis(t *testing.T, bin, certFile, keyFile, password string) string {
	t.Helper()
	port := livekittest.FreePort(t, "tcp")
	cmd := exec.Command(bin, "--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--tls-cert-file", certFile, "--tls-key-file", keyFile, "--tls-auth-clients", "no",
		"--requirepass", password, "--save", "", "--appendonly", "no", "--dir", filepath.Dir(certFile))
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cfg := &tls.Config{InsecureSkipVerify: true} // only to see that it listens
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if c, err := tls.Dial("tcp", addr, cfg); err == nil {
			c.Close()
			return addr
		}
		select {
		case <-done:
			t.Fatalf("redis-server exited:\n%s", logs.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatal("redis-server did not start")
	return ""
}

// selfSigned writes a certificate for 127.0.0.1 (Redis) and the TURN hostname (the TURN
// listener) and its key (PEM) into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{fleetValues["TurnDomainName"]},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func withoutEnv(env []string, name string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}

// livekitServerBin is the pinned build (scripts/build-livekit-server.sh, which honours
// LIVEKIT_SERVER_VERSION).
func livekitServerBin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: runs livekit-server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", "../scripts/build-livekit-server.sh").Output()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("build livekit-server: %v", err)
		}
		t.Skipf("livekit-server not built: %v", err)
	}
	return strings.TrimSpace(string(out))
}
