package simhook

// The other direction: the control plane driving a sim that runs as its own process (a
// platform gateway, cmd/platform-gateway) instead of inside the local stack. Each
// platform.Platform method is a JSON POST to the gateway, signed exactly as the
// notifications are (Sign, the same secret), and answered with JSON:
//
//	POST /gateway/dial    DialBody    -> 200 DialResult
//	POST /gateway/answer  AnswerBody  -> 200 {}
//	POST /gateway/reject  RejectBody  -> 200 {}
//	POST /gateway/hangup  HangupBody  -> 200 {}
//
// A call the sim does not have or that is no longer ringing is 404 with the error code
// CodeUnknownCall (platform.ErrUnknownCall); a bad or missing signature is 401; a body
// that does not decode is 400. Errors are {"error": {"code", "message"}}.

// Control routes, served by the gateway.
const (
	DialPath   = "/gateway/dial"
	AnswerPath = "/gateway/answer"
	RejectPath = "/gateway/reject"
	HangupPath = "/gateway/hangup"
)

// CodeUnknownCall is the error code of a 404 from a control route.
const CodeUnknownCall = "unknown_call"

// Room is where the gateway bridges a party (platform.Room on the wire).
type Room struct {
	URL   string `json:"url"`
	Token string `json:"token"`
}

// DialBody is platform.DialRequest on the wire.
type DialBody struct {
	CallID string `json:"call_id"`
	From   string `json:"from"`
	To     string `json:"to"`
	Media  string `json:"media"`
	Room   Room   `json:"room"`
}

// DialResult is the gateway's answer to a dial.
type DialResult struct {
	PlatformCallID string `json:"platform_call_id"`
}

// AnswerBody bridges a ringing inbound call into a room.
type AnswerBody struct {
	PlatformCallID string `json:"platform_call_id"`
	CallID         string `json:"call_id"`
	Room           Room   `json:"room"`
}

// RejectBody declines a ringing inbound call.
type RejectBody struct {
	PlatformCallID string `json:"platform_call_id"`
	CallID         string `json:"call_id,omitempty"` // Bridgeline's call, when one was recorded
	Reason         string `json:"reason,omitempty"`
}

// HangupBody ends a call.
type HangupBody struct {
	PlatformCallID string `json:"platform_call_id"`
}
