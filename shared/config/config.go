// Package config is Bridgeline's typed control-plane configuration: one struct with
// defaults, read from the environment the same way by the local stack (`bridgeline dev`,
// `bridgeline admin`) and by every Lambda (functions/internal/wire), and checked by one
// Validate, so a bad setting stops start-up with one line naming the variable.
//
// Some settings only mean something on the local stack (its ports, its store, its
// in-process workers); the README's configuration table says which. On Lambda they keep
// their defaults, which validate.
package config

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Config is every setting of the control plane.
type Config struct {
	// Addr is the API's listen address (local stack): 127.0.0.1:$PORT.
	Addr string
	// DataDir holds the SQLite file and local state of the stack.
	DataDir string
	// Store is sqlite or dynamodb (local stack; Lambdas always use DynamoDB).
	Store string
	// DynamoDBEndpoint points the local stack's DynamoDB store at an emulator
	// (DYNAMODB_ENDPOINT, e.g. DynamoDB Local); empty leaves the AWS SDK's resolution.
	DynamoDBEndpoint string
	// DevAPIKey, when set, is the dev account's key instead of a generated one.
	DevAPIKey string
	// RateLimit is requests per second per API key (0 turns limiting off); RateBurst is
	// the bucket size. Local stack only: on AWS, API Gateway throttles.
	RateLimit float64
	RateBurst float64
	// TokenTTL is the participant token lifetime (1-60 min).
	TokenTTL time.Duration
	// LiveKit settings.
	LiveKitPort      int    // local livekit-server HTTP/WebSocket port
	LiveKitTCPPort   int    // local livekit-server RTC TCP port
	LiveKitUDPPort   int    // local livekit-server RTC UDP port
	LiveKitBinary    string // local livekit-server executable (empty: the pinned build)
	LiveKitURL       string // how the control plane reaches LiveKit's API (http://...)
	LiveKitPublicURL string // rtc_url handed to clients (ws:// locally, wss:// in production)
	LiveKitAPIKey    string
	// LiveKitSecret signs every LiveKit token (LIVEKIT_API_SECRET). It has no default:
	// the local stack makes one per data folder on first start (LocalLiveKitSecret), a
	// Lambda reads its own from Secrets Manager, and Validate refuses PublicDevSecret.
	LiveKitSecret string
	// SIPPort is where the local stack's SIP bridge (livekit-sip) takes SIP over UDP and
	// TCP on 127.0.0.1 (SIP_PORT, default 5060); 0 (SIP_PORT=off) runs no SIP bridge and
	// no Redis. SIPRTPPortStart-SIPRTPPortEnd is its media range (SIP_RTP_PORTS).
	SIPPort         int
	SIPRTPPortStart int
	SIPRTPPortEnd   int
	// LiveKitSIPBinary is a livekit-sip executable (empty: the pinned build).
	LiveKitSIPBinary string
	// SIPPublicHost and SIPPublicPort are where SIP providers send calls: the origination
	// URI every trunk shows (SIP_PUBLIC_HOST, default 127.0.0.1; SIP_PUBLIC_PORT, default
	// SIP_PORT, or 5060 when it is off). On AWS: the SIP fleet's DNS name.
	SIPPublicHost string
	SIPPublicPort int
	// SIPGatewayPort is the loopback port of the local stack's SIP gateway, which
	// livekit-sip joins rooms through (SIP_GATEWAY_PORT; 0, the default, picks a free
	// one).
	SIPGatewayPort int
	// SIPVideoPort is where the local stack's SIP video bridge (mediafleet/sipvideo) takes
	// SIP over UDP on 127.0.0.1: phones whose calls carry video call it (SIP_VIDEO_PORT,
	// default 5080; off runs none, and SIP stays audio only). SIPVideoRTPPortStart-End is
	// its media range (SIP_VIDEO_RTP_PORTS, two port pairs a video call).
	SIPVideoPort         int
	SIPVideoRTPPortStart int
	SIPVideoRTPPortEnd   int
	// SIPVideoPublicPort is the video bridge's port on SIPPublicHost, which trunks show
	// as video_origination_uri (SIP_VIDEO_PUBLIC_PORT; the local stack: SIPVideoPort
	// while the bridge runs). 0: no video bridge, SIP is audio only.
	SIPVideoPublicPort int
	// PersonaReportSecret verifies the persona workers' reports (PERSONA_REPORT_SECRET):
	// a key of the control plane and the workers only, unlike the LiveKit secret that
	// livekit-server holds too. On AWS the persona-report function reads it from
	// Secrets Manager (PERSONA_REPORT_SECRET_ARN, functions/internal/wire). It has no
	// default: the local stack makes one per data folder on first start
	// (LocalReportSecret), and Validate refuses PublicDevReportSecret.
	PersonaReportSecret string
	// PersonaWorkers is how many persona workers the local stack runs in-process (0 for
	// none). Lambdas run none (wire sets 0).
	PersonaWorkers int
	// MaxSession is the longest a session lives, from its creation; the sweeper ends
	// longer ones with end_reason max_duration (MAX_SESSION_MINUTES, fractions allowed,
	// up to 1440; default 60).
	MaxSession time.Duration
	// AssistantDispatchTimeout bounds the time from an assistant call's answer to the
	// first report of a persona worker; past it the call fails with assistant_unavailable
	// (ASSISTANT_DISPATCH_TIMEOUT_SECONDS, 1-300, default 15).
	AssistantDispatchTimeout time.Duration
	// MaxConcurrentSessions is an account's limit of live sessions (ringing or active,
	// outbound or inbound) unless the operator gave the account its own
	// (MAX_CONCURRENT_SESSIONS, 1-10000, default 20). Over it POST /v1/sessions answers
	// 429 concurrent_session_limit and an inbound call is declined.
	MaxConcurrentSessions int
	// SweepWindow is how long one invocation of the AWS session-sweeper sweeps
	// (SWEEP_WINDOW_SECONDS, 1-900, default 60); the local stack sweeps all the time.
	SweepWindow time.Duration
	// HostedVoices are the voices of the hosted speech API (TTS_BASE_URL) the deployment
	// offers, from TTS_VOICES (comma-separated names); GET /v1/voices lists them as
	// hosted-<name> beside the local voices, and a draft may name them.
	HostedVoices []string
	// Models are the language models a version may name beside the fleet's default
	// (LLM_MODELS, comma-separated names); GET /v1/models lists them. Empty: a version
	// names no model, every call runs on the fleet's LLM_MODEL.
	Models []string
	// VisionModels are those of Models that accept images (LLM_VISION_MODELS,
	// comma-separated names): a version with vision must name one. Empty: no version
	// may have vision.
	VisionModels []string
	// Languages are the languages the media fleet's recogniser hears (STT_LANGUAGES,
	// comma-separated BCP-47 tags; default en, all pocketsphinx hears): a version's
	// language must be one of them, spoken by one of the deployment's voices.
	Languages []string
	// TTSBaseURL is the persona workers' hosted speech API; TTS_VOICES needs it when
	// workers run in-process (on AWS it is the fleet's setting).
	TTSBaseURL string
	// Webhooks says where webhook deliveries may connect: internal addresses are refused;
	// WEBHOOK_ALLOW_LOOPBACK=1 (set by `make run`) lets loopback receivers through.
	Webhooks egress.Policy
	// JoinPageURL is the hosted join page's address, the base of a web call's join_url
	// (JOIN_PAGE_URL, http(s)); empty derives it from each request: the API's own host,
	// path /join/call, which is where the local stack and the API on AWS serve the page.
	JoinPageURL string
}

