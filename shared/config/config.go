// Package config is Bridgeline's typed configuration: one struct with defaults, read from
// the environment once in main and validated there, so a bad setting stops start-up with
// one clear line.
package config

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Config is every setting of the control plane.
type Config struct {
	// Addr is the API's listen address (local stack): 127.0.0.1:$PORT.
	Addr string
	// DataDir holds the SQLite file and local state of the stack.
	DataDir string
	// Store is sqlite or dynamodb.
	Store string
	// DevAPIKey, when set, is the dev account's key instead of a generated one.
	DevAPIKey string
	// RateLimit is requests per second per API key (0 turns limiting off); RateBurst is
	// the bucket size.
	RateLimit float64
	RateBurst float64
	// TokenTTL is the participant token lifetime (1-60 min).
	TokenTTL time.Duration
	// LiveKit settings.
	LiveKitPort      int    // local livekit-server HTTP/WebSocket port
	LiveKitURL       string // how the control plane reaches LiveKit's API (http://...)
	LiveKitPublicURL string // rtc_url handed to clients (ws:// locally, wss:// in production)
	LiveKitAPIKey    string
	LiveKitSecret    string
	// MaxSession is the longest a session lives, from its creation; the sweeper ends
	// longer ones with end_reason max_duration (MAX_SESSION_MINUTES, fractions allowed,
	// up to 1440; default 60).
	MaxSession time.Duration
	// AssistantDispatchTimeout bounds the time from an assistant call's answer to the
	// first report of a persona worker; past it the call fails with assistant_unavailable
	// (ASSISTANT_DISPATCH_TIMEOUT_SECONDS, 1-300, default 15).
	AssistantDispatchTimeout time.Duration
	// HostedVoices are the voices of the hosted speech API (TTS_BASE_URL) the deployment
	// offers, from TTS_VOICES (comma-separated names); GET /v1/voices lists them as
	// hosted-<name> beside the local voices, and a draft may name them.
	HostedVoices []string
	// TTSBaseURL is the persona workers' hosted speech API; TTS_VOICES needs it.
	TTSBaseURL string
	// Webhooks says where webhook deliveries may connect: internal addresses are refused;
	// WEBHOOK_ALLOW_LOOPBACK=1 (set by `make run`) lets loopback receivers through.
	Webhooks egress.Policy
}

