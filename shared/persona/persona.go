// Package persona is the contract between the control plane and the persona workers of
// the media fleet: the job a worker receives in LiveKit's agent dispatch metadata, and the
// reports it sends back through the one authenticated internal route.
//
// It imports nothing from the media stack, so Lambdas can build jobs and read reports.
package persona

import "time"

// AgentName is the LiveKit agent name persona workers register under and the control
// plane dispatches to.
const AgentName = "bridgeline-persona"

// ReportPath is the control plane's internal route for worker reports. A report is
// authenticated the way LiveKit signs its webhooks: an `Authorization` header holding a
// LiveKit API JWT (the fleet's API key and secret) with subject ReportSubject, whose
// sha256 claim is the base64 SHA-256 of the raw body. VerifyReport checks all of it.
const ReportPath = "/internal/persona/report"

// Framing says how the avatar sits in the video frame: the assistant's setting, the
// job's, and what the worker's avatar scene places. This is its one definition.
type Framing struct {
	Shot     string `json:"shot"`     // close_up | medium | wide
	Position string `json:"position"` // left | center | right
}

// Framing values.
const (
	ShotCloseUp = "close_up"
	ShotMedium  = "medium"
	ShotWide    = "wide"

	PositionLeft   = "left"
	PositionCenter = "center"
	PositionRight  = "right"
)

// DefaultFraming is what a draft gets when none is given, and what the avatar scene uses
// for a value it does not know.
var DefaultFraming = Framing{Shot: ShotMedium, Position: PositionCenter}

// Version is the immutable snapshot of an assistant version that a call runs with. It is
// fixed when the call is answered: publishing during a call changes only later calls.
type Version struct {
	AssistantID  string  `json:"assistant_id"`
	ID           string  `json:"id"`
	Number       int     `json:"number"`
	Name         string  `json:"name"`
	SystemPrompt string  `json:"system_prompt"`
	Greeting     string  `json:"greeting"`
	AvatarID     string  `json:"avatar_id"`
	Framing      Framing `json:"framing"`
	// Voice is a voice id of the catalogue (VoiceByID); empty means the avatar's default.
	Voice string `json:"voice,omitempty"`
	// Model overrides the deployment's LLM_MODEL for this version; empty means the default.
	Model string `json:"model,omitempty"`
	// Language is the BCP-47 tag the caller is heard and answered in: the recogniser's
	// language, the default voice's (VoiceFor) and the turn-taking words'. Empty means
	// DefaultLanguage, in the recogniser's own tag (DEEPGRAM_LANGUAGE).
	Language string `json:"language,omitempty"`
	// CallSettings: tools, idle timeout, maximum duration (calls.go).
	CallSettings
	// TransferDestinations are where the assistant may hand the call (its transfer_call
	// tool); none: the tool is not offered.
	TransferDestinations []TransferDestination `json:"transfer_destinations,omitempty"`
}

// TransferDestination is a number or SIP URI an assistant may transfer a call to, with
// what the model is told of it.
type TransferDestination struct {
	To          string `json:"to"`
	Description string `json:"description"`
}

// TransferPath is where a persona worker asks the control plane to transfer its call
// (the assistant's transfer_call tool), signed as reports are (SignReport). The answer
// is 200 ({"transferred": true}) once the destination answered, where the control plane
// waits for it (the local stack); 202 ({"pending": true}) where it queued the transfer
// (AWS: a request there may not wait for a phone to ring): the worker then learns the
// outcome in the room, the caller leaving for the destination or a TransferNotice; else
// an error with its code (transfer_failed: the call goes on).
const TransferPath = "/internal/persona/transfer"

// TransferRequest is the body of a transfer request.
type TransferRequest struct {
	CallID string `json:"call_id"`
	To     string `json:"to"`
}

// TransferTopic is the topic of the data packet the control plane sends into the room
// of a call an assistant handles when a transfer of it failed (TransferNotice): the
// worker tells the caller, whoever asked for the transfer. LiveKit's server API sends
// it, so the packet names no participant: one a participant sent is not a notice.
const TransferTopic = "bridgeline.transfer"

