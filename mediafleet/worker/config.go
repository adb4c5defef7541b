package worker

import (
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/conversation"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Config is the persona worker's configuration, read from the environment by
// ConfigFromEnv (variable names in brackets).
type Config struct {
	LiveKitURL string // [LIVEKIT_URL] ws(s):// address of livekit-server; required
	// ControlPlane is where reports, tool calls and transfers are posted and where the
	// worker gets its LiveKit registration token (persona.AgentTokenPath): a worker holds
	// no LiveKit API secret, and LIVEKIT_API_SECRET in its environment is refused.
	ControlPlane string // [BRIDGELINE_API_URL] required
	// ReportSecret signs the reports and the token requests (32+ characters, shared with
	// the control plane only; not the LiveKit secret, which livekit-server also holds).
	ReportSecret  string        // [PERSONA_REPORT_SECRET] required
	AgentName     string        // [PERSONA_AGENT_NAME] default persona.AgentName
	MaxJobs       int           // [PERSONA_MAX_JOBS] calls at once; default CallsPerVCPU per CPU (DefaultMaxJobs)
	VerifyTimeout time.Duration // [PERSONA_VERIFY_TIMEOUT] join to verified media; default 10s
	// ConnectingDwell is how long the connecting screen stays up after its keyframe reached
	// the caller; 0 means the pipeline's default (300 ms). Not read from the environment:
	// tests on a loaded machine lengthen it.
	ConnectingDwell time.Duration
	// DrainTimeout bounds how long a SIGTERM waits for running calls; past it they end with
	// worker_shutdown (and their reports go out) before the orchestrator's kill.
	DrainTimeout time.Duration // [PERSONA_DRAIN_TIMEOUT] default 100s
	Width        int           // [PERSONA_VIDEO_SIZE] WxH, default 640x360
	Height       int
	FPS          int // [PERSONA_VIDEO_FPS] default 15
	// IdleFPS is the avatar's frame rate while nothing on it changes (between blinks,
	// the mouth still): a still frame is not drawn and encoded again before 1/IdleFPS.
	// PERSONA_VIDEO_FPS or more draws every frame.
	IdleFPS   int    // [PERSONA_VIDEO_IDLE_FPS] default 5
	VideoKbps int    // [PERSONA_VIDEO_KBPS] default 500
	TTS       string // [PERSONA_TTS] flite (default), espeak or hosted
	ESpeakWPM int    // [PERSONA_ESPEAK_WPM] default 165
	// The language model: an OpenAI-compatible Chat Completions endpoint. Without a base
	// URL the assistants use the built-in responder (no network).
	LLMBaseURL   string        // [LLM_BASE_URL] e.g. https://api.openai.com/v1
	LLMAPIKey    string        // [LLM_API_KEY]
	LLMModel     string        // [LLM_MODEL] required with LLM_BASE_URL; a version's model overrides it
	LLMTimeout   time.Duration // [LLM_TIMEOUT] request to first token; default 10s
	LLMMaxTokens int           // [LLM_MAX_TOKENS] per-reply token cap (max_tokens); default llm.DefaultMaxTokens
	// Turn-taking.
	EndOfTurn      time.Duration // [PERSONA_END_OF_TURN] caller silence that ends a turn; default 400ms
	MaxTurn        time.Duration // [PERSONA_MAX_TURN] longest caller turn before it is answered anyway; default 20s
	BargeInConfirm time.Duration // [PERSONA_BARGE_IN_CONFIRM] talk-over that cancels a reply (shorter, wordless: resume); default 300ms
	// STTFlushAfter is the caller's silence at which a streaming recogniser (Deepgram)
	// finishes the words so far, before the end of turn; 0: the conversation's default
	// (200ms, or half of PERSONA_END_OF_TURN when shorter); conversation.NoFlush: never.
	STTFlushAfter time.Duration // [PERSONA_STT_FLUSH_AFTER] a duration, or off
	// Metrics is "" (off) or "emf": a CloudWatch embedded-metric-format line on stdout
	// every MetricsInterval with WorkerLoad and RunningCalls, for the fleet's autoscaling.
	Metrics          string        // [PERSONA_METRICS]
	MetricsNamespace string        // [PERSONA_METRICS_NAMESPACE] default Bridgeline/PersonaFleet
	MetricsService   string        // [PERSONA_METRICS_SERVICE] ServiceName dimension; default persona-worker
	MetricsInterval  time.Duration // [PERSONA_METRICS_INTERVAL] default 15s
	LogLevel         string        // [PERSONA_LOG_LEVEL] debug|info|warn|error; default info
	// ECSAgentURI is set by ECS in every task; with it the worker keeps task scale-in
	// protection on while it has calls.
	ECSAgentURI string // [ECS_AGENT_URI]
	// RecordingsBucket is the S3 bucket recorded calls are put in (cmd/persona-worker
	// builds the store); empty: recorded calls end without a file and say so. The local
	// stack's in-process workers are given its folder store instead.
	RecordingsBucket string // [RECORDINGS_BUCKET]
}

// CallsPerVCPU is how many calls a worker takes per CPU it may use when PERSONA_MAX_JOBS
// is unset and pocketsphinx recognises the callers on the worker's CPU: what one core
// held with the response within its goal (BenchmarkWorkerConversations with
// BENCH_STT=pocketsphinx: 2 audio or video conversations answered within a third of a
// second of one alone at p95; 3 answered 1.3-2.6 s late at p50 in five runs, though the
// worker's CPU per call-second would have allowed 4 at 80% of the core: the decoding
// runs as the callers speak, so callers speaking at once fill the core; docs/deploy.md).
const CallsPerVCPU = 2

// CallsPerVCPUHosted is the same with a hosted recogniser (STT_PROVIDER deepgram or
// openai), which takes recognition, the largest part of a call's cost, off the worker.
const CallsPerVCPUHosted = 5

// DefaultMaxJobs is PERSONA_MAX_JOBS's default with pocketsphinx: CallsPerVCPU for each
// CPU the process may use (GOMAXPROCS, which follows a container's CPU limit).
func DefaultMaxJobs() int { return max(1, CallsPerVCPU*runtime.GOMAXPROCS(0)) }

// DefaultMaxJobsHosted is PERSONA_MAX_JOBS's default with a hosted recogniser.
func DefaultMaxJobsHosted() int { return max(1, CallsPerVCPUHosted*runtime.GOMAXPROCS(0)) }

// Defaults returns the configuration with every default filled in.
func Defaults() Config {
	return Config{
		AgentName:        persona.AgentName,
		MaxJobs:          DefaultMaxJobs(),
		VerifyTimeout:    10 * time.Second,
		DrainTimeout:     100 * time.Second,
		Width:            640,
		Height:           360,
		FPS:              15,
		IdleFPS:          5,
		VideoKbps:        500,
		TTS:              "flite",
		ESpeakWPM:        165,
		LLMTimeout:       conversation.DefaultFirstTokenTimeout,
		EndOfTurn:        conversation.DefaultEndOfTurn,
		MaxTurn:          conversation.DefaultMaxTurn,
		BargeInConfirm:   conversation.DefaultConfirm,
		MetricsNamespace: "Bridgeline/PersonaFleet",
		MetricsService:   "persona-worker",
		MetricsInterval:  15 * time.Second,
		LogLevel:         "info",
	}
}

// ConfigFromEnv reads the configuration through getenv (os.Getenv in main).
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Defaults()
	var errs []error
	str := func(name string, dst *string) {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			*dst = v
		}
	}
	num := func(name string, dst *int) {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %q is not a number", name, v))
				return
			}
			*dst = n
		}
	}
	dur := func(name string, dst *time.Duration) {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %q is not a duration (10s, 2m)", name, v))
				return
			}
			*dst = d
		}
	}
	str("LIVEKIT_URL", &c.LiveKitURL)
	if strings.TrimSpace(getenv("LIVEKIT_API_SECRET")) != "" {
		// A worker handles untrusted audio, video, model output and tool answers: the
		// LiveKit secret would let a compromised one administer every room and SIP trunk.
		errs = append(errs, errors.New("LIVEKIT_API_SECRET: a persona worker must not hold the LiveKit API secret; unset it (the worker gets its registration token from BRIDGELINE_API_URL)"))
	}
	str("BRIDGELINE_API_URL", &c.ControlPlane)
	str("PERSONA_REPORT_SECRET", &c.ReportSecret)
	str("PERSONA_AGENT_NAME", &c.AgentName)
	// The recogniser decides the default: stt.FromEnv's choice, read the same way.
	if p := strings.TrimSpace(getenv("STT_PROVIDER")); p == "deepgram" || p == "openai" ||
		(p == "" && strings.TrimSpace(getenv("STT_BASE_URL")) != "") {
		c.MaxJobs = DefaultMaxJobsHosted()
	}
	num("PERSONA_MAX_JOBS", &c.MaxJobs)
	dur("PERSONA_VERIFY_TIMEOUT", &c.VerifyTimeout)
	dur("PERSONA_DRAIN_TIMEOUT", &c.DrainTimeout)
	if v := strings.TrimSpace(getenv("PERSONA_VIDEO_SIZE")); v != "" {
		if _, err := fmt.Sscanf(v, "%dx%d", &c.Width, &c.Height); err != nil {
			errs = append(errs, fmt.Errorf("PERSONA_VIDEO_SIZE: %q is not WxH", v))
		}
	}
	num("PERSONA_VIDEO_FPS", &c.FPS)
	num("PERSONA_VIDEO_IDLE_FPS", &c.IdleFPS)
	num("PERSONA_VIDEO_KBPS", &c.VideoKbps)
	str("PERSONA_TTS", &c.TTS)
	num("PERSONA_ESPEAK_WPM", &c.ESpeakWPM)
	str("LLM_BASE_URL", &c.LLMBaseURL)
	str("LLM_API_KEY", &c.LLMAPIKey)
	str("LLM_MODEL", &c.LLMModel)
	dur("LLM_TIMEOUT", &c.LLMTimeout)
	num("LLM_MAX_TOKENS", &c.LLMMaxTokens)
	dur("PERSONA_END_OF_TURN", &c.EndOfTurn)
	dur("PERSONA_MAX_TURN", &c.MaxTurn)
	dur("PERSONA_BARGE_IN_CONFIRM", &c.BargeInConfirm)
	if v := strings.TrimSpace(getenv("PERSONA_STT_FLUSH_AFTER")); v == "off" {
		c.STTFlushAfter = conversation.NoFlush
	} else {
		dur("PERSONA_STT_FLUSH_AFTER", &c.STTFlushAfter)
	}
	str("PERSONA_METRICS", &c.Metrics)
	str("PERSONA_METRICS_NAMESPACE", &c.MetricsNamespace)
	str("PERSONA_METRICS_SERVICE", &c.MetricsService)
	dur("PERSONA_METRICS_INTERVAL", &c.MetricsInterval)
	str("PERSONA_LOG_LEVEL", &c.LogLevel)
	str("ECS_AGENT_URI", &c.ECSAgentURI)
	str("RECORDINGS_BUCKET", &c.RecordingsBucket)
	if err := errors.Join(errs...); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// Validate checks the configuration once, at start.
