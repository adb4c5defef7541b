package infra_test

// Checks of the SIP fleet (sip-fleet.yaml): the bridge's configuration against the ports
// its nodes open, the Redis it shares with livekit-server (AUTH over TLS), its pool of
// Elastic IPs, the parameters that connect it to the other stacks, and the pinned
// livekit-sip reading its configuration as the container's entry point builds it.

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/bridgeline/bridgeline/infra/cfn"
)

// sipValues stand in for the SIP stack's parameters.
var sipValues = map[string]string{
	"LiveKitURL":        "wss://media.example.test",
	"SipDomainName":     "sip.example.test",
	"MaxCpuUtilization": "0.8",
	"RedisAddress":      "127.0.0.1:1", // nothing listens: the bridge stops right after its config is read
}

// sipConfig mirrors the keys of livekit-sip's config (pkg/config/config.go, v1.8.0) the
// fleet sets. livekit-sip itself ignores a key it does not know (a misspelt key would
// silently keep its default), so the fleet's config is decoded strictly against this.
type sipConfig struct {
	WSURL       string `yaml:"ws_url"`
	SIPPort     int    `yaml:"sip_port"`
	SIPHostname string `yaml:"sip_hostname"`
	TLS         struct {
		Port  int `yaml:"port"`
		Certs []struct {
			CertFile string `yaml:"cert_file"`
			KeyFile  string `yaml:"key_file"`
		} `yaml:"certs"`
	} `yaml:"tls"`
	RTPPort       string  `yaml:"rtp_port"`
	UseExternalIP bool    `yaml:"use_external_ip"`
	HealthPort    int     `yaml:"health_port"`
	MaxCPU        float64 `yaml:"max_cpu_utilization"`
	Logging       struct {
		Level string `yaml:"level"`
		JSON  bool   `yaml:"json"`
	} `yaml:"logging"`
	Redis struct {
		Address  string `yaml:"address"`
		Password string `yaml:"password"`
		TLS      struct {
			Enabled bool `yaml:"enabled"`
		} `yaml:"tls"`
	} `yaml:"redis"`
}

// sipConfigText is SIP_CONFIG's Fn::Sub text in the livekit-sip container, or "".
func sipConfigText(tpl *cfn.Template) string {
	for _, e := range list(containerNamed(tpl, "SipTask", "livekit-sip")["Environment"]) {
		if e["Name"] == "SIP_CONFIG" {
			v, _ := e["Value"].(map[string]any)
			s, _ := v["Fn::Sub"].(string)
			return s
		}
	}
	return ""
}

// entryPointConfig is the config the container's entry point hands livekit-sip: SIP_CONFIG
// with the Redis token appended as it appends it.
func entryPointConfig(t *testing.T, tpl *cfn.Template, password string) string {
	t.Helper()
	text := sipConfigText(tpl)
	if text == "" {
		t.Fatal("no SIP_CONFIG in the livekit-sip container")
	}
	cmd := fmt.Sprint(containerNamed(tpl, "SipTask", "livekit-sip")["Command"])
	if !strings.Contains(cmd, `printf '%s  password: %s\n' "$SIP_CONFIG" "$REDIS_PASSWORD"`) {
		t.Fatalf("the entry point no longer appends the Redis token as this test does: %s", cmd)
	}
	return fmt.Sprintf("%s  password: %s\n", substitute(t, text, sipValues), password)
}

func parseSIPConfig(t *testing.T, text string) sipConfig {
	t.Helper()
	var c sipConfig
	dec := yaml.NewDecoder(strings.NewReader(text))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("SIP_CONFIG is not YAML: %v\n%s", err, text)
	}
	return c
}