// TransferNotice is the body of a TransferTopic packet (JSON).
type TransferNotice struct {
	CallID string `json:"call_id"`
	To     string `json:"to"`
	// Status is TransferFailed (the only outcome sent: a completed transfer takes the
	// caller out of the room).
	Status string `json:"status"`
	// Failure says why, as the call record's transfer does.
	Failure string `json:"failure"`
	// By is who asked: "assistant" (its transfer_call) or "customer" (the API).
	By          string    `json:"by"`
	RequestedAt time.Time `json:"requested_at"`
}

// TransferFailed is a TransferNotice's Status for a transfer that did not go through.
const TransferFailed = "failed"

// Brand is what the connecting screen shows.
type Brand struct {
	Name  string `json:"name"`
	Color string `json:"color"` // #rrggbb
	// Logo is the SHA-256 of the account's logo file when it has one: the worker asks
	// for the file at AvatarPath (AvatarRequest.Logo) unless it holds that one already.
	// The job carries only this, not the file, which is up to 256 KiB.
	Logo string `json:"logo,omitempty"`
}

// Job is the agent dispatch metadata (JSON) for one assistant-handled call.
type Job struct {
	CallID         string    `json:"call_id"`
	SessionID      string    `json:"session_id"`
	AccountID      string    `json:"account_id"`
	Media          string    `json:"media"`           // video | audio
	CallerIdentity string    `json:"caller_identity"` // participant identity of the caller: the platform party, or a web call's client
	AnsweredAt     time.Time `json:"answered_at"`
	Brand          Brand     `json:"brand"`
	Version        Version   `json:"version"`
	// JoinBy is set on a web call, whose caller is a client that joins the room with the
	// token the session's create returned (no platform party). Its job is dispatched when
	// the session is created, before the caller is there: the worker joins, makes ready,
	// and waits for CallerIdentity until JoinBy. The call is answered when the caller
	// joins (AnsweredAt is zero): the transcript's offsets and the first metrics count
	// from then.
	JoinBy time.Time `json:"join_by,omitzero"`
	// TranscriptEvents says an enabled webhook endpoint of the account subscribed to
	// call.transcript when the call was answered: the worker then reports each final
	// turn as it happens (ReportTurn). Otherwise it sends none, and no event is written.
	TranscriptEvents bool `json:"transcript_events,omitempty"`
	// Recording says the call is recorded (the session's recording, else the version's,
	// is audio): the worker records both sides from the answer to the end and uploads
	// the file when the call ends.
	Recording bool `json:"recording,omitempty"`
	// AMD, set on an outbound call that asked for it, runs answering-machine detection
	// before the greeting (amd.go).
	AMD *AMD `json:"amd,omitempty"`
}

// WebCall reports whether the job is a web call's (JoinBy).
func (j Job) WebCall() bool { return !j.JoinBy.IsZero() }

// Report kinds a worker sends, in the order a healthy call produces them.
const (
	ReportConnecting    = "connecting_screen" // first connecting-screen frame published
	ReportMediaVerified = "media_verified"    // caller audio decoded and caller subscribed to our tracks
	ReportGreeting      = "greeting_started"  // first greeting audio published
	ReportEnded         = "ended"             // the worker left the call
	// ReportTurn carries one final turn (Report.Turn) as it happens, for call.transcript;
	// it changes nothing on the call record (the ended report's transcript does).
	ReportTurn = "turn"
	// ReportRecording follows the ended report of a recorded call (Job.Recording): the
	// file the worker stored, or why there is none (Report.Recording).
	ReportRecording = "recording"
)

