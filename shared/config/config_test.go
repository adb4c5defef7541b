package config

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// variableCases give each control-plane variable of the configuration table a
// value other than its default, what that value must become in Config, and a value
// Validate must refuse ("" where any string is acceptable).
var variableCases = map[string]struct {
	value string
	got   func(Config) bool
	bad   string
}{
	"PORT":                               {"9123", func(c Config) bool { return c.Addr == "127.0.0.1:9123" }, "70000"},
	"BRIDGELINE_DATA":                    {"elsewhere", func(c Config) bool { return c.DataDir == "elsewhere" }, ""},
	"BRIDGELINE_STORE":                   {"dynamodb", func(c Config) bool { return c.Store == "dynamodb" }, "postgres"},
	"DYNAMODB_ENDPOINT":                  {"http://127.0.0.1:8000", func(c Config) bool { return c.DynamoDBEndpoint == "http://127.0.0.1:8000" }, "localhost:8000"},
	"DEV_API_KEY":                        {"sk_test_0123456789abcdefghijklmn", func(c Config) bool { return c.DevAPIKey == "sk_test_0123456789abcdefghijklmn" }, "secret"},
	"RATE_LIMIT_RPS":                     {"7.5", func(c Config) bool { return c.RateLimit == 7.5 }, "fast"},
	"RATE_LIMIT_BURST":                   {"9", func(c Config) bool { return c.RateBurst == 9 }, "0"},
	"WEBHOOK_ALLOW_LOOPBACK":             {"1", func(c Config) bool { return c.Webhooks.AllowLoopback }, "yes please"},
	"TOKEN_TTL_MINUTES":                  {"25", func(c Config) bool { return c.TokenTTL == 25*time.Minute }, "61"},
	"LIVEKIT_PORT":                       {"7990", func(c Config) bool { return c.LiveKitPort == 7990 && c.LiveKitURL == "http://127.0.0.1:7990" }, "port"},
	"LIVEKIT_RTC_TCP_PORT":               {"7991", func(c Config) bool { return c.LiveKitTCPPort == 7991 }, "0"},
	"LIVEKIT_RTC_UDP_PORT":               {"7992", func(c Config) bool { return c.LiveKitUDPPort == 7992 }, "-3"},
	"LIVEKIT_API_KEY":                    {"APIother", func(c Config) bool { return c.LiveKitAPIKey == "APIother" }, ""},
	"LIVEKIT_API_SECRET":                 {strings.Repeat("s", 40), func(c Config) bool { return c.LiveKitSecret == strings.Repeat("s", 40) }, "short"},
	"PERSONA_REPORT_SECRET":              {strings.Repeat("r", 40), func(c Config) bool { return c.PersonaReportSecret == strings.Repeat("r", 40) }, "short"},
	"LIVEKIT_URL":                        {"https://lk.example.com", func(c Config) bool { return c.LiveKitURL == "https://lk.example.com" }, "wss://lk.example.com"},
	"LIVEKIT_PUBLIC_URL":                 {"wss://lk.example.com", func(c Config) bool { return c.LiveKitPublicURL == "wss://lk.example.com" }, "https://lk.example.com"},
	"LIVEKIT_SERVER_BIN":                 {"/opt/livekit-server", func(c Config) bool { return c.LiveKitBinary == "/opt/livekit-server" }, ""},
	"LIVEKIT_SIP_BIN":                    {"/opt/livekit-sip", func(c Config) bool { return c.LiveKitSIPBinary == "/opt/livekit-sip" }, ""},
	"SIP_PORT":                           {"off", func(c Config) bool { return c.SIPPort == 0 }, "70000"},
	"SIP_RTP_PORTS":                      {"23000-23099", func(c Config) bool { return c.SIPRTPPortStart == 23000 && c.SIPRTPPortEnd == 23099 }, "23000"},
	"SIP_PUBLIC_HOST":                    {"sip.example.com", func(c Config) bool { return c.SIPPublicHost == "sip.example.com" }, ""},
	"SIP_PUBLIC_PORT":                    {"5061", func(c Config) bool { return c.SIPPublicPort == 5061 }, "0x"},
	"SIP_GATEWAY_PORT":                   {"5199", func(c Config) bool { return c.SIPGatewayPort == 5199 }, "99999"},
	"SIP_VIDEO_PORT":                     {"off", func(c Config) bool { return c.SIPVideoPort == 0 }, "70000"},
	"SIP_VIDEO_RTP_PORTS":                {"24000-24099", func(c Config) bool { return c.SIPVideoRTPPortStart == 24000 && c.SIPVideoRTPPortEnd == 24099 }, "24000"},
	"SIP_VIDEO_PUBLIC_PORT":              {"5081", func(c Config) bool { return c.SIPVideoPublicPort == 5081 }, "99999"},
	"PERSONA_WORKERS":                    {"3", func(c Config) bool { return c.PersonaWorkers == 3 }, "many"},
	"MAX_SESSION_MINUTES":                {"2.5", func(c Config) bool { return c.MaxSession == 150*time.Second }, "ten"},
	"ASSISTANT_DISPATCH_TIMEOUT_SECONDS": {"40", func(c Config) bool { return c.AssistantDispatchTimeout == 40*time.Second }, "301"},
	"MAX_CONCURRENT_SESSIONS":            {"5", func(c Config) bool { return c.MaxConcurrentSessions == 5 }, "0"},
	"JOIN_PAGE_URL":                      {"https://call.example.com/join", func(c Config) bool { return c.JoinPageURL == "https://call.example.com/join" }, "https://call.example.com/join#x"},
	"TTS_VOICES":                         {"alloy,nova", func(c Config) bool { return slices.Equal(c.HostedVoices, []string{"alloy", "nova"}) }, "al loy"},
	"LLM_MODELS":                         {"gpt-4o-mini, llama3.1:8b", func(c Config) bool { return slices.Equal(c.Models, []string{"gpt-4o-mini", "llama3.1:8b"}) }, "gpt 4o"},
	// With LLM_MODELS gpt-4o-mini,llama3.1:8b (the case sets it); a name not offered is
	// refused like a malformed one.
	"LLM_VISION_MODELS": {"gpt-4o-mini", func(c Config) bool { return slices.Equal(c.VisionModels, []string{"gpt-4o-mini"}) }, "gpt-4.5-preview"},
	"STT_LANGUAGES":     {"en, es-mx,es", func(c Config) bool { return slices.Equal(c.Languages, []string{"en", "es-MX", "es"}) }, "español"},
	// Not in the table: set by template.yaml for the AWS sweeper only.
	"SWEEP_WINDOW_SECONDS": {"30", func(c Config) bool { return c.SweepWindow == 30*time.Second }, "never"},
}

