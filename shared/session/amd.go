package session

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/variables"
)

// MaxVoicemailMessageLen bounds a voicemail message, rendered (about a minute spoken).
const MaxVoicemailMessageLen = 1000

// AMD is answering-machine detection on an outbound assistant call (POST /v1/sessions
// "amd", a campaign's settings.amd): the persona worker decides from the callee's first
// seconds (at most 3 s) whether a person, a voicemail box, a call-screening assistant or
// nobody answered. A person (or an undecided answer) gets the greeting; a voicemail box
// gets VoicemailMessage after its beep, or is hung up on when there is none; silence
// gets the greeting with a short idle timeout. The API takes true, false, or an object.
type AMD struct {
	Enabled bool `json:"enabled"`
	// VoicemailMessage is left on a voicemail box; it may hold {{name}} placeholders,
	// rendered with the call's variables (over the line's defaults).
	VoicemailMessage string `json:"voicemail_message,omitempty"`
}

// Validate checks the settings given as param.
func (a AMD) Validate(param string) error {
	m := a.VoicemailMessage
	if m == "" {
		return nil
	}
	p := param + ".voicemail_message"
	if strings.TrimSpace(m) == "" || utf8.RuneCountInString(m) > MaxVoicemailMessageLen || strings.ContainsRune(m, 0) {
		return apierr.Invalid(p, fmt.Sprintf("voicemail_message must be 1 to %d characters, not blank", MaxVoicemailMessageLen))
	}
	if _, err := variables.Check(p, m); err != nil {
		return err
	}
	return nil
}

// job is what the worker is given: nil when detection is off; the message rendered with
// the call's values over the line's defaults.
func (a *AMD) job(values, defaults map[string]string) *persona.AMD {
	if a == nil || !a.Enabled {
		return nil
	}
	all := make(map[string]string, len(values)+len(defaults))
	for k, v := range defaults {
		all[k] = v
	}
	for k, v := range values {
		all[k] = v
	}
	msg := variables.Render(a.VoicemailMessage, all)
	if utf8.RuneCountInString(msg) > MaxVoicemailMessageLen {
		msg = string([]rune(msg)[:MaxVoicemailMessageLen])
	}
	return &persona.AMD{VoicemailMessage: msg}
}