// Defaults is the configuration of an empty environment.
func Defaults() Config {
	c := Config{
		Addr: "127.0.0.1:8080", DataDir: "data", Store: "sqlite",
		RateLimit: 25, RateBurst: 50, TokenTTL: 10 * time.Minute,
		LiveKitPort: 7880, LiveKitTCPPort: 7881, LiveKitUDPPort: 7882,
		SIPPort: 5060, SIPRTPPortStart: 10000, SIPRTPPortEnd: 10199,
		SIPVideoPort: 5080, SIPVideoRTPPortStart: 10200, SIPVideoRTPPortEnd: 10399,
		LiveKitAPIKey:  "devkey",
		PersonaWorkers: 1, MaxSession: 60 * time.Minute, AssistantDispatchTimeout: 15 * time.Second,
		SweepWindow: 60 * time.Second, MaxConcurrentSessions: 20, Languages: []string{persona.DefaultLanguage},
	}
	c.fill()
	return c
}

// FromEnv reads the environment over the defaults. A value that does not parse is an
// error naming its variable; the ranges are Validate's, which callers run once they have
// applied their own overrides (flags, what a Lambda does not run).
func FromEnv() (Config, error) { return Read(os.Getenv) }

// Read is FromEnv over any lookup (tests, a worker's local overrides).
func Read(getenv func(string) string) (Config, error) {
	c := Defaults()
	c.LiveKitURL, c.LiveKitPublicURL, c.SIPPublicPort = "", "", 0
	var errs []string
	fail := func(name, what, v string) { errs = append(errs, fmt.Sprintf("%s: %s: %q", name, what, v)) }
	str := func(name string, dst *string) {
		if v := getenv(name); v != "" {
			*dst = v
		}
	}
	// portOrOff reads a port, or "off" for none (0).
	portOrOff := func(name string, dst *int) {
		if v := strings.TrimSpace(getenv(name)); strings.EqualFold(v, "off") {
			*dst = 0
		} else if v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				fail(name, "not a port number or off", v)
			}
			*dst = n
		}
	}
	// portRange reads a range of ports, first-last.
	portRange := func(name, example string, first, last *int) {
		if v := getenv(name); v != "" {
			lo, hi, ok := strings.Cut(strings.TrimSpace(v), "-")
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if !ok || err1 != nil || err2 != nil {
				fail(name, "not a range like "+example, v)
			} else {
				*first, *last = a, b
			}
		}
	}
	integer := func(name string, dst *int) {
		if v := getenv(name); v != "" {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				fail(name, "not an integer", v)
				return
			}
			*dst = n
		}
	}
	number := func(name string, dst *float64) {
		if v := getenv(name); v != "" {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				fail(name, "not a number", v)
				return
			}
			*dst = n
		}
	}
	duration := func(name string, unit time.Duration, dst *time.Duration) {
		f := float64(*dst) / float64(unit)
		number(name, &f)
		*dst = time.Duration(f * float64(unit))
	}

	port := 0
	integer("PORT", &port)
	if port != 0 {
		if port < 1 || port > 65535 {
			fail("PORT", "not a port number", getenv("PORT"))
		}
		c.Addr = fmt.Sprintf("127.0.0.1:%d", port)
	}
	str("BRIDGELINE_DATA", &c.DataDir)
	str("BRIDGELINE_STORE", &c.Store)
	str("DYNAMODB_ENDPOINT", &c.DynamoDBEndpoint)
	str("DEV_API_KEY", &c.DevAPIKey)
	number("RATE_LIMIT_RPS", &c.RateLimit)
	number("RATE_LIMIT_BURST", &c.RateBurst)
	ttl := int(c.TokenTTL / time.Minute)
	integer("TOKEN_TTL_MINUTES", &ttl)
	c.TokenTTL = time.Duration(ttl) * time.Minute
	integer("LIVEKIT_PORT", &c.LiveKitPort)
	integer("LIVEKIT_RTC_TCP_PORT", &c.LiveKitTCPPort)
	integer("LIVEKIT_RTC_UDP_PORT", &c.LiveKitUDPPort)
	str("LIVEKIT_SERVER_BIN", &c.LiveKitBinary)
	str("LIVEKIT_SIP_BIN", &c.LiveKitSIPBinary)
	str("SIP_PUBLIC_HOST", &c.SIPPublicHost)
	integer("SIP_PUBLIC_PORT", &c.SIPPublicPort)
	integer("SIP_GATEWAY_PORT", &c.SIPGatewayPort)
	portOrOff("SIP_PORT", &c.SIPPort)
	portRange("SIP_RTP_PORTS", "10000-10199", &c.SIPRTPPortStart, &c.SIPRTPPortEnd)
	portOrOff("SIP_VIDEO_PORT", &c.SIPVideoPort)
	portRange("SIP_VIDEO_RTP_PORTS", "10200-10399", &c.SIPVideoRTPPortStart, &c.SIPVideoRTPPortEnd)
	integer("SIP_VIDEO_PUBLIC_PORT", &c.SIPVideoPublicPort)
	str("JOIN_PAGE_URL", &c.JoinPageURL)
	str("LIVEKIT_URL", &c.LiveKitURL)
	str("LIVEKIT_PUBLIC_URL", &c.LiveKitPublicURL)
	str("LIVEKIT_API_KEY", &c.LiveKitAPIKey)
	str("LIVEKIT_API_SECRET", &c.LiveKitSecret)
	str("PERSONA_REPORT_SECRET", &c.PersonaReportSecret)
	integer("PERSONA_WORKERS", &c.PersonaWorkers)
	duration("MAX_SESSION_MINUTES", time.Minute, &c.MaxSession)
	duration("ASSISTANT_DISPATCH_TIMEOUT_SECONDS", time.Second, &c.AssistantDispatchTimeout)
	duration("SWEEP_WINDOW_SECONDS", time.Second, &c.SweepWindow)
	integer("MAX_CONCURRENT_SESSIONS", &c.MaxConcurrentSessions)
	var err error
	if c.HostedVoices, err = persona.ParseHostedVoices(getenv("TTS_VOICES")); err != nil {
		errs = append(errs, err.Error())
	}
	if c.Models, err = persona.ParseModels(getenv("LLM_MODELS")); err != nil {
		errs = append(errs, err.Error())
	}
	if c.VisionModels, err = persona.ParseVisionModels(getenv("LLM_VISION_MODELS"), c.Models); err != nil {
		errs = append(errs, err.Error())
	}
	if c.Languages, err = persona.ParseLanguages(getenv("STT_LANGUAGES")); err != nil {
		errs = append(errs, err.Error())
	}
	str("TTS_BASE_URL", &c.TTSBaseURL)
	switch v := strings.ToLower(strings.TrimSpace(getenv(egress.AllowLoopbackEnv))); v {
	case "", "0", "false":
	case "1", "true":
		c.Webhooks.AllowLoopback = true
	default:
		fail(egress.AllowLoopbackEnv, "not 1, true, 0 or false", v)
	}
	c.fill()
	if len(errs) > 0 {
		return c, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return c, nil
}

