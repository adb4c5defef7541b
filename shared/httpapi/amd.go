package httpapi

import (
	"bytes"
	"encoding/json"

	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/session"
)

// amdParam is the `amd` request parameter (POST /v1/sessions, a campaign's settings):
// true, false, or an object {"enabled", "voicemail_message"} whose enabled defaults to
// true. param names it in errors.
type amdParam struct {
	Enabled          *bool   `json:"enabled"`
	VoicemailMessage *string `json:"voicemail_message"`
}

// UnmarshalJSON takes a boolean or the object.
func (a *amdParam) UnmarshalJSON(b []byte) error { return a.decode(b, "amd") }

// settingsAMDParam is amdParam as a campaign's settings.amd.
type settingsAMDParam struct{ amdParam }

// UnmarshalJSON takes a boolean or the object.
func (a *settingsAMDParam) UnmarshalJSON(b []byte) error { return a.decode(b, "settings.amd") }

func (a *amdParam) decode(b []byte, param string) error {
	t := bytes.TrimSpace(b)
	switch {
	case bytes.Equal(t, []byte("true")), bytes.Equal(t, []byte("false")):
		on := t[0] == 't'
		*a = amdParam{Enabled: &on}
		return nil
	case len(t) > 0 && t[0] == '{':
		var v struct {
			Enabled          json.RawMessage `json:"enabled"`
			VoicemailMessage json.RawMessage `json:"voicemail_message"`
		}
		if err := json.Unmarshal(t, &v); err != nil {
			return &fieldError{param, param + " must be true, false or an object"}
		}
		var out amdParam
		if v.Enabled != nil && string(v.Enabled) != "null" {
			var on bool
			if json.Unmarshal(v.Enabled, &on) != nil {
				return &fieldError{param + ".enabled", param + ".enabled must be a boolean"}
			}
			out.Enabled = &on
		}
		if v.VoicemailMessage != nil && string(v.VoicemailMessage) != "null" {
			var m string
			if json.Unmarshal(v.VoicemailMessage, &m) != nil {
				return &fieldError{param + ".voicemail_message", param + ".voicemail_message must be a string"}
			}
			out.VoicemailMessage = &m
		}
		*a = out
		return nil
	}
	return &fieldError{param, param + ` must be true, false or an object {"enabled", "voicemail_message"}`}
}

// settings are the parameter as given; enabled defaults to true.
func (a amdParam) settings() session.AMD {
	out := session.AMD{Enabled: a.Enabled == nil || *a.Enabled}
	if a.VoicemailMessage != nil {
		out.VoicemailMessage = *a.VoicemailMessage
	}
	return out
}

// AMDJSON is a call's answering-machine detection in the API: what answered, when it
// was decided and how long after the answer, and whether the voicemail message was left.
type AMDJSON struct {
	Result      string `json:"result"`
	DecidedAt   Time   `json:"decided_at"`
	DecisionMS  int64  `json:"decision_ms"`
	MessageLeft bool   `json:"message_left"`
}

func presentAMD(a *persona.AMDResult) *AMDJSON {
	if a == nil {
		return nil
	}
	return &AMDJSON{Result: a.Result, DecidedAt: Time(a.DecidedAt), DecisionMS: a.DecisionMS, MessageLeft: a.MessageLeft}
}
