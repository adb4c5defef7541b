package persona

import "encoding/json"

// The built-in tools the conversation offers the model itself, beside a version's own.
const (
	// EndCallTool hangs up: the assistant finishes what it is saying, then the call ends.
	EndCallTool = "end_call"
	// TransferCallTool is offered when the version lists transfer destinations: the
	// assistant finishes its handover sentence, then the call is transferred (argument
	// "destination", one of them).
	TransferCallTool = "transfer_call"
	// LookTool is offered on a version with vision: a fresh picture of what the caller
	// shows, which follows the tool's result as a user message.
	LookTool = "look"
)

// BuiltInTools are the built-in tools' names: a customer's tool may not take them.
var BuiltInTools = []string{EndCallTool, TransferCallTool, LookTool}

// CallSettings are a version's call settings as the worker runs them: the customer's
// tools the model may call (without their URLs: the control plane makes the requests),
// the caller's silence before the assistant asks whether they are still there, and the
// longest the call may last from answer.
type CallSettings struct {
	Tools []Tool `json:"tools,omitempty"`
	// IdleTimeoutSeconds: 0 means the default (30 s).
	IdleTimeoutSeconds int `json:"idle_timeout_seconds,omitempty"`
	// MaxDurationSeconds: 0 means no limit of the version's (the deployment's stays).
	MaxDurationSeconds int `json:"max_duration_seconds,omitempty"`
	// Analysis is asked of the model after the call; nil: none.
	Analysis *Analysis `json:"analysis,omitempty"`
	// NoiseSuppressionOff: the caller's audio reaches the VAD and the recogniser as it
	// came. Off by default, so a job without it suppresses noise.
	NoiseSuppressionOff bool `json:"noise_suppression_off,omitempty"`
	// Interruption is how the caller's speech over the assistant is taken; nil: the
	// default (acknowledgements pass, any other word cuts the reply).
	Interruption *Interruption `json:"interruption,omitempty"`
	// Vision is what of the caller's video the model sees (Vision* below); empty is off.
	Vision string `json:"vision,omitempty"`
}

// Vision modes of a version: which of the caller's video tracks the model sees, the
// latest frame with each caller turn and a fresh one when it calls the look tool.
const (
	VisionOff             = "off"
	VisionCamera          = "camera"
	VisionScreen          = "screen"
	VisionCameraAndScreen = "camera_and_screen"
)

// VisionModes are the vision modes, in the order the contract lists them.
var VisionModes = []string{VisionOff, VisionCamera, VisionScreen, VisionCameraAndScreen}

// VisionOrOff is a stored vision mode as the contract shows it: records written before
// the setting existed show nothing to the model.
func VisionOrOff(mode string) string {
	if mode == "" {
		return VisionOff
	}
	return mode
}

// VisionSources says which of the caller's video tracks a vision mode shows the model:
// the camera, the shared screen; neither for off or a mode it does not know.
func VisionSources(mode string) (camera, screen bool) {
	switch mode {
	case VisionCamera:
		return true, false
	case VisionScreen:
		return false, true
	case VisionCameraAndScreen:
		return true, true
	}
	return false, false
}

// Interruption modes.
const (
	// InterruptionAdaptive: a short acknowledgement over the assistant ("uh-huh",
	// "right") lets the reply go on; stop words, a question or MinWords other words
	// cut it; sound that turns out to hold no words lets it resume.
	InterruptionAdaptive = "adaptive"
	// InterruptionOff: any speech over the assistant that outlasts the confirmation
	// time, or has words, cuts the reply for good (the rule before backchannels).
	InterruptionOff = "off"
)

// Interruption tunes how the caller's speech over the assistant is taken.
type Interruption struct {
	// Mode is InterruptionAdaptive (also when empty) or InterruptionOff.
	Mode string `json:"mode,omitempty"`
	// MinWords is how many words other than acknowledgements cut the reply; 0 means 1.
	MinWords int `json:"min_words,omitempty"`
	// Acknowledgements are words or short phrases taken as acknowledgements beside the
	// language's own ("sure thing", "gotcha").
	Acknowledgements []string `json:"acknowledgements,omitempty"`
}

// Tool is a customer's tool as the model is offered it.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// TimeoutMS bounds the wait for the customer's answer.
	TimeoutMS int `json:"timeout_ms"`
}

// ToolPath is the control plane's internal route that runs a tool call: the worker posts
// a ToolRequest, signed like a report but under ToolSubject (SignToolRequest), and gets
// a ToolResponse. The control plane finds the tool in the call's version, signs the
// request to the customer's URL with the assistant's tool secret, and applies the egress
// rules of webhook deliveries; neither the URL nor the secret ever reaches a worker.
const ToolPath = "/internal/persona/tool"

// ToolSubject is the subject of every tool request token.
const ToolSubject = "bridgeline-persona-tool"

// ToolRequest is one call of a tool by the model.
type ToolRequest struct {
	CallID string `json:"call_id"`
	// ToolCallID is the model's id of the call, for the logs and the customer's request.
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
}

// ToolResponse is how a tool call went: Result (any JSON) or Error.
type ToolResponse struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *ToolError      `json:"error,omitempty"`
	// StatusCode is the customer's HTTP status (0 when none came).
	StatusCode int   `json:"status_code,omitempty"`
	DurationMS int64 `json:"duration_ms"`
}

// ToolError is why a tool call has no result; the model is told it.
type ToolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Codes of a ToolError.
const (
	ToolErrTimeout      = "timeout"             // no answer within the tool's timeout_ms
	ToolErrStatus       = "http_status"         // the customer answered a non-2xx
	ToolErrUnreachable  = "unreachable"         // no connection, or it broke
	ToolErrBlocked      = "blocked_destination" // the URL resolved to an internal address
	ToolErrTooLarge     = "response_too_large"  // the answer was over MaxToolResponseBytes
	ToolErrInvalid      = "invalid_response"    // the answer was not JSON
	ToolErrUnknown      = "unknown_tool"        // the version has no such tool
	ToolErrInterrupted  = "interrupted"         // the caller talked over the wait
	ToolErrUnavailable  = "unavailable"         // the control plane could not be asked
	ToolErrNotSigned    = "no_tool_secret"      // the assistant has no tool secret
	ToolErrCallNotLive  = "call_not_live"       // the call ended meanwhile
	ToolErrBadArguments = "invalid_arguments"   // the model's arguments were not a JSON object
)

// MaxToolResponseBytes bounds the customer's answer to a tool call: a longer one is
// ToolErrTooLarge. A spoken answer needs little; this keeps the model's context and the
// call's transcript small.
const MaxToolResponseBytes = 16 << 10

// ToolUse is a tool call as the transcript records it (a Turn with speaker "tool"): its
// name, the arguments the model gave, and the result or the error, with how long it took.
type ToolUse struct {
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *ToolError      `json:"error,omitempty"`
	DurationMS int64           `json:"duration_ms"`
}