// fill derives LiveKit's addresses from the local port when they are not set.
func (c *Config) fill() {
	if c.LiveKitURL == "" {
		c.LiveKitURL = fmt.Sprintf("http://127.0.0.1:%d", c.LiveKitPort)
	}
	if c.LiveKitPublicURL == "" {
		c.LiveKitPublicURL = fmt.Sprintf("ws://127.0.0.1:%d", c.LiveKitPort)
	}
	if c.SIPPublicHost == "" {
		c.SIPPublicHost = "127.0.0.1"
	}
	if c.SIPPublicPort == 0 {
		c.SIPPublicPort = c.SIPPort
		if c.SIPPublicPort == 0 {
			c.SIPPublicPort = 5060
		}
	}
}

// Validate checks every setting; its error names the variable to fix.
func (c Config) Validate() error {
	badPort := func(p int) bool { return p < 1 || p > 65535 }
	hasScheme := func(u string, schemes ...string) bool {
		p, err := url.Parse(u)
		if err != nil || p.Host == "" {
			return false
		}
		for _, s := range schemes {
			if p.Scheme == s {
				return true
			}
		}
		return false
	}
	switch {
	case c.Store != "sqlite" && c.Store != "dynamodb":
		return fmt.Errorf("BRIDGELINE_STORE: must be sqlite or dynamodb, not %q", c.Store)
	case c.DataDir == "":
		return fmt.Errorf("BRIDGELINE_DATA: must name a folder")
	case c.DynamoDBEndpoint != "" && !hasScheme(c.DynamoDBEndpoint, "http", "https"):
		return fmt.Errorf("DYNAMODB_ENDPOINT: not an http(s) URL: %q", c.DynamoDBEndpoint)
	case c.DevAPIKey != "" && !account.WellFormed(c.DevAPIKey):
		return fmt.Errorf("DEV_API_KEY: not a key of the form sk_test_<at least 22 letters or digits>")
	case c.RateLimit < 0:
		return fmt.Errorf("RATE_LIMIT_RPS: must be >= 0, not %v", c.RateLimit)
	case c.RateBurst < 1:
		return fmt.Errorf("RATE_LIMIT_BURST: must be >= 1, not %v", c.RateBurst)
	case c.TokenTTL < time.Minute || c.TokenTTL > time.Hour:
		return fmt.Errorf("TOKEN_TTL_MINUTES: must be 1-60, not %v", c.TokenTTL.Minutes())
	case badPort(c.LiveKitPort):
		return fmt.Errorf("LIVEKIT_PORT: not a port number: %d", c.LiveKitPort)
	case badPort(c.LiveKitTCPPort):
		return fmt.Errorf("LIVEKIT_RTC_TCP_PORT: not a port number: %d", c.LiveKitTCPPort)
	case badPort(c.LiveKitUDPPort):
		return fmt.Errorf("LIVEKIT_RTC_UDP_PORT: not a port number: %d", c.LiveKitUDPPort)
	case c.SIPPort != 0 && badPort(c.SIPPort):
		return fmt.Errorf("SIP_PORT: not a port number: %d", c.SIPPort)
	case badPort(c.SIPPublicPort):
		return fmt.Errorf("SIP_PUBLIC_PORT: not a port number: %d", c.SIPPublicPort)
	case c.SIPGatewayPort != 0 && badPort(c.SIPGatewayPort):
		return fmt.Errorf("SIP_GATEWAY_PORT: not a port number: %d", c.SIPGatewayPort)
	case c.SIPVideoPublicPort != 0 && badPort(c.SIPVideoPublicPort):
		return fmt.Errorf("SIP_VIDEO_PUBLIC_PORT: not a port number: %d", c.SIPVideoPublicPort)
	case c.SIPVideoPort != 0 && badPort(c.SIPVideoPort):
		return fmt.Errorf("SIP_VIDEO_PORT: not a port number: %d", c.SIPVideoPort)
	case badPort(c.SIPVideoRTPPortStart) || badPort(c.SIPVideoRTPPortEnd) || c.SIPVideoRTPPortEnd-c.SIPVideoRTPPortStart < 3:
		return fmt.Errorf("SIP_VIDEO_RTP_PORTS: not a range of ports holding at least four (a video call's two pairs): %d-%d", c.SIPVideoRTPPortStart, c.SIPVideoRTPPortEnd)
	case badPort(c.SIPRTPPortStart) || badPort(c.SIPRTPPortEnd) || c.SIPRTPPortEnd-c.SIPRTPPortStart < 1:
		return fmt.Errorf("SIP_RTP_PORTS: not a range of ports holding at least two: %d-%d", c.SIPRTPPortStart, c.SIPRTPPortEnd)
	case c.SIPPort != 0 && c.SIPPort >= c.SIPRTPPortStart && c.SIPPort <= c.SIPRTPPortEnd:
		return fmt.Errorf("SIP_PORT: %d is inside SIP_RTP_PORTS %d-%d", c.SIPPort, c.SIPRTPPortStart, c.SIPRTPPortEnd)
	case !hasScheme(c.LiveKitURL, "http", "https"):
		return fmt.Errorf("LIVEKIT_URL: not an http(s) URL: %q", c.LiveKitURL)
	case c.JoinPageURL != "" && (!hasScheme(c.JoinPageURL, "http", "https") || strings.ContainsAny(c.JoinPageURL, "?#")):
		return fmt.Errorf("JOIN_PAGE_URL: not an http(s) URL without a query or fragment: %q", c.JoinPageURL)
	case !hasScheme(c.LiveKitPublicURL, "ws", "wss"):
		return fmt.Errorf("LIVEKIT_PUBLIC_URL: not a ws(s) URL: %q", c.LiveKitPublicURL)
	case c.LiveKitAPIKey == "":
		return fmt.Errorf("LIVEKIT_API_KEY: must not be empty")
	case c.LiveKitSecret == PublicDevSecret:
		return fmt.Errorf("LIVEKIT_API_SECRET: is the public default %q that older releases shipped; unset it (the local stack then makes its own in %s) or set one of your own", PublicDevSecret, LiveKitSecretFileName)
	case c.LiveKitSecret != "" && len(c.LiveKitSecret) < 32:
		return fmt.Errorf("LIVEKIT_API_SECRET: must be at least 32 characters")
	case c.PersonaReportSecret == PublicDevReportSecret:
		return fmt.Errorf("PERSONA_REPORT_SECRET: is the public default %q that older releases shipped; unset it (the local stack then makes its own in %s) or set one of your own", PublicDevReportSecret, ReportSecretFileName)
	case len(c.PersonaReportSecret) < persona.MinReportSecret:
		return fmt.Errorf("PERSONA_REPORT_SECRET: must be at least %d characters", persona.MinReportSecret)
	case c.PersonaReportSecret == c.LiveKitSecret:
		return fmt.Errorf("PERSONA_REPORT_SECRET: must differ from LIVEKIT_API_SECRET (livekit-server holds that one)")
	case c.PersonaWorkers < 0 || c.PersonaWorkers > 64:
		return fmt.Errorf("PERSONA_WORKERS: must be 0-64, not %d", c.PersonaWorkers)
	case c.MaxSession < time.Second || c.MaxSession > 24*time.Hour:
		return fmt.Errorf("MAX_SESSION_MINUTES: must be above 0 and at most 1440, not %v", c.MaxSession.Minutes())
	case c.AssistantDispatchTimeout < time.Second || c.AssistantDispatchTimeout > 300*time.Second:
		return fmt.Errorf("ASSISTANT_DISPATCH_TIMEOUT_SECONDS: must be 1-300, not %v", c.AssistantDispatchTimeout.Seconds())
	case c.SweepWindow < time.Second || c.SweepWindow > 900*time.Second:
		return fmt.Errorf("SWEEP_WINDOW_SECONDS: must be 1-900, not %v", c.SweepWindow.Seconds())
	case c.MaxConcurrentSessions < 1 || c.MaxConcurrentSessions > 10000:
		return fmt.Errorf("MAX_CONCURRENT_SESSIONS: must be 1-10000, not %d", c.MaxConcurrentSessions)
	case len(c.HostedVoices) > 0 && c.TTSBaseURL == "" && c.PersonaWorkers > 0:
		return fmt.Errorf("TTS_VOICES: names hosted voices but TTS_BASE_URL is not set for the in-process persona workers")
	}
	return nil
}

// Load is FromEnv then Validate: the whole start-up check.
func Load() (Config, error) {
	c, err := FromEnv()
	if err != nil {
		return c, err
	}
	return c, c.Validate()
}