func TestSIPFleetSettings(t *testing.T) {
	tpl := load(t, "sip-fleet.yaml")
	task := tpl.Resources["SipTask"].Properties
	if task["NetworkMode"] != "host" || fmt.Sprint(task["RequiresCompatibilities"]) != "[EC2]" {
		t.Errorf("task network mode %v on %v, want host networking on EC2", task["NetworkMode"], task["RequiresCompatibilities"])
	}
	conf := parseSIPConfig(t, entryPointConfig(t, tpl, "tok3n"))
	// The token lands inside redis: (the block is last), next to the address and TLS.
	if conf.Redis.Password != "tok3n" || conf.Redis.Address != sipValues["RedisAddress"] || !conf.Redis.TLS.Enabled {
		t.Errorf("redis = %+v, want the shared Redis over TLS with the appended token", conf.Redis)
	}
	if !conf.UseExternalIP || conf.WSURL != "ws://"+gatewayListen(tpl) || conf.Logging.Level == "" {
		t.Errorf("config = %+v, want the node's public address, the SIP gateway beside it (%s) and logging.level", conf, gatewayListen(tpl))
	}
	if conf.MaxCPU <= 0 || conf.MaxCPU >= 1 {
		t.Errorf("max_cpu_utilization = %v, want a headroom below 1 on a dedicated node", conf.MaxCPU)
	}
	if len(conf.TLS.Certs) != 1 || !strings.Contains(fmt.Sprint(containerNamed(tpl, "SipTask", "livekit-sip")["Command"]), conf.TLS.Certs[0].CertFile) {
		t.Errorf("tls = %+v, want the certificate the entry point writes", conf.TLS)
	}

	// The node opens exactly what the bridge listens on, and not its health port.
	ingress := map[string]bool{}
	for _, r := range list(tpl.Resources["NodeSecurityGroup"].Properties["SecurityGroupIngress"]) {
		ingress[fmt.Sprintf("%v/%v-%v", r["IpProtocol"], r["FromPort"], r["ToPort"])] = true
	}
	lo, hi, _ := strings.Cut(conf.RTPPort, "-")
	want := []string{
		fmt.Sprintf("udp/%d-%d", conf.SIPPort, conf.SIPPort),
		fmt.Sprintf("tcp/%d-%d", conf.SIPPort, conf.SIPPort),
		fmt.Sprintf("tcp/%d-%d", conf.TLS.Port, conf.TLS.Port),
		fmt.Sprintf("udp/%s-%s", lo, hi),
	}
	for _, w := range want {
		if !ingress[w] {
			t.Errorf("node security group does not open %s (has %v)", w, ingress)
		}
	}
	if len(ingress) != len(want) {
		t.Errorf("node security group opens %v, want only %v", ingress, want)
	}
	if conf.HealthPort == 0 {
		t.Error("no health_port: the container's health check reads it")
	}
	hc := fmt.Sprint(containerNamed(tpl, "SipTask", "livekit-sip")["HealthCheck"])
	if !strings.Contains(hc, fmt.Sprintf("/dev/tcp/127.0.0.1/%d", conf.HealthPort)) {
		t.Errorf("health check %s does not read health_port %d", hc, conf.HealthPort)
	}

	// The API secret comes from the control plane's LiveKitCredentials secret.
	var secretFrom string
	for _, s := range list(containerNamed(tpl, "SipTask", "livekit-sip")["Secrets"]) {
		if s["Name"] == "LIVEKIT_API_SECRET" {
			secretFrom, _ = s["ValueFrom"].(map[string]any)["Fn::Sub"].(string)
		}
	}
	if secretFrom != "${LiveKitCredentialsArn}:api_secret::" {
		t.Errorf("LIVEKIT_API_SECRET from %q, want the api_secret field of the LiveKitCredentials secret", secretFrom)
	}

	// Both alarms notify the control plane's topic.
	alarms := tpl.ResourcesOfType("AWS::CloudWatch::Alarm")
	if len(alarms) < 2 {
		t.Errorf("%d alarms, want one for a missing node and one for none", len(alarms))
	}
	for id, a := range alarms {
		if !containsString(refsIn(a.Properties["AlarmActions"]), "AlarmTopicArn") {
			t.Errorf("alarm %s does not notify AlarmTopicArn", id)
		}
	}
}

// containerEnv is a container's plain environment: name -> value (a Ref as its name).
func containerEnv(c map[string]any) map[string]string {
	env := map[string]string{}
	for _, e := range list(c["Environment"]) {
		name, _ := e["Name"].(string)
		switch v := e["Value"].(type) {
		case string:
			env[name] = v
		case map[string]any:
			if r := refsIn(v); len(r) == 1 {
				env[name] = "Ref:" + r[0]
			}
		}
	}
	return env
}

