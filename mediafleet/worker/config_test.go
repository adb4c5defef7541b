package worker_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/infra/cfn"
	"github.com/bridgeline/bridgeline/mediafleet/conversation"
	"github.com/bridgeline/bridgeline/mediafleet/stt"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
)

func getenv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigFromEnv(t *testing.T) {
	base := map[string]string{
		"LIVEKIT_URL":        "ws://127.0.0.1:7880",
		"BRIDGELINE_API_URL": "http://127.0.0.1:8080", "PERSONA_REPORT_SECRET": "report-secret-0123456789-0123456789",
	}
	cfg, err := worker.ConfigFromEnv(getenv(base))
	if err != nil {
		t.Fatalf("ConfigFromEnv(minimal) = %v", err)
	}
	if cfg.MaxJobs != worker.CallsPerVCPU*runtime.GOMAXPROCS(0) || cfg.VerifyTimeout != 10*time.Second || cfg.Width != 640 || cfg.Height != 360 {
		t.Errorf("defaults = %+v", cfg)
	}
	// PERSONA_MAX_JOBS' default follows the recogniser: a hosted one takes recognition
	// off the worker's CPU; a set value wins.
	cpus := runtime.GOMAXPROCS(0)
	for _, c := range []struct {
		env  map[string]string
		want int
	}{
		{map[string]string{"STT_PROVIDER": "deepgram"}, worker.CallsPerVCPUHosted * cpus},
		{map[string]string{"STT_BASE_URL": "https://stt.example/v1"}, worker.CallsPerVCPUHosted * cpus},
		{map[string]string{"STT_PROVIDER": "pocketsphinx"}, worker.CallsPerVCPU * cpus},
		{map[string]string{"STT_PROVIDER": "deepgram", "PERSONA_MAX_JOBS": "7"}, 7},
	} {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range c.env {
			m[k] = v
		}
		got, err := worker.ConfigFromEnv(getenv(m))
		if err != nil || got.MaxJobs != c.want {
			t.Errorf("ConfigFromEnv(%v): MaxJobs %d, %v; want %d", c.env, got.MaxJobs, err, c.want)
		}
	}

	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range base {
			m[a] = b
		}
		m[k] = v
		return m
	}
	if cfg.TTS != "flite" || cfg.LLMBaseURL != "" || cfg.LLMTimeout != 10*time.Second ||
		cfg.EndOfTurn != 400*time.Millisecond || cfg.MaxTurn != 20*time.Second || cfg.BargeInConfirm != 300*time.Millisecond {
		t.Errorf("conversation defaults = tts %q llm %q timeout %v end of turn %v max turn %v confirm %v",
			cfg.TTS, cfg.LLMBaseURL, cfg.LLMTimeout, cfg.EndOfTurn, cfg.MaxTurn, cfg.BargeInConfirm)
	}
	llmVars := with("LLM_BASE_URL", "http://127.0.0.1:11434/v1")
	for k, v := range map[string]string{"LLM_MODEL": "llama3.2", "LLM_API_KEY": "sk-x", "LLM_TIMEOUT": "3s",
		"PERSONA_END_OF_TURN": "500ms", "PERSONA_MAX_TURN": "30s", "PERSONA_BARGE_IN_CONFIRM": "250ms", "PERSONA_TTS": "espeak",
		"PERSONA_STT_FLUSH_AFTER": "150ms"} {
		llmVars[k] = v
	}
	if cfg, err := worker.ConfigFromEnv(getenv(llmVars)); err != nil || cfg.LLMBaseURL != "http://127.0.0.1:11434/v1" || cfg.LLMModel != "llama3.2" ||
		cfg.LLMAPIKey != "sk-x" || cfg.LLMTimeout != 3*time.Second || cfg.EndOfTurn != 500*time.Millisecond ||
		cfg.MaxTurn != 30*time.Second || cfg.BargeInConfirm != 250*time.Millisecond || cfg.TTS != "espeak" ||
		cfg.STTFlushAfter != 150*time.Millisecond {
		t.Errorf("conversation variables: %v, %+v", err, cfg)
	}
	if cfg, err := worker.ConfigFromEnv(getenv(with("PERSONA_STT_FLUSH_AFTER", "off"))); err != nil || cfg.STTFlushAfter != conversation.NoFlush {
		t.Errorf("PERSONA_STT_FLUSH_AFTER=off: %v, %v", err, cfg.STTFlushAfter)
	}
	good := with("PERSONA_VIDEO_SIZE", "1280x720")
	if cfg, err := worker.ConfigFromEnv(getenv(good)); err != nil || cfg.Width != 1280 || cfg.Height != 720 {
		t.Errorf("PERSONA_VIDEO_SIZE=1280x720: %v, %dx%d", err, cfg.Width, cfg.Height)
	}
	for name, m := range map[string]map[string]string{
		"no livekit url":        with("LIVEKIT_URL", ""),
		"no control":            with("BRIDGELINE_API_URL", ""),
		"no report secret":      with("PERSONA_REPORT_SECRET", ""),
		"short report secret":   with("PERSONA_REPORT_SECRET", "short"),
		"bad max jobs":          with("PERSONA_MAX_JOBS", "many"),
		"zero max jobs":         with("PERSONA_MAX_JOBS", "0"),
		"bad timeout":           with("PERSONA_VERIFY_TIMEOUT", "10"),
		"odd video size":        with("PERSONA_VIDEO_SIZE", "641x360"),
		"unknown tts":           with("PERSONA_TTS", "polly"),
		"unknown metrics":       with("PERSONA_METRICS", "statsd"),
		"bad log level":         with("PERSONA_LOG_LEVEL", "loud"),
		"llm url without model": with("LLM_BASE_URL", "http://127.0.0.1:11434/v1"),
		"llm url not http":      with("LLM_BASE_URL", "127.0.0.1:11434"),
		"bad llm timeout":       with("LLM_TIMEOUT", "soon"),
		"zero llm timeout":      with("LLM_TIMEOUT", "0s"),
		"end of turn too short": with("PERSONA_END_OF_TURN", "20ms"),
		"end of turn too long":  with("PERSONA_END_OF_TURN", "5s"),
		"max turn under end":    with("PERSONA_MAX_TURN", "300ms"),
		"max turn too long":     with("PERSONA_MAX_TURN", "10m"),
		"barge-in confirm zero": with("PERSONA_BARGE_IN_CONFIRM", "0s"),
		"flush at end of turn":  with("PERSONA_STT_FLUSH_AFTER", "400ms"),
		"flush not a duration":  with("PERSONA_STT_FLUSH_AFTER", "never"),
	} {
		if _, err := worker.ConfigFromEnv(getenv(m)); err == nil {
			t.Errorf("%s: ConfigFromEnv = nil error", name)
		}
	}
	// A worker holds no LiveKit API secret: one in its environment stops it at start.
	withSecret := with("LIVEKIT_API_SECRET", "livekit-secret-0123456789-0123456789")
	if _, err := worker.ConfigFromEnv(getenv(withSecret)); err == nil || !strings.Contains(err.Error(), "LIVEKIT_API_SECRET") {
		t.Errorf("LIVEKIT_API_SECRET set: ConfigFromEnv = %v, want it refused", err)
	}
}