// Why a worker left a call (Report.EndReason of ReportEnded).
const (
	EndCallerHangup    = "caller_hangup"    // the caller left the room
	EndAssistantHangup = "assistant_hangup" // the conversation finished the call
	EndMediaFailed     = "media_failed"     // media was not verified both ways in time
	EndRoomClosed      = "room_closed"      // the room went away (deleted by the control plane)
	EndTerminated      = "terminated"       // LiveKit terminated the job
	EndWorkerShutdown  = "worker_shutdown"  // the worker's drain timed out
	EndError           = "error"            // the worker failed
	EndCallerAbsent    = "caller_absent"    // a web call's caller did not join by the job's JoinBy
	// EndSilenceTimeout: the caller said nothing for the version's idle timeout, was
	// asked whether they were still there, and said nothing again.
	EndSilenceTimeout = "silence_timeout"
	// EndMaxDuration: the call reached the version's max_duration_seconds; the assistant
	// said so and hung up.
	EndMaxDuration = "max_duration"
)

// Turn is one utterance of the conversation.
type Turn struct {
	Speaker string `json:"speaker"` // assistant | caller
	// Text is what was said; for an interrupted assistant turn, only what the caller heard.
	Text    string `json:"text"`
	StartMS int64  `json:"start_ms"` // offset from answer
	EndMS   int64  `json:"end_ms"`
	// Interrupted marks an assistant turn the caller talked over (barge-in).
	Interrupted bool `json:"interrupted,omitempty"`
	// Backchannel marks caller words said over the assistant that did not take the floor
	// ("uh-huh"): the reply went on, and the model was not asked to answer them.
	Backchannel bool `json:"backchannel,omitempty"`
	// TextTrimmed marks a turn whose text the worker dropped (Text is "") so that the
	// final report of a very long call fits the control plane's size limit; the oldest
	// turns go first, and their speaker and timing stay.
	TextTrimmed bool `json:"text_trimmed,omitempty"`
	// Tool is the tool call of a turn of speaker "tool" (Text is ""); a trimmed one keeps
	// its name, error and duration but not its arguments and result.
	Tool *ToolUse `json:"tool,omitempty"`
	// Frames is how many frames of the caller's camera or screen went to the model (a
	// version's vision) with a caller turn, or by a call of the look tool; the frames
	// themselves are not kept.
	Frames int `json:"frames,omitempty"`
}

// Speakers of a Turn.
const (
	SpeakerAssistant = "assistant"
	SpeakerCaller    = "caller"
	// SpeakerTool marks a tool call in the transcript, in order among the spoken turns.
	SpeakerTool = "tool"
)

// Metrics are measured by the worker. The first two are offsets from answer; the
// conversation's figures are durations over the call's turns.
type Metrics struct {
	ConnectingScreenMS *int64 `json:"connecting_screen_ms,omitempty"`
	FirstGreetingMS    *int64 `json:"first_greeting_audio_ms,omitempty"`
	// Turns is how many caller turns were answered.
	Turns *int `json:"turns,omitempty"`
	// ResponseMS: end of the caller's speech to the first reply audio sent.
	ResponseMS *Percentiles `json:"response_ms,omitempty"`
	// BargeIns is how many replies the caller cut off.
	BargeIns *int `json:"barge_ins,omitempty"`
	// BargeInStopMS: caller speech onset to the assistant's audio stopping.
	BargeInStopMS *Percentiles `json:"barge_in_stop_ms,omitempty"`
	// STTFinalMS: end of the caller's turn to the final transcript.
	STTFinalMS *Percentiles `json:"stt_final_ms,omitempty"`
	// LLMFirstTokenMS: request sent to the model's first token.
	LLMFirstTokenMS *Percentiles `json:"llm_first_token_ms,omitempty"`
	// TTSFirstAudioMS: a sentence handed to the synthesizer to its first audio.
	TTSFirstAudioMS *Percentiles `json:"tts_first_audio_ms,omitempty"`
	// Errors counts model, speech and synthesis failures the call recovered from.
	Errors *ErrorCount `json:"errors,omitempty"`
	// ToolCalls counts the calls of the customer's tools, ToolErrors those that brought
	// no result (told to the model as errors); ToolMS is how long each took.
	ToolCalls  *int         `json:"tool_calls,omitempty"`
	ToolErrors *int         `json:"tool_errors,omitempty"`
	ToolMS     *Percentiles `json:"tool_ms,omitempty"`
	// Backchannels counts the caller's acknowledgements over the assistant that let
	// its reply go on; FalseInterruptions, the sounds without words over it after which
	// it resumed; MidSentenceWaits, the caller's pauses after unfinished words that
	// outlasted the fixed end-of-turn silence and did not end the turn;
	// MidSentenceCuts, the caller's turns that ended on unfinished words ("I'd like to
	// book a") and were answered: the pause outlasted even the longer wait.
	Backchannels       *int `json:"backchannels,omitempty"`
	FalseInterruptions *int `json:"false_interruptions,omitempty"`
	MidSentenceWaits   *int `json:"mid_sentence_waits,omitempty"`
	MidSentenceCuts    *int `json:"mid_sentence_cuts,omitempty"`
	// CallerSpeechMS and AssistantSpeechMS are how long each side spoke: the
	// transcript's turns of each, start to end, summed (an acknowledgement over the
	// assistant counts for the caller; an interrupted reply up to where it stopped).
	CallerSpeechMS    *int64 `json:"caller_speech_ms,omitempty"`
	AssistantSpeechMS *int64 `json:"assistant_speech_ms,omitempty"`
}