func (c Config) Validate() error {
	var errs []error
	req := func(name, v string) {
		if v == "" {
			errs = append(errs, fmt.Errorf("%s is required", name))
		}
	}
	req("LIVEKIT_URL", c.LiveKitURL)
	req("BRIDGELINE_API_URL", c.ControlPlane)
	req("PERSONA_REPORT_SECRET", c.ReportSecret)
	switch {
	case c.ReportSecret != "" && len(c.ReportSecret) < persona.MinReportSecret:
		errs = append(errs, fmt.Errorf("PERSONA_REPORT_SECRET must be at least %d characters", persona.MinReportSecret))
	}
	if c.MaxJobs < 1 {
		errs = append(errs, errors.New("PERSONA_MAX_JOBS must be at least 1"))
	}
	if c.IdleFPS < 1 {
		errs = append(errs, errors.New("PERSONA_VIDEO_IDLE_FPS must be at least 1"))
	}
	if c.VerifyTimeout <= 0 || c.DrainTimeout < 0 {
		errs = append(errs, errors.New("PERSONA_VERIFY_TIMEOUT must be positive and PERSONA_DRAIN_TIMEOUT not negative"))
	}
	if c.Width <= 0 || c.Height <= 0 || c.Width%2 != 0 || c.Height%2 != 0 || c.FPS <= 0 || c.FPS > 60 {
		errs = append(errs, fmt.Errorf("video %dx%d at %d fps: size must be even and positive, 1-60 fps", c.Width, c.Height, c.FPS))
	}
	switch c.TTS {
	case "flite", "espeak", "hosted":
	default:
		errs = append(errs, fmt.Errorf("PERSONA_TTS %q: want flite, espeak or hosted", c.TTS))
	}
	if c.LLMBaseURL != "" {
		if u, err := url.Parse(c.LLMBaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("LLM_BASE_URL %q: want an http(s) URL", c.LLMBaseURL))
		}
		if c.LLMModel == "" {
			errs = append(errs, errors.New("LLM_MODEL is required with LLM_BASE_URL"))
		}
	}
	if c.LLMTimeout <= 0 {
		errs = append(errs, errors.New("LLM_TIMEOUT must be positive"))
	}
	if c.EndOfTurn < 100*time.Millisecond || c.EndOfTurn > 3*time.Second {
		errs = append(errs, fmt.Errorf("PERSONA_END_OF_TURN %v: want 100ms to 3s", c.EndOfTurn))
	}
	if c.MaxTurn <= c.EndOfTurn || c.MaxTurn > 2*time.Minute {
		errs = append(errs, fmt.Errorf("PERSONA_MAX_TURN %v: want longer than PERSONA_END_OF_TURN and at most 2m", c.MaxTurn))
	}
	if c.STTFlushAfter != conversation.NoFlush && (c.STTFlushAfter < 0 || c.STTFlushAfter >= c.EndOfTurn) {
		errs = append(errs, fmt.Errorf("PERSONA_STT_FLUSH_AFTER %v: want off, or shorter than PERSONA_END_OF_TURN", c.STTFlushAfter))
	}
	if c.BargeInConfirm < 50*time.Millisecond || c.BargeInConfirm > 2*time.Second {
		errs = append(errs, fmt.Errorf("PERSONA_BARGE_IN_CONFIRM %v: want 50ms to 2s", c.BargeInConfirm))
	}
	if c.Metrics != "" && c.Metrics != "emf" {
		errs = append(errs, fmt.Errorf("PERSONA_METRICS %q: want empty or emf", c.Metrics))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("PERSONA_LOG_LEVEL %q: want debug, info, warn or error", c.LogLevel))
	}
	return errors.Join(errs...)
}