// The fleet template configures the worker through the same variables ConfigFromEnv
// reads, and scales on the metric the worker writes.
func TestFleetTemplateMatchesWorker(t *testing.T) {
	tpl, err := cfn.Load("../../infra/persona-fleet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var container map[string]any
	for _, r := range tpl.ResourcesOfType("AWS::ECS::TaskDefinition") {
		container = r.Properties["ContainerDefinitions"].([]any)[0].(map[string]any)
	}
	if container == nil {
		t.Fatal("no task definition")
	}
	vars := map[string]string{}
	for name, v := range templateEnv(tpl, container) {
		vars[name] = v.value
	}
	// The workers hold no LiveKit credentials: their registration tokens come from the
	// control plane (persona.AgentTokenPath), and the stack cannot even name the secret.
	for _, name := range []string{"LIVEKIT_API_SECRET", "LIVEKIT_API_KEY"} {
		if _, ok := vars[name]; ok {
			t.Errorf("the fleet passes %s to its workers", name)
		}
	}
	if _, ok := tpl.Parameters["LiveKitCredentialsArn"]; ok {
		t.Error("the fleet takes LiveKitCredentialsArn: its workers need no LiveKit secret")
	}
	vars["PERSONA_MAX_JOBS"] = "8"
	vars["LIVEKIT_URL"] = "wss://livekit.example"
	vars["BRIDGELINE_API_URL"] = "https://api.example"
	cfg, err := worker.ConfigFromEnv(getenv(vars))
	if err != nil {
		t.Fatalf("the template's environment does not configure the worker: %v", err)
	}
	if cfg.Metrics != "emf" || cfg.DrainTimeout >= 120*time.Second {
		t.Errorf("template: metrics %q drain %v; want emf and a drain under the 120 s stop timeout", cfg.Metrics, cfg.DrainTimeout)
	}

	var w bytes.Buffer
	worker.WriteEMF(&w, cfg.MetricsNamespace, "svc", 0.5, 4, time.Now())
	var line map[string]any
	if err := json.Unmarshal(w.Bytes(), &line); err != nil {
		t.Fatalf("EMF line %q: %v", w.String(), err)
	}
	for _, r := range tpl.ResourcesOfType("AWS::ApplicationAutoScaling::ScalingPolicy") {
		spec := r.Properties["TargetTrackingScalingPolicyConfiguration"].(map[string]any)["CustomizedMetricSpecification"].(map[string]any)
		name := spec["MetricName"].(string)
		if _, ok := line[name]; !ok || !strings.Contains(w.String(), `"Namespace":"`+spec["Namespace"].(string)+`"`) {
			t.Errorf("policy scales on %s/%s; the worker writes %s", spec["Namespace"], name, w.String())
		}
		if line["WorkerLoad"] != 0.5 || line["RunningCalls"] != 4.0 || line["ServiceName"] != "svc" {
			t.Errorf("EMF values = %v", line)
		}
	}
}

// envEntry is one variable of the fleet's container: its value with every parameter at
// its default (a reference to anything else resolved to a placeholder), the parameter it
// comes from, and the condition it is set under ("" for always).
type envEntry struct {
	value, param, condition string
	secret                  bool
}

// templateEnv reads the container's Environment and Secrets; an entry under !If is
// taken as set, with its condition beside it.
func templateEnv(tpl *cfn.Template, container map[string]any) map[string]envEntry {
	out := map[string]envEntry{}
	for _, key := range []string{"Environment", "Secrets"} {
		for _, e := range container[key].([]any) {
			m := e.(map[string]any)
			cond := ""
			if branches, ok := m["Fn::If"].([]any); ok {
				cond, m = branches[0].(string), branches[1].(map[string]any)
			}
			name := m["Name"].(string)
			entry := envEntry{condition: cond, secret: key == "Secrets"}
			switch v := m["Value"].(type) {
			case string:
				entry.value = v
			case map[string]any:
				if ref, ok := v["Ref"].(string); ok {
					entry.param = ref
					if p, ok := tpl.Parameters[ref]; ok {
						entry.value = fmt.Sprint(p["Default"])
					}
				}
			}
			if sub, ok := m["ValueFrom"].(map[string]any); ok {
				if s, ok := sub["Fn::Sub"].(string); ok {
					entry.param = strings.TrimSuffix(strings.TrimPrefix(s, "${"), "}:api_key::")
				} else if ref, ok := sub["Ref"].(string); ok {
					entry.param = ref
				}
			}
			if entry.value == "" && (entry.secret || entry.param != "" && tpl.Parameters[entry.param] == nil) {
				entry.value = "resolved-at-deploy-time-" + name // a reference: long, one per secret
			}
			out[name] = entry
		}
	}
	return out
}

// The fleet's parameters choose the assistants' model, the callers' recogniser and the
// hosted voices, through the variables the worker reads, and each key comes from Secrets
// Manager, granted to the task only when it is given.
func TestFleetTemplateConfiguresModelAndSpeech(t *testing.T) {
	tpl, err := cfn.Load("../../infra/persona-fleet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var container map[string]any
	var grants []any
	for _, r := range tpl.ResourcesOfType("AWS::ECS::TaskDefinition") {
		container = r.Properties["ContainerDefinitions"].([]any)[0].(map[string]any)
	}
	exec := tpl.Resources["ExecutionRole"].Properties["Policies"].([]any)[0].(map[string]any)
	grants = exec["PolicyDocument"].(map[string]any)["Statement"].([]any)[0].(map[string]any)["Resource"].([]any)
	env := templateEnv(tpl, container)
	for _, want := range []struct{ variable, param, condition string }{
		{"LLM_BASE_URL", "ModelBaseURL", ""},
		{"LLM_MODEL", "ModelName", ""},
		{"STT_PROVIDER", "SpeechToText", ""},
		{"DEEPGRAM_BASE_URL", "DeepgramBaseURL", ""},
		{"TTS_BASE_URL", "HostedSpeechBaseURL", ""},
		{"LLM_API_KEY", "ModelCredentialsArn", "HasModelKey"},
		{"DEEPGRAM_API_KEY", "DeepgramCredentialsArn", "HasDeepgramKey"},
		{"TTS_API_KEY", "HostedSpeechCredentialsArn", "HasHostedSpeechKey"},
	} {
		got, ok := env[want.variable]
		if !ok || got.param != want.param || got.condition != want.condition {
			t.Errorf("%s = %+v, want from parameter %s under condition %q", want.variable, got, want.param, want.condition)
			continue
		}
		if got.secret {
			granted := slices.ContainsFunc(grants, func(g any) bool {
				b, _ := json.Marshal(g)
				return string(b) == fmt.Sprintf(`{"Fn::If":[%q,{"Ref":%q},{"Ref":"AWS::NoValue"}]}`, want.condition, want.param)
			})
			if !granted {
				t.Errorf("%s: the execution role may not read %s (under %s): %v", want.variable, want.param, want.condition, grants)
			}
			if cond, ok := tpl.Conditions[want.condition]; !ok || !strings.Contains(fmt.Sprint(cond), want.param) {
				t.Errorf("condition %s = %v, want it on %s", want.condition, cond, want.param)
			}
		}
	}

	base := map[string]string{}
	for name, e := range env {
		base[name] = e.value
	}
	base["LIVEKIT_URL"], base["BRIDGELINE_API_URL"] = "wss://livekit.example", "https://api.example"
	delete(base, "PERSONA_MAX_JOBS") // CallsPerTask; the recogniser's default is checked below
	// Every recogniser the template offers is one the worker knows, with its own default
	// of calls per CPU.
	perCPU := map[string]int{stt.ProviderPocketsphinx: worker.CallsPerVCPU, stt.ProviderDeepgram: worker.CallsPerVCPUHosted}
	for _, v := range tpl.Parameters["SpeechToText"]["AllowedValues"].([]any) {
		m := maps.Clone(base)
		m["STT_PROVIDER"] = v.(string)
		cfg, err := worker.ConfigFromEnv(getenv(m))
		if n, known := perCPU[v.(string)]; err != nil || !known || cfg.MaxJobs != n*runtime.GOMAXPROCS(0) {
			t.Errorf("SpeechToText %s: ConfigFromEnv = %d calls, %v; want a recogniser the worker knows", v, cfg.MaxJobs, err)
		}
	}
	// The rule ModelNeedsName is the worker's own check: a model server without a model
	// name does not start.
	m := maps.Clone(base)
	m["LLM_BASE_URL"] = "https://api.openai.com/v1"
	if _, err := worker.ConfigFromEnv(getenv(m)); err == nil {
		t.Error("LLM_BASE_URL without LLM_MODEL: ConfigFromEnv = nil error, the template's rule ModelNeedsName has no reason")
	}
	m["LLM_MODEL"] = "gpt-4o-mini"
	if _, err := worker.ConfigFromEnv(getenv(m)); err != nil {
		t.Errorf("a model server and name: %v", err)
	}
	if rule := fmt.Sprint(tpl.Rules["ModelNeedsName"]); !strings.Contains(rule, "ModelName") || !strings.Contains(rule, "ModelBaseURL") {
		t.Errorf("rule ModelNeedsName = %s", rule)
	}
	if rule := fmt.Sprint(tpl.Rules["DeepgramNeedsKeyOrServer"]); !strings.Contains(rule, "DeepgramCredentialsArn") || !strings.Contains(rule, "DeepgramBaseURL") {
		t.Errorf("rule DeepgramNeedsKeyOrServer = %s", rule)
	}
}