// containerSecrets is a container's secrets: name -> ValueFrom as written (a Ref as
// "Ref:<name>", a Sub as its text).
func containerSecrets(c map[string]any) map[string]string {
	out := map[string]string{}
	for _, e := range list(c["Secrets"]) {
		name, _ := e["Name"].(string)
		switch v := e["ValueFrom"].(type) {
		case string:
			out[name] = v
		case map[string]any:
			if sub, ok := v["Fn::Sub"].(string); ok {
				out[name] = sub
			} else if r, ok := v["Ref"].(string); ok {
				out[name] = "Ref:" + r
			}
		}
	}
	return out
}

// gatewayListen is the SIP gateway's LISTEN_ADDR in the SIP task.
func gatewayListen(tpl *cfn.Template) string {
	return containerEnv(containerNamed(tpl, "SipTask", "sip-gateway"))["LISTEN_ADDR"]
}

// sipGatewayProblems: Bridgeline's SIP gateway runs beside livekit-sip in its task, on
// the node's loopback, and the bridge joins rooms only through it (ws_url), starting
// after it and so stopping before it; the gateway passes joins on to the LiveKit fleet
// with the control plane's LiveKit key and notifies the control plane, signed with the
// SIP secret, which the task may read.
func sipGatewayProblems(tpl *cfn.Template) []string {
	var probs []string
	gw := containerNamed(tpl, "SipTask", "sip-gateway")
	if gw == nil {
		return []string{"no sip-gateway container in SipTask"}
	}
	env, secrets := containerEnv(gw), containerSecrets(gw)
	listen := env["LISTEN_ADDR"]
	if !strings.HasPrefix(listen, "127.0.0.1:") {
		probs = append(probs, fmt.Sprintf("sip-gateway listens on %q, want the node's loopback only", listen))
	}
	if fmt.Sprint(gw["Essential"]) != "true" {
		probs = append(probs, "sip-gateway is not essential: the bridge would take calls no one routes")
	}
	var conf sipConfig
	text := subVar.ReplaceAllStringFunc(sipConfigText(tpl), func(m string) string {
		return sipValues[subVar.FindStringSubmatch(m)[1]]
	})
	if err := yaml.Unmarshal([]byte(text), &conf); err != nil {
		return append(probs, fmt.Sprintf("SIP_CONFIG: %v", err))
	}
	if conf.WSURL != "ws://"+listen {
		probs = append(probs, fmt.Sprintf("livekit-sip ws_url %q, want the gateway at ws://%s", conf.WSURL, listen))
	}
	dependsOnGateway := false
	for _, d := range list(containerNamed(tpl, "SipTask", "livekit-sip")["DependsOn"]) {
		dependsOnGateway = dependsOnGateway || d["ContainerName"] == "sip-gateway" && d["Condition"] == "HEALTHY"
	}
	if !dependsOnGateway {
		probs = append(probs, "livekit-sip does not depend on a healthy sip-gateway (it would start, and stop, out of order)")
	}
	for k, want := range map[string]string{"LIVEKIT_URL": "Ref:LiveKitURL", "LIVEKIT_API_KEY": "Ref:LiveKitAPIKey",
		"CONTROL_PLANE_URL": "Ref:ControlPlaneURL"} {
		if env[k] != want {
			probs = append(probs, fmt.Sprintf("sip-gateway %s = %q, want %s", k, env[k], want))
		}
	}
	for k, want := range map[string]string{"LIVEKIT_API_SECRET": "${LiveKitCredentialsArn}:api_secret::", "SIP_SECRET": "Ref:SIPCredentialsArn"} {
		if secrets[k] != want {
			probs = append(probs, fmt.Sprintf("sip-gateway secret %s from %q, want %s", k, secrets[k], want))
		}
	}
	if !containsString(refsIn(tpl.Resources["TaskExecutionRole"].Properties["Policies"]), "SIPCredentialsArn") {
		probs = append(probs, "TaskExecutionRole cannot read SIPCredentialsArn")
	}
	if hc := fmt.Sprint(gw["HealthCheck"]); !strings.Contains(hc, "sip-gateway health") {
		probs = append(probs, fmt.Sprintf("sip-gateway health check %s, want the binary's own (sip-gateway health)", hc))
	}
	return probs
}