// readmeVariables reads the configuration table (docs/configuration.md, which the README's
// Configuration section points to): each variable and its Where.
func readmeVariables(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	table := string(b)
	name := regexp.MustCompile("`([A-Z][A-Z0-9_]+)`")
	out := map[string]string{}
	for _, row := range strings.Split(table, "\n") {
		cells := strings.Split(row, "|")
		if len(cells) < 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		where := strings.TrimSpace(cells[2])
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			out[m[1]] = where
		}
	}
	if len(out) < 10 {
		t.Fatalf("read only %d variables from docs/configuration.md's table", len(out))
	}
	return out
}

// env is a lookup over exactly the variables given.
// env is a lookup of vars; PERSONA_REPORT_SECRET, which has no default, is a test value
// unless vars sets it.
func env(vars map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := vars[k]; ok || k != "PERSONA_REPORT_SECRET" {
			return v
		}
		return strings.Repeat("t", 40)
	}
}

// TestEveryVariableReachesConfig: each control-plane variable of the table (Where both
// or local), set to a value other than its default, reaches Config through FromEnv and
// passes Validate; a malformed value is refused with a message naming the variable.
func TestEveryVariableReachesConfig(t *testing.T) {
	vars := readmeVariables(t)
	for name, where := range vars {
		switch where {
		case "both", "local":
			if _, ok := variableCases[name]; !ok {
				t.Errorf("docs/configuration.md's %s (%s) has no case here", name, where)
			}
		case "worker":
		default:
			t.Errorf("docs/configuration.md's %s: Where %q is not both, local or worker", name, where)
		}
	}
	if c, err := Read(env(nil)); err != nil || c.Validate() != nil {
		t.Fatalf("the defaults with a report secret: %v, %v; want them valid", err, c.Validate())
	}
	for name, tc := range variableCases {
		t.Run(name, func(t *testing.T) {
			set := map[string]string{name: tc.value}
			if name == "TTS_VOICES" {
				set["TTS_BASE_URL"] = "http://127.0.0.1:9000"
			}
			if name == "LLM_VISION_MODELS" {
				set["LLM_MODELS"] = "gpt-4o-mini,llama3.1:8b"
			}
			if tc.got(Defaults()) {
				t.Fatalf("the defaults already satisfy the case: pick another value")
			}
			c, err := Read(env(set))
			if err == nil {
				err = c.Validate()
			}
			if err != nil || !tc.got(c) {
				t.Errorf("%s=%q: Config %+v, err %v; want the value in Config and no error", name, tc.value, c, err)
			}
			if tc.bad == "" {
				return
			}
			set[name] = tc.bad
			c, err = Read(env(set))
			if err == nil {
				err = c.Validate()
			}
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s=%q: err %v, want a refusal naming %s", name, tc.bad, err, name)
			}
		})
	}
}

