package persona

import "time"

// AMD asks the worker of an outbound call for answering-machine detection
// (mediafleet/amd): within the first seconds after the answer it decides whether a
// person, a voicemail box, a call-screening assistant or nobody answered, before the
// greeting. VoicemailMessage (rendered) is left on a voicemail box after its beep; empty:
// the worker hangs up on one.
type AMD struct {
	VoicemailMessage string `json:"voicemail_message,omitempty"`
}

// ReportAMD carries the detection's decision (Report.AMD) as soon as it is made, so the
// record has it before the call ends; the ended report carries it again, with whether
// the voicemail message was left.
const ReportAMD = "amd"

// What answered an outbound call, as detected (AMDResult.Result).
const (
	AnsweredHuman     = "human"
	AnsweredVoicemail = "voicemail"
	AnsweredScreening = "screening"
	AnsweredSilence   = "silence"
	AnsweredUnknown   = "unknown"
)

// AMDResults are every result.
var AMDResults = []string{AnsweredHuman, AnsweredVoicemail, AnsweredScreening, AnsweredSilence, AnsweredUnknown}

// AMDResult is the detection's decision on a call.
type AMDResult struct {
	Result string `json:"result"`
	// Reason is what decided it: short_greeting, long_greeting, beep, words, no_speech,
	// bound (mediafleet/amd).
	Reason string `json:"reason,omitempty"`
	// DecidedAt is when; DecisionMS, how long after the answer.
	DecidedAt  time.Time `json:"decided_at"`
	DecisionMS int64     `json:"decision_ms"`
	// MessageLeft: the voicemail message played to its end (ended report only).
	MessageLeft bool `json:"message_left,omitempty"`
}
