package infra_test

// Checks of the media fleet stack (livekit-fleet.yaml): the settings the design card
// asks for, the configuration livekit-server is given (parsed by the pinned
// livekit-server itself), and the parameters that connect it to template.yaml.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/bridgeline/bridgeline/infra/cfn"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

func load(t *testing.T, path string) *cfn.Template {
	t.Helper()
	tpl, err := cfn.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

// container returns the livekit-server container definition.
func container(t *testing.T, tpl *cfn.Template) map[string]any {
	t.Helper()
	task := tpl.Resources["LiveKitTask"]
	if task.Type != "AWS::ECS::TaskDefinition" {
		t.Fatalf("LiveKitTask is %q", task.Type)
	}
	for _, c := range task.Properties["ContainerDefinitions"].([]any) {
		c := c.(map[string]any)
		if c["Name"] == "livekit-server" {
			return c
		}
	}
	t.Fatal("no livekit-server container")
	return nil
}

// serverConfig returns LIVEKIT_CONFIG's Fn::Sub text.
func serverConfig(t *testing.T, c map[string]any) string {
	t.Helper()
	for _, e := range c["Environment"].([]any) {
		e := e.(map[string]any)
		if e["Name"] == "LIVEKIT_CONFIG" {
			sub, _ := e["Value"].(map[string]any)["Fn::Sub"].(string)
			if sub == "" {
				t.Fatalf("LIVEKIT_CONFIG = %v, want a !Sub text", e["Value"])
			}
			return sub
		}
	}
	t.Fatal("no LIVEKIT_CONFIG in the container's environment")
	return ""
}

var subVar = regexp.MustCompile(`\$\{([A-Za-z0-9.:]+)\}`)

// substitute fills the ${...} of a !Sub text from values; an unknown name fails.
func substitute(t *testing.T, text string, values map[string]string) string {
	t.Helper()
	return subVar.ReplaceAllStringFunc(text, func(m string) string {
		name := subVar.FindStringSubmatch(m)[1]
		v, ok := values[name]
		if !ok {
			t.Fatalf("LIVEKIT_CONFIG uses ${%s}, which the test has no value for", name)
		}
		return v
	})
}

// fleetValues stand in for the stack's parameters and attributes.
var fleetValues = map[string]string{
	"Redis.PrimaryEndPoint.Address": "127.0.0.1",
	"Redis.PrimaryEndPoint.Port":    "1", // nothing listens: the server stops right after its config is read
	"LiveKitAPIKey":                 "fleetkey",
	"ControlPlaneWebhookURL":        "https://k7m2p9q4r1-vpce-0a1b2c3d4e5f60718.execute-api.us-east-1.amazonaws.com/prod/internal/livekit/webhook",
	"DomainName":                    "media.example.test",
	"TurnDomainName":                "turn.example.test",
}

type liveKitConfig struct {
	Port int `yaml:"port"`
	RTC  struct {
		TCPPort        int  `yaml:"tcp_port"`
		PortRangeStart int  `yaml:"port_range_start"`
		PortRangeEnd   int  `yaml:"port_range_end"`
		UseExternalIP  bool `yaml:"use_external_ip"`
		UseICELite     bool `yaml:"use_ice_lite"`
	} `yaml:"rtc"`
	Redis struct {
		Address string `yaml:"address"`
		TLS     struct {
			Enabled bool `yaml:"enabled"`
		} `yaml:"tls"`
	} `yaml:"redis"`
	Room struct {
		AutoCreate *bool `yaml:"auto_create"`
	} `yaml:"room"`
	Webhook struct {
		APIKey string   `yaml:"api_key"`
		URLs   []string `yaml:"urls"`
		Filter struct {
			IncludeEvents []string `yaml:"include_events"`
		} `yaml:"filter_params"`
	} `yaml:"webhook"`
	Keys   map[string]string `yaml:"keys"`
	Agents struct {
		TargetLoad float64 `yaml:"target_load"`
	} `yaml:"agents"`
	TURN struct {
		Enabled     bool   `yaml:"enabled"`
		Domain      string `yaml:"domain"`
		TLSPort     int    `yaml:"tls_port"`
		UDPPort     int    `yaml:"udp_port"`
		ExternalTLS bool   `yaml:"external_tls"`
	} `yaml:"turn"`
}

func TestFleetSettings(t *testing.T) {
	tpl := load(t, "livekit-fleet.yaml")
	task := tpl.Resources["LiveKitTask"].Properties
	if task["NetworkMode"] != "host" || fmt.Sprint(task["RequiresCompatibilities"]) != "[EC2]" {
		t.Errorf("task network mode %v on %v, want host networking on EC2", task["NetworkMode"], task["RequiresCompatibilities"])
	}
	c := container(t, tpl)
	var conf liveKitConfig
	if err := yaml.Unmarshal([]byte(substitute(t, serverConfig(t, c), fleetValues)), &conf); err != nil {
		t.Fatalf("LIVEKIT_CONFIG is not YAML: %v", err)
	}
	if conf.Room.AutoCreate == nil || *conf.Room.AutoCreate {
		t.Error("room.auto_create must be set to false")
	}
	if len(conf.Keys) != 0 {
		t.Error("LIVEKIT_CONFIG carries keys; the secret must come from Secrets Manager")
	}
	if conf.Webhook.APIKey != "fleetkey" || len(conf.Webhook.URLs) != 1 || conf.Webhook.URLs[0] != fleetValues["ControlPlaneWebhookURL"] {
		t.Errorf("webhook = %+v, want the control plane's receiver signed with the API key", conf.Webhook)
	}
	if !slices.Equal(conf.Webhook.Filter.IncludeEvents, rtc.ReceivedEvents) {
		t.Errorf("webhook.filter_params.include_events = %v, want the events the control plane acts on, %v",
			conf.Webhook.Filter.IncludeEvents, rtc.ReceivedEvents)
	}
	if conf.Redis.Address != "127.0.0.1:1" || !conf.Redis.TLS.Enabled {
		t.Errorf("redis = %+v, want the ElastiCache endpoint over TLS", conf.Redis)
	}
	if !conf.RTC.UseExternalIP || conf.RTC.TCPPort == 0 || conf.RTC.PortRangeStart == 0 || conf.RTC.PortRangeEnd <= conf.RTC.PortRangeStart {
		t.Errorf("rtc = %+v, want a UDP port range, a TCP fallback port and the node's public address", conf.RTC)
	}
	// A full ICE agent makes one join in several wait a second (livekitserver.Config.FullICE).
	if !conf.RTC.UseICELite {
		t.Error("rtc.use_ice_lite must be true: the clients nominate, with no peer-reflexive wait")
	}
	if !conf.TURN.Enabled || !conf.TURN.ExternalTLS || conf.TURN.TLSPort == 0 {
		t.Errorf("turn = %+v, want TURN with TLS terminated at the load balancer", conf.TURN)
	}
	// At LiveKit's default 0.7 a persona worker gets no job once 70% of its slots are
	// taken (mediafleet/livekitserver.AgentTargetLoad).
	if conf.Agents.TargetLoad != 1 {
		t.Errorf("agents.target_load = %v, want 1", conf.Agents.TargetLoad)
	}

	// The API secret reaches the container from Secrets Manager.
	var keysFrom string
	for _, s := range c["Secrets"].([]any) {
		s := s.(map[string]any)
		if s["Name"] == "LIVEKIT_KEYS" {
			keysFrom, _ = s["ValueFrom"].(map[string]any)["Fn::Sub"].(string)
		}
	}
	if keysFrom != "${LiveKitCredentialsArn}:keys::" {
		t.Errorf("LIVEKIT_KEYS from %q, want the keys field of the LiveKitCredentials secret", keysFrom)
	}

	// Security groups open exactly the media ports the config uses.
	ingress := map[string]bool{}
	for _, r := range list(tpl.Resources["NodeSecurityGroup"].Properties["SecurityGroupIngress"]) {
		ingress[fmt.Sprintf("%v/%v-%v", r["IpProtocol"], r["FromPort"], r["ToPort"])] = true
	}
	for _, want := range []string{
		fmt.Sprintf("udp/%d-%d", conf.RTC.PortRangeStart, conf.RTC.PortRangeEnd),
		fmt.Sprintf("tcp/%d-%d", conf.RTC.TCPPort, conf.RTC.TCPPort),
		fmt.Sprintf("tcp/%d-%d", conf.Port, conf.Port),
		fmt.Sprintf("tcp/%d-%d", conf.TURN.TLSPort, conf.TURN.TLSPort),
	} {
		if !ingress[want] {
			t.Errorf("node security group does not open %s (has %v)", want, ingress)
		}
	}

	// TLS terminates at a network load balancer that forwards to the signalling port.
	lb := tpl.Resources["LoadBalancer"].Properties
	if lb["Type"] != "network" || lb["Scheme"] != "internet-facing" {
		t.Errorf("load balancer = %v, want an internet-facing NLB", lb)
	}
	listeners := tpl.ResourcesOfType("AWS::ElasticLoadBalancingV2::Listener")
	sig := listeners["SignalListener"].Properties
	if sig["Protocol"] != "TLS" || sig["Port"] != float64(443) || sig["Certificates"] == nil {
		t.Errorf("SignalListener = %v, want TLS on 443 with a certificate", sig)
	}
	if p := tpl.Resources["SignalTargets"].Properties; p["Port"] != float64(conf.Port) || p["Protocol"] != "TCP" {
		t.Errorf("SignalTargets = %v, want TCP to port %d", p, conf.Port)
	}
	for id, l := range listeners {
		if l.Properties["Protocol"] != "TLS" {
			t.Errorf("listener %s is %v, want TLS", id, l.Properties["Protocol"])
		}
	}

	// Redis for more than one node: replicated, encrypted in transit.
	redis := tpl.Resources["Redis"].Properties
	if tpl.Resources["Redis"].Type != "AWS::ElastiCache::ReplicationGroup" || redis["TransitEncryptionEnabled"] != true ||
		redis["AutomaticFailoverEnabled"] != true {
		t.Errorf("Redis = %v, want a replicated ElastiCache group with TLS", redis)
	}

	// One server per instance (host ports), more than one node by default.
	svc := tpl.Resources["LiveKitService"].Properties
	if b, _ := yaml.Marshal(svc["PlacementConstraints"]); !strings.Contains(string(b), "distinctInstance") {
		t.Errorf("LiveKitService placement = %v, want distinctInstance", svc["PlacementConstraints"])
	}
	if d, _ := tpl.Parameters["NodeCount"]["Default"].(float64); d < 2 {
		t.Errorf("NodeCount default = %v, want at least 2", tpl.Parameters["NodeCount"]["Default"])
	}
}

func list(v any) []map[string]any {
	var out []map[string]any
	s, _ := v.([]any)
	for _, e := range s {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// TestStacksConnect: the parameters docs/deploy.md tells operators to copy from one
// stack's outputs exist on both sides.
func TestStacksConnect(t *testing.T) {
	control := load(t, "../template.yaml")
	fleet := load(t, "livekit-fleet.yaml")
	personas := load(t, "persona-fleet.yaml")
	links := []struct {
		from       *cfn.Template
		fromName   string
		output     string
		to         *cfn.Template
		toName     string
		parameter  string
		wantPrefix string
	}{
		{control, "template.yaml", "LiveKitCredentialsArn", fleet, "livekit-fleet.yaml", "LiveKitCredentialsArn", ""},
		{control, "template.yaml", "PersonaReportCredentialsArn", personas, "persona-fleet.yaml", "PersonaReportCredentialsArn", ""},
		// The fleets reach the internal receivers through the private API only.
		{control, "template.yaml", "InternalURL", personas, "persona-fleet.yaml", "ControlPlaneURL", "https://${InternalApi}-${InternalEndpoint}."},
		{control, "template.yaml", "LiveKitWebhookURL", fleet, "livekit-fleet.yaml", "ControlPlaneWebhookURL", "https://${InternalApi}-${InternalEndpoint}."},
		{fleet, "livekit-fleet.yaml", "ApiURL", control, "template.yaml", "LiveKitURL", "https://"},
		{fleet, "livekit-fleet.yaml", "PublicURL", control, "template.yaml", "LiveKitPublicURL", "wss://"},
	}
	for _, l := range links {
		out, ok := l.from.Outputs[l.output]
		if !ok {
			t.Errorf("%s has no output %s", l.fromName, l.output)
			continue
		}
		if _, ok := l.to.Parameters[l.parameter]; !ok {
			t.Errorf("%s has no parameter %s for %s's %s", l.toName, l.parameter, l.fromName, l.output)
		}
		if sub, _ := out["Value"].(map[string]any)["Fn::Sub"].(string); l.wantPrefix != "" && !strings.HasPrefix(sub, l.wantPrefix) {
			t.Errorf("%s output %s = %v, want a %s URL", l.fromName, l.output, out["Value"], l.wantPrefix)
		}
	}
	// The secret the fleet reads LIVEKIT_KEYS from has that field, and its JSON is built
	// by CloudFormation (Fn::ToJsonString), never spliced from text.
	secret, _ := control.Resources["LiveKitCredentials"].Properties["SecretString"].(map[string]any)["Fn::ToJsonString"].(map[string]any)
	keys, _ := secret["keys"].(map[string]any)["Fn::Sub"].(string)
	if keys != "${LiveKitAPIKey}: ${LiveKitAPISecret}" || fmt.Sprint(secret["api_key"]) != "map[Ref:LiveKitAPIKey]" ||
		fmt.Sprint(secret["api_secret"]) != "map[Ref:LiveKitAPISecret]" {
		t.Errorf("LiveKitCredentials secret = %v, want Fn::ToJsonString of api_key, api_secret and keys in livekit-server's form", secret)
	}
	// Both fleets' alarms notify the control plane's topic.
	persona := load(t, "persona-fleet.yaml")
	for name, tpl := range map[string]*cfn.Template{"livekit-fleet.yaml": fleet, "persona-fleet.yaml": persona} {
		if _, ok := tpl.Parameters["AlarmTopicArn"]; !ok {
			t.Errorf("%s has no AlarmTopicArn parameter for template.yaml's AlarmTopicArn output", name)
		}
	}
	if _, ok := control.Outputs["AlarmTopicArn"]; !ok {
		t.Error("template.yaml has no AlarmTopicArn output")
	}
}

// TestServerAcceptsFleetConfig hands the fleet's configuration to the pinned
// livekit-server: it must parse it (the server rejects unknown keys) and go on to dial
// Redis over TLS, where this test's unreachable address stops it.
func TestServerAcceptsFleetConfig(t *testing.T) {
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
	bin := strings.TrimSpace(string(out))
	conf := substitute(t, serverConfig(t, container(t, load(t, "livekit-fleet.yaml"))), fleetValues)
	// Loopback only, whatever the config says about the node's public address.
	conf = strings.Replace(conf, "use_external_ip: true", "use_external_ip: false", 1)
	conf = strings.Replace(conf, `bind_addresses: [""]`, `bind_addresses: ["127.0.0.1"]`, 1)
	run, cancelRun := context.WithTimeout(ctx, 30*time.Second)
	defer cancelRun()
	cmd := exec.CommandContext(run, bin)
	cmd.Env = append(os.Environ(), "LIVEKIT_CONFIG="+conf, "LIVEKIT_KEYS=fleetkey: fleet-secret-fleet-secret-fleet-secret-0")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	// It exits (with status 0: it prints its error) once the Redis dial fails.
	if err := cmd.Run(); err != nil && run.Err() != nil {
		t.Fatalf("livekit-server kept running with an unreachable Redis; log:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "could not parse config") || !strings.Contains(logs.String(), "connecting to redis") {
		t.Errorf("livekit-server did not accept the fleet config; log:\n%s", logs.String())
	}
}
