package assistant

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/schemacheck"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

// CallSettings are how a call of the assistant acts beyond talking: the tools on the
// customer's server the model may call, how long the caller may stay silent, and how
// long a call may last. A draft carries them, publish copies them into the version, and
// the persona worker gets them in the call's job (the tools without their URLs: the
// control plane makes the requests).
type CallSettings struct {
	Tools []Tool `json:"tools,omitempty"`
	// IdleTimeoutSeconds is the caller's silence after which the assistant asks whether
	// they are still there (then ends the call silence_timeout); 0 is
	// DefaultIdleTimeoutSeconds (records written before the setting existed).
	IdleTimeoutSeconds int `json:"idle_timeout_seconds,omitempty"`
	// MaxDurationSeconds ends the call politely (max_duration) that long after answer;
	// nil leaves only the deployment's limit.
	MaxDurationSeconds *int `json:"max_duration_seconds,omitempty"`
	// Analysis is asked of the model once a call has ended (analysis.go); nil: none.
	Analysis *Analysis `json:"analysis,omitempty"`
	// NoiseSuppressionOff turns off the caller's noise suppression (noise_suppression:
	// false); it is on by default, so records written before it existed keep it on.
	NoiseSuppressionOff bool `json:"noise_suppression_off,omitempty"`
	// Interruption tunes how the caller's speech over the assistant is taken
	// (interruption.go); nil: the default.
	Interruption *persona.Interruption `json:"interruption,omitempty"`
	// Vision is what of the caller's video the model sees (vision.go); empty is off.
	Vision string `json:"vision,omitempty"`
}

// Tool is a function on the customer's server that the model may call during a call.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is the JSON Schema (an object) of the arguments, stored compacted.
	Parameters json.RawMessage `json:"parameters"`
	URL        string          `json:"url"`
	TimeoutMS  int             `json:"timeout_ms"`
}

// Limits of the call settings; part of the contract in openapi.yaml.
const (
	MaxTools                  = 16
	MaxToolDescriptionLen     = 1000
	MaxToolParametersBytes    = 8 * 1024
	MaxAllToolParametersBytes = 32 * 1024
	DefaultToolTimeoutMS      = 5000
	MinToolTimeoutMS          = 100
	MaxToolTimeoutMS          = 20000

	DefaultIdleTimeoutSeconds = 30
	MinIdleTimeoutSeconds     = 10
	MaxIdleTimeoutSeconds     = 600
	MinMaxDurationSeconds     = 10
)

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// EmptyParameters is a tool's parameters when none are given: no arguments.
var EmptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// IdleTimeout is the silence the call waits before asking whether the caller is there.
func (c CallSettings) IdleTimeout() time.Duration {
	if c.IdleTimeoutSeconds == 0 {
		return DefaultIdleTimeoutSeconds * time.Second
	}
	return time.Duration(c.IdleTimeoutSeconds) * time.Second
}

// Tool returns the tool named name.
func (c CallSettings) Tool(name string) (Tool, bool) {
	for _, t := range c.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// toolRules are what checking a tool needs beyond the tool: where its URL may point,
// and whether the request came with a live key (https only).
type toolRules struct {
	dest    egress.Policy
	liveKey bool
}

// validTools checks a draft's tools and returns them normalised (parameters compacted,
// or EmptyParameters; timeout_ms defaulted). Errors name the tool's field, as
// tools[2].url.
func validTools(tools []Tool, rules toolRules) ([]Tool, error) {
	if len(tools) > MaxTools {
		return nil, apierr.Invalid("tools", fmt.Sprintf("an assistant can have at most %d tools", MaxTools))
	}
	out := make([]Tool, 0, len(tools))
	seen := map[string]bool{}
	total := 0
	for i, t := range tools {
		param := func(field string) string { return fmt.Sprintf("tools[%d].%s", i, field) }
		switch {
		case t.Name == "":
			return nil, apierr.Missing(param("name"))
		case !toolName.MatchString(t.Name):
			return nil, apierr.Invalid(param("name"), "a tool's name must be 1-64 letters, digits, _ or -")
		case isReserved(t.Name):
			return nil, apierr.Invalid(param("name"), fmt.Sprintf("%q is a built-in tool's name", t.Name))
		case seen[t.Name]:
			return nil, apierr.Invalid(param("name"), fmt.Sprintf("two tools are named %q; names must be unique", t.Name))
		}
		seen[t.Name] = true
		if err := maxLen(param("description"), t.Description, MaxToolDescriptionLen); err != nil {
			return nil, err
		}
		if len(t.Parameters) == 0 || string(t.Parameters) == "null" {
			t.Parameters = EmptyParameters
		} else {
			p, err := schemacheck.Object(t.Parameters, MaxToolParametersBytes)
			if err != nil {
				return nil, apierr.Invalid(param("parameters"), "parameters "+err.Error())
			}
			t.Parameters = p
		}
		if total += len(t.Parameters); total > MaxAllToolParametersBytes {
			return nil, apierr.Invalid(param("parameters"),
				fmt.Sprintf("the tools' parameters must be at most %d bytes of JSON together", MaxAllToolParametersBytes))
		}
		if err := toolURL(t.URL, rules); err != nil {
			return nil, renamed(err, param("url"))
		}
		switch {
		case t.TimeoutMS == 0:
			t.TimeoutMS = DefaultToolTimeoutMS
		case t.TimeoutMS < MinToolTimeoutMS || t.TimeoutMS > MaxToolTimeoutMS:
			return nil, apierr.Invalid(param("timeout_ms"),
				fmt.Sprintf("timeout_ms must be %d-%d", MinToolTimeoutMS, MaxToolTimeoutMS))
		}
		out = append(out, t)
	}
	return out, nil
}

// toolURL is a webhook endpoint's URL rule, applied to a tool's: absolute http(s), no
// credentials, no literal internal address, https for live keys. Host names are checked
// again when the request is made, after resolution.
func toolURL(raw string, rules toolRules) error {
	if err := webhookendpoint.ValidURL(raw); err != nil {
		return err
	}
	if err := webhookendpoint.AllowedHost(rules.dest, raw); err != nil {
		return err
	}
	if rules.liveKey && !isHTTPS(raw) {
		return apierr.Param(apierr.CodeURLNotAllowed, "url", "a live key's tools must use https")
	}
	return nil
}

// renamed is err with its param set to param (a tool's field), when it names one.
func renamed(err error, param string) error {
	if e, ok := apierr.As(err); ok {
		c := *e
		c.Param = param
		return &c
	}
	return err
}

func isReserved(name string) bool {
	for _, r := range persona.BuiltInTools {
		if r == name {
			return true
		}
	}
	return false
}

func validIdleTimeout(s int) error {
	if s < MinIdleTimeoutSeconds || s > MaxIdleTimeoutSeconds {
		return apierr.Invalid("idle_timeout_seconds",
			fmt.Sprintf("idle_timeout_seconds must be %d-%d", MinIdleTimeoutSeconds, MaxIdleTimeoutSeconds))
	}
	return nil
}

func validMaxDuration(s int, limit time.Duration) error {
	most := int(limit / time.Second)
	if s < MinMaxDurationSeconds || s > most {
		return apierr.Invalid("max_duration_seconds",
			fmt.Sprintf("max_duration_seconds must be %d-%d (the deployment's longest call)", MinMaxDurationSeconds, most))
	}
	return nil
}

func isHTTPS(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Scheme == "https"
}