// sipRedisProblems: livekit-sip reaches livekit-server's Redis over TLS with its AUTH
// token, which comes from the livekit fleet's secret (RedisAuthSecretArn) that the task
// may read, and the Redis's security group lets the nodes in.
func sipRedisProblems(tpl *cfn.Template) []string {
	var probs []string
	c := containerNamed(tpl, "SipTask", "livekit-sip")
	if c == nil {
		return []string{"no livekit-sip container in SipTask"}
	}
	var conf sipConfig
	text := subVar.ReplaceAllStringFunc(sipConfigText(tpl), func(m string) string {
		return sipValues[subVar.FindStringSubmatch(m)[1]]
	})
	if err := yaml.Unmarshal([]byte(text), &conf); err != nil {
		return []string{fmt.Sprintf("SIP_CONFIG: %v", err)}
	}
	if !conf.Redis.TLS.Enabled {
		probs = append(probs, "livekit-sip reaches Redis without TLS (AUTH requires it)")
	}
	var from string
	for _, s := range list(c["Secrets"]) {
		if s["Name"] == "REDIS_PASSWORD" {
			v, _ := s["ValueFrom"].(map[string]any)
			from, _ = v["Fn::Sub"].(string)
		}
	}
	if want := "${RedisAuthSecretArn}:token::"; from != want {
		probs = append(probs, fmt.Sprintf("livekit-sip REDIS_PASSWORD from %q, want %q", from, want))
	}
	if !containsString(refsIn(tpl.Resources["TaskExecutionRole"].Properties["Policies"]), "RedisAuthSecretArn") {
		probs = append(probs, "TaskExecutionRole cannot read RedisAuthSecretArn")
	}
	ing := tpl.Resources["RedisIngress"].Properties
	if !containsString(refsIn(ing["GroupId"]), "RedisSecurityGroupId") || !containsString(refsIn(ing["SourceSecurityGroupId"]), "NodeSecurityGroup") {
		probs = append(probs, fmt.Sprintf("RedisIngress = %v, want the nodes let into RedisSecurityGroupId", ing))
	}
	return probs
}

var poolAddress = regexp.MustCompile(`elastic-ip/\$\{(SipAddress[0-9]+)\.AllocationId\}`)

// sipAddressProblems: the pool of Elastic IPs holds a node per address for twice the
// most nodes (a deploy's overlap), the node group can grow to it, every pool address is
// one a node may take at boot, and nodes may associate no other.
func sipAddressProblems(tpl *cfn.Template) []string {
	var probs []string
	pool := tpl.ResourcesOfType("AWS::EC2::EIP")
	most := largestValue(tpl.Parameters["SipNodeCount"])
	if float64(len(pool)) < 2*most {
		probs = append(probs, fmt.Sprintf("%d pool addresses for up to %v nodes: a deploy needs %v", len(pool), most, 2*most))
	}
	if maxSize, _ := number(tpl.Resources["NodeGroup"].Properties["MaxSize"]); maxSize < 2*most {
		probs = append(probs, fmt.Sprintf("NodeGroup MaxSize %v below a deploy's %v nodes", maxSize, 2*most))
	}
	userData, _ := yaml.Marshal(tpl.Resources["NodeLaunchTemplate"].Properties)
	allowed := map[string]bool{}
	for _, p := range list(tpl.Resources["NodeRole"].Properties["Policies"]) {
		for _, s := range list(p["PolicyDocument"].(map[string]any)["Statement"]) {
			if fmt.Sprint(s["Action"]) != "ec2:AssociateAddress" {
				continue
			}
			res, _ := s["Resource"].([]any)
			if len(res) == 0 {
				probs = append(probs, fmt.Sprintf("ec2:AssociateAddress on %v, want the pool's addresses only", s["Resource"]))
			}
			for _, r := range res {
				sub, _ := r.(map[string]any)["Fn::Sub"].(string)
				if m := poolAddress.FindStringSubmatch(sub); m != nil {
					allowed[m[1]] = true
				} else if strings.Contains(sub, "elastic-ip/*") {
					probs = append(probs, "nodes may associate any Elastic IP")
				}
			}
		}
	}
	for id := range pool {
		if !allowed[id] {
			probs = append(probs, fmt.Sprintf("nodes may not associate pool address %s", id))
		}
		if !strings.Contains(string(userData), "${"+id+".AllocationId}") {
			probs = append(probs, fmt.Sprintf("the nodes' boot never tries pool address %s", id))
		}
	}
	return probs
}