// FromEnv reads the environment over the defaults.
func FromEnv() (Config, error) {
	c := Config{
		Addr: "127.0.0.1:8080", DataDir: "data", Store: "sqlite",
		RateLimit: 25, RateBurst: 50, TokenTTL: 10 * time.Minute,
		LiveKitPort: 7880, LiveKitAPIKey: "devkey", LiveKitSecret: "bridgeline-dev-secret-change-me-0123456789",
		MaxSession: 60 * time.Minute, AssistantDispatchTimeout: 15 * time.Second,
	}
	var err error
	str := func(name string, dst *string) {
		if v, ok := os.LookupEnv(name); ok && v != "" {
			*dst = v
		}
	}
	num := func(name string, dst *float64) {
		if v, ok := os.LookupEnv(name); ok && v != "" && err == nil {
			if *dst, err = strconv.ParseFloat(v, 64); err != nil {
				err = fmt.Errorf("%s: not a number: %q", name, v)
			}
		}
	}
	if p := os.Getenv("PORT"); p != "" {
		n, perr := strconv.Atoi(p)
		if perr != nil || n < 1 || n > 65535 {
			return c, fmt.Errorf("PORT: not a port number: %q", p)
		}
		c.Addr = fmt.Sprintf("127.0.0.1:%d", n)
	}
	str("BRIDGELINE_DATA", &c.DataDir)
	str("BRIDGELINE_STORE", &c.Store)
	str("DEV_API_KEY", &c.DevAPIKey)
	num("RATE_LIMIT_RPS", &c.RateLimit)
	num("RATE_LIMIT_BURST", &c.RateBurst)
	if v := os.Getenv("TOKEN_TTL_MINUTES"); v != "" {
		n, perr := strconv.Atoi(v)
		if perr != nil {
			return c, fmt.Errorf("TOKEN_TTL_MINUTES: not an integer: %q", v)
		}
		c.TokenTTL = time.Duration(n) * time.Minute
	}
	if v := os.Getenv("LIVEKIT_PORT"); v != "" {
		n, perr := strconv.Atoi(v)
		if perr != nil {
			return c, fmt.Errorf("LIVEKIT_PORT: not a port number: %q", v)
		}
		c.LiveKitPort = n
	}
	if v := os.Getenv("MAX_SESSION_MINUTES"); v != "" {
		n, perr := strconv.ParseFloat(v, 64)
		if perr != nil {
			return c, fmt.Errorf("MAX_SESSION_MINUTES: not a number: %q", v)
		}
		c.MaxSession = time.Duration(n * float64(time.Minute))
	}
	if v := os.Getenv("ASSISTANT_DISPATCH_TIMEOUT_SECONDS"); v != "" {
		n, perr := strconv.ParseFloat(v, 64)
		if perr != nil {
			return c, fmt.Errorf("ASSISTANT_DISPATCH_TIMEOUT_SECONDS: not a number: %q", v)
		}
		c.AssistantDispatchTimeout = time.Duration(n * float64(time.Second))
	}
	if c.HostedVoices, err = persona.ParseHostedVoices(os.Getenv("TTS_VOICES")); err != nil {
		return c, err
	}
	str("TTS_BASE_URL", &c.TTSBaseURL)
	c.Webhooks = egress.PolicyFromEnv()
	str("LIVEKIT_URL", &c.LiveKitURL)
	str("LIVEKIT_PUBLIC_URL", &c.LiveKitPublicURL)
	str("LIVEKIT_API_KEY", &c.LiveKitAPIKey)
	str("LIVEKIT_API_SECRET", &c.LiveKitSecret)
	if err != nil {
		return c, err
	}
	c.fill()
	return c, c.Validate()
}

func (c *Config) fill() {
	if c.LiveKitURL == "" {
		c.LiveKitURL = fmt.Sprintf("http://127.0.0.1:%d", c.LiveKitPort)
	}
	if c.LiveKitPublicURL == "" {
		c.LiveKitPublicURL = fmt.Sprintf("ws://127.0.0.1:%d", c.LiveKitPort)
	}
}

// Validate checks every setting.
func (c Config) Validate() error {
	switch {
	case c.Store != "sqlite" && c.Store != "dynamodb":
		return fmt.Errorf("BRIDGELINE_STORE: must be sqlite or dynamodb, not %q", c.Store)
	case c.RateLimit < 0 || c.RateBurst < 1:
		return fmt.Errorf("RATE_LIMIT_RPS must be >= 0 and RATE_LIMIT_BURST >= 1")
	case c.TokenTTL < time.Minute || c.TokenTTL > time.Hour:
		return fmt.Errorf("TOKEN_TTL_MINUTES: must be 1-60, not %v", c.TokenTTL.Minutes())
	case len(c.LiveKitSecret) < 32:
		return fmt.Errorf("LIVEKIT_API_SECRET: must be at least 32 characters")
	case c.MaxSession < time.Second || c.MaxSession > 24*time.Hour:
		return fmt.Errorf("MAX_SESSION_MINUTES: must be above 0 and at most 1440, not %v", c.MaxSession.Minutes())
	case c.AssistantDispatchTimeout < time.Second || c.AssistantDispatchTimeout > 300*time.Second:
		return fmt.Errorf("ASSISTANT_DISPATCH_TIMEOUT_SECONDS: must be 1-300, not %v", c.AssistantDispatchTimeout.Seconds())
	case len(c.HostedVoices) > 0 && c.TTSBaseURL == "":
		return fmt.Errorf("TTS_VOICES: names hosted voices but TTS_BASE_URL is not set")
	}
	return nil
}