// Percentiles summarise a duration measured once per turn, in milliseconds.
type Percentiles struct {
	P50 int64 `json:"p50"`
	P95 int64 `json:"p95"`
}

// ErrorCount is how many errors a call recovered from and the kind of the last one.
type ErrorCount struct {
	Count    int    `json:"count"`
	LastKind string `json:"last_kind"` // llm_error | llm_timeout | stt_error | tts_error
}

// Report is one message from a worker about a call.
type Report struct {
	Kind      string    `json:"kind"`
	CallID    string    `json:"call_id"`
	SessionID string    `json:"session_id"`
	At        time.Time `json:"at"`
	// EndReason is set on ReportEnded: one of the End* values.
	EndReason  string  `json:"end_reason,omitempty"`
	Metrics    Metrics `json:"metrics"`
	Transcript []Turn  `json:"transcript,omitempty"`
	// Turn and Sequence are set on ReportTurn: the final turn, and its number among the
	// call's turn reports (1, 2, ...), which names its call.transcript event.
	Turn     *Turn `json:"turn,omitempty"`
	Sequence int   `json:"sequence,omitempty"`
	// Usage is set on ReportEnded: what the call used of the speech engines and the
	// model (usage.go).
	Usage *Usage `json:"usage,omitempty"`
	// Analysis is set on ReportAnalysis (final), and on ReportEnded as pending when the
	// version asks for one (analysis.go).
	Analysis *AnalysisResult `json:"analysis,omitempty"`
	// Recording is set on ReportRecording: the file the worker stored, or why there is
	// none.
	Recording *RecordingResult `json:"recording,omitempty"`
	// AMD is set on ReportAMD, and on ReportEnded of a call that ran the detection.
	AMD *AMDResult `json:"amd,omitempty"`
	// ResponseSamplesMS is set on ReportEnded: every reply's response time (the samples
	// of Metrics.ResponseMS), in milliseconds, in order. The control plane adds them to
	// the version's quality aggregate (shared/quality), whose percentiles span calls.
	ResponseSamplesMS []int64 `json:"response_samples_ms,omitempty"`
}

// RecordingResult is a recorded call's file as the worker stored it (shared/recordings),
// or the error that left it without one.
type RecordingResult struct {
	Key        string `json:"key,omitempty"`
	Format     string `json:"format,omitempty"` // ogg_opus
	DurationMS int64  `json:"duration_ms,omitempty"`
	SizeBytes  int64  `json:"size_bytes,omitempty"`
	// Error says why no file was stored (the store refused it, the call ended before
	// its answer); empty when Key is set.
	Error string `json:"error,omitempty"`
}