// TestSIPNodesEgress: the SIP nodes reach the internet (any provider, any port) and, of
// their VPC, only Redis and the control plane's internal API endpoint: no egress rule
// covers an address of a range a VPC's CIDR comes from, the rules with a CIDR cover
// every other IPv4 address, and the rules naming a security group are those two, on
// their ports. The bridge dials whatever a trunk's host resolves to when it dials.
func TestSIPNodesEgress(t *testing.T) {
	tpl := load(t, "sip-fleet.yaml")
	vpcRanges := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("172.16.0.0/12"),
		netip.MustParsePrefix("192.168.0.0/16"), netip.MustParsePrefix("100.64.0.0/10"), netip.MustParsePrefix("198.18.0.0/15")}
	var blocks []netip.Prefix
	groups := map[string]string{}
	rules := list(tpl.Resources["NodeSecurityGroup"].Properties["SecurityGroupEgress"])
	if len(rules) == 0 || len(rules) > 60 {
		t.Fatalf("node security group has %d egress rules, want some and at most 60 (the default quota)", len(rules))
	}
	for _, r := range rules {
		if _, ok := r["CidrIpv6"]; ok {
			t.Errorf("egress rule %v: IPv6 is not needed", r)
		}
		if g, ok := r["DestinationSecurityGroupId"]; ok {
			groups[fmt.Sprint(g)] = fmt.Sprintf("%v/%v-%v", r["IpProtocol"], r["FromPort"], r["ToPort"])
			continue
		}
		p, err := netip.ParsePrefix(fmt.Sprint(r["CidrIp"]))
		if err != nil || fmt.Sprint(r["IpProtocol"]) != "-1" {
			t.Errorf("egress rule %v: want all protocols to a CIDR", r)
			continue
		}
		for _, v := range vpcRanges {
			if p.Overlaps(v) {
				t.Errorf("egress rule %s reaches %s, where the VPC may be", p, v)
			}
		}
		blocks = append(blocks, p)
	}
	want := map[string]string{"map[Ref:RedisSecurityGroupId]": "tcp/6379-6379", "map[Ref:InternalEndpointSecurityGroupId]": "tcp/443-443"}
	if !reflect.DeepEqual(groups, want) {
		t.Errorf("egress to security groups %v, want %v", groups, want)
	}
	// Every IPv4 address outside the VPC ranges is covered: count addresses (the blocks
	// must not overlap, or the count would lie).
	var total uint64
	for i, p := range blocks {
		for _, q := range blocks[i+1:] {
			if p.Overlaps(q) {
				t.Errorf("egress blocks %s and %s overlap", p, q)
			}
		}
		total += 1 << (32 - p.Bits())
	}
	var vpc uint64
	for _, v := range vpcRanges {
		vpc += 1 << (32 - v.Bits())
	}
	if total+vpc != 1<<32 {
		t.Errorf("egress blocks cover %d addresses, want all %d outside the VPC ranges", total, 1<<32-vpc)
	}
	for _, a := range []string{"54.172.60.1", "8.8.8.8", "198.51.100.7", "203.0.113.9"} {
		covered := false
		for _, p := range blocks {
			covered = covered || p.Contains(netip.MustParseAddr(a))
		}
		if !covered {
			t.Errorf("a provider at %s is not reachable", a)
		}
	}
}