// TestBothVariablesReachTheLambdas: each variable the table says both the local stack and
// the Lambdas read is passed to a function by template.yaml.
func TestBothVariablesReachTheLambdas(t *testing.T) {
	b, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type environment struct {
		Variables map[string]yaml.Node `yaml:"Variables"`
	}
	var tpl struct {
		Globals struct {
			Function struct {
				Environment environment `yaml:"Environment"`
			} `yaml:"Function"`
		} `yaml:"Globals"`
		Resources map[string]struct {
			Properties struct {
				Environment environment `yaml:"Environment"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(b, &tpl); err != nil {
		t.Fatal(err)
	}
	passed := map[string]bool{}
	for k := range tpl.Globals.Function.Environment.Variables {
		passed[k] = true
	}
	for _, r := range tpl.Resources {
		for k := range r.Properties.Environment.Variables {
			passed[k] = true
		}
	}
	for name, where := range readmeVariables(t) {
		if where == "both" && !passed[name] {
			t.Errorf("docs/configuration.md says the Lambdas read %s, but template.yaml passes it to no function", name)
		}
		if where == "local" && passed[name] {
			t.Errorf("docs/configuration.md says only the local stack reads %s, but template.yaml passes it", name)
		}
	}
}

func TestHostedVoices(t *testing.T) {
	tests := []struct {
		name, voices, baseURL, workers string
		want                           []string
		wantErr                        string
	}{
		{"none", "", "", "", nil, ""},
		{"with the speech API", "alloy, nova", "http://127.0.0.1:9000", "", []string{"alloy", "nova"}, ""},
		{"without the speech API for in-process workers", "alloy", "", "", nil, "TTS_BASE_URL"},
		{"without in-process workers (a Lambda)", "alloy", "", "0", []string{"alloy"}, ""},
		{"a bad name", "al loy", "http://127.0.0.1:9000", "", nil, "TTS_VOICES"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Read(env(map[string]string{"TTS_VOICES": tc.voices, "TTS_BASE_URL": tc.baseURL, "PERSONA_WORKERS": tc.workers}))
			if err == nil {
				err = c.Validate()
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Read() error = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(c.HostedVoices, tc.want) {
				t.Errorf("Read() HostedVoices = %q, %v; want %q", c.HostedVoices, err, tc.want)
			}
		})
	}
}