// TestSIPStacksConnect: the parameters docs/deploy.md tells operators to copy into the
// SIP stack exist as outputs on the other side.
func TestSIPStacksConnect(t *testing.T) {
	control := load(t, "../template.yaml")
	fleet := load(t, "livekit-fleet.yaml")
	sip := load(t, "sip-fleet.yaml")
	for _, l := range []struct {
		from     *cfn.Template
		fromName string
		output   string
		param    string
	}{
		{control, "template.yaml", "LiveKitCredentialsArn", "LiveKitCredentialsArn"},
		{control, "template.yaml", "AlarmTopicArn", "AlarmTopicArn"},
		{control, "template.yaml", "InternalURL", "ControlPlaneURL"},
		{control, "template.yaml", "SIPCredentialsArn", "SIPCredentialsArn"},
		{control, "template.yaml", "InternalEndpointSecurityGroupId", "InternalEndpointSecurityGroupId"},
		{fleet, "livekit-fleet.yaml", "PublicURL", "LiveKitURL"},
		{fleet, "livekit-fleet.yaml", "RedisAddress", "RedisAddress"},
		{fleet, "livekit-fleet.yaml", "RedisAuthSecretArn", "RedisAuthSecretArn"},
		{fleet, "livekit-fleet.yaml", "RedisSecurityGroupId", "RedisSecurityGroupId"},
	} {
		if _, ok := l.from.Outputs[l.output]; !ok {
			t.Errorf("%s has no output %s", l.fromName, l.output)
		}
		if _, ok := sip.Parameters[l.param]; !ok {
			t.Errorf("sip-fleet.yaml has no parameter %s for %s's %s", l.param, l.fromName, l.output)
		}
	}
	// The secret RedisAuthSecretArn names is the one livekit-server's token comes from.
	if fmt.Sprint(fleet.Outputs["RedisAuthSecretArn"]["Value"]) != "map[Ref:RedisAuth]" {
		t.Errorf("RedisAuthSecretArn = %v, want the RedisAuth secret", fleet.Outputs["RedisAuthSecretArn"]["Value"])
	}
	// The secret's api_secret field, which the SIP fleet reads, exists.
	secret, _ := control.Resources["LiveKitCredentials"].Properties["SecretString"].(map[string]any)["Fn::ToJsonString"].(map[string]any)
	if _, ok := secret["api_secret"]; !ok {
		t.Errorf("LiveKitCredentials secret has no api_secret field: %v", secret)
	}
}

// TestSIPAcceptsFleetConfig hands the configuration the container's entry point builds to
// the pinned livekit-sip: it must parse it (a value of the wrong type stops it; unknown
// keys TestSIPFleetSettings refuses) and initialise (logging, TLS settings), then go on to
// dial Redis, where this test's unreachable address stops it.
func TestSIPAcceptsFleetConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("runs livekit-sip")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", "../scripts/build-livekit-sip.sh").Output()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("build livekit-sip: %v", err)
		}
		t.Skipf("livekit-sip not built: %v", err)
	}
	bin := strings.TrimSpace(string(out))
	dir := t.TempDir()
	certFile, keyFile := selfSigned(t, dir)
	conf := entryPointConfig(t, load(t, "sip-fleet.yaml"), "fleet-redis-token")
	// Loopback only and the test's own certificate, whatever the config says.
	conf = strings.Replace(conf, "use_external_ip: true", "use_external_ip: false\nnat_1_to_1_ip: 127.0.0.1\nlisten_ip: 127.0.0.1", 1)
	conf = strings.ReplaceAll(conf, "/tmp/sip-tls/cert.pem", certFile)
	conf = strings.ReplaceAll(conf, "/tmp/sip-tls/key.pem", keyFile)
	run, cancelRun := context.WithTimeout(ctx, 30*time.Second)
	defer cancelRun()
	cmd := exec.CommandContext(run, bin, "--config-body", conf)
	cmd.Dir = filepath.Dir(certFile)
	cmd.Env = append(os.Environ(), "LIVEKIT_API_KEY=fleetkey", "LIVEKIT_API_SECRET=fleet-secret-fleet-secret-fleet-secret-0")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.Run()
	if run.Err() != nil {
		t.Fatalf("livekit-sip kept running with an unreachable Redis; log:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "connecting to redis") || strings.Contains(logs.String(), "could not parse config") {
		t.Errorf("livekit-sip did not accept the fleet config; log:\n%s", logs.String())
	}
}
