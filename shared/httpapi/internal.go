package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/avatars"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/platform/simhook"
	"github.com/bridgeline/bridgeline/shared/platform/sip"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/toolcall"
)

// LiveKitWebhookPath is where livekit-server sends its webhooks.
const LiveKitWebhookPath = "/internal/livekit/webhook"

// Receivers serves the internal routes that other systems call: LiveKit's webhooks, the
// sim platform's notifications and the persona workers' reports. None takes an API key;
// each verifies its sender's signature, with a key of its own, and answers 401 when it
// does not hold.
type Receivers struct {
	Sessions *session.Service
	// RTC verifies LiveKit webhooks; nil answers them 401 (a process given no LiveKit
	// credentials).
	RTC LiveKitVerifier
	// ReportSecret verifies worker reports (PERSONA_REPORT_SECRET): a key of their own,
	// not the LiveKit API secret that livekit-server and every worker also hold. Empty
	// answers every report 401.
	ReportSecret string
	// Tools runs the workers' tool calls (persona.ToolPath), verified with ReportSecret
	// like their reports; nil leaves the route out.
	Tools *toolcall.Service
	// AgentTokens mints the persona workers' registration tokens (persona.AgentTokenPath,
	// asked for signed with ReportSecret): the agent grant only, valid minutes, so that
	// no worker holds the LiveKit API secret. Nil answers 500 (a process given no
	// LiveKit credentials).
	AgentTokens func(now time.Time) (persona.AgentToken, error)
	// Avatars hands the workers the character sheets of the accounts' own avatars
	// (persona.AvatarPath, asked for signed with ReportSecret); nil leaves the route out.
	Avatars *avatars.Service
	// Logos hands the workers the accounts' logos at the same route (persona.AvatarRequest's
	// Logo), for the connecting screen; nil answers a request for one 500.
	Logos LogoReader
	// SimSecret verifies the sim's notifications; empty leaves the sim route out.
	SimSecret string
	// SIPSecret verifies the SIP gateway's notifications (signed as the sim's are, for
	// their own route); empty leaves the SIP route out.
	SIPSecret string
	// Replays keeps the ids of accepted notifications, so that a replayed one is refused
	// (409); nil keeps them in this process's memory.
	Replays simhook.Replays
	Now     func() time.Time
}

// LiveKitVerifier verifies livekit-server's webhooks: *lkhttp.Client (or the lkapi one
// that wraps it locally). An interface, so
// that the HTTP layer links no LiveKit package.
type LiveKitVerifier interface {
	ReceiveWebhook(r *http.Request) (rtc.WebhookEvent, error)
}

// LogoReader reads an account's logo (the store does): apierr.ErrNotFound when it has
// none.
type LogoReader interface {
	GetLogo(ctx context.Context, accountID string) (account.Logo, error)
}

// errNoVerifier answers signed requests to a process that cannot check them.
var errNoVerifier = errors.New("no LiveKit credentials to verify with")

// Routes are the internal receivers.
func (h *Receivers) Routes() []Route {
	if h.Replays == nil {
		h.Replays = &simhook.MemoryReplays{}
	}
	routes := []Route{
		{Function: "livekit-webhook", Method: http.MethodPost, Pattern: LiveKitWebhookPath, Public: true,
			MaxBody: rtc.MaxWebhookBytes, Handler: h.livekit},
		// A long call's final report carries its whole transcript: persona's own 1 MiB
		// limit applies, not the customer API's 256 KiB.
		{Function: "persona-report", Method: http.MethodPost, Pattern: persona.ReportPath, Public: true,
			MaxBody: persona.MaxReportBytes, Handler: h.report},
		// The assistant's transfer_call tool: the worker asks, signed as its reports are.
		{Function: "persona-transfer", Method: http.MethodPost, Pattern: persona.TransferPath, Public: true,
			Handler: h.transfer},
		// A worker's LiveKit registration token, instead of the LiveKit secret.
		{Function: "persona-agent-token", Method: http.MethodPost, Pattern: persona.AgentTokenPath, Public: true,
			Handler: h.agentToken},
	}
	if h.Tools != nil {
		// The answer waits for the customer's tool (at most 20 s, its timeout_ms).
		routes = append(routes, Route{Function: "persona-tool", Method: http.MethodPost, Pattern: persona.ToolPath, Public: true,
			MaxBody: persona.MaxToolRequestBytes, Handler: h.tool})
	}
	if h.Avatars != nil {
		routes = append(routes, Route{Function: "persona-avatar", Method: http.MethodPost, Pattern: persona.AvatarPath, Public: true,
			Handler: h.avatar})
	}
	if h.SimSecret != "" {
		routes = append(routes, Route{Function: "platform-sim", Method: http.MethodPost, Pattern: simhook.Path, Public: true,
			Handler: h.sim})
	}
	if h.SIPSecret != "" {
		routes = append(routes, Route{Function: "platform-sip", Method: http.MethodPost, Pattern: sip.Path, Public: true,
			Handler: h.sip})
	}
	return routes
}

// receivedJSON acknowledges a receiver delivery.
type receivedJSON struct {
	Received bool `json:"received"`
}

func (h *Receivers) livekit(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if h.RTC == nil {
		return 0, nil, apierr.New(apierr.CodeAPIKeyInvalid, "LiveKit webhook signature invalid: "+errNoVerifier.Error())
	}
	ev, err := h.RTC.ReceiveWebhook(r)
	switch {
	case errors.Is(err, rtc.ErrWebhookMalformed):
		return 0, nil, apierr.New(apierr.CodeInvalidJSON, "malformed LiveKit webhook")
	case err != nil:
		return 0, nil, apierr.New(apierr.CodeAPIKeyInvalid, "LiveKit webhook signature invalid")
	}
	if err := h.Sessions.HandleLiveKit(r.Context(), ev); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, receivedJSON{true}, nil
}

func (h *Receivers) sim(w http.ResponseWriter, r *http.Request) (int, any, error) {
	body, err := simhook.VerifyBody(r, h.SimSecret, simhook.ToControlPlane, simhook.Path, h.now())
	n, err := notification(body, err, "sim")
	if err != nil {
		return 0, nil, err
	}
	if err := h.notify(r.Context(), sim.Name, n); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, receivedJSON{true}, nil
}

// sip takes the SIP gateway's notifications. An inbound one is answered with what the
// control plane decided about the call (sip.InboundReply): the gateway holds the call's
// room join until then, and joins it into the session's room or refuses it.
func (h *Receivers) sip(w http.ResponseWriter, r *http.Request) (int, any, error) {
	body, err := simhook.VerifyBody(r, h.SIPSecret, simhook.ToControlPlane, sip.Path, h.now())
	n, err := notification(body, err, "SIP")
	if err != nil {
		return 0, nil, err
	}
	if n.Event != platform.EventInbound {
		if err := h.notify(r.Context(), sip.Name, n); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, receivedJSON{true}, nil
	}
	ctx, reply := sip.WithReply(r.Context(), n.PlatformCallID)
	if err := h.notify(ctx, sip.Name, n); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, reply.Result(), nil
}

// notification decodes a verified platform notification (VerifyBody's body and error).
func notification(body []byte, err error, from string) (platform.Notification, error) {
	var n platform.Notification
	switch {
	case errors.Is(err, simhook.ErrMalformed):
		return n, apierr.New(apierr.CodeInvalidJSON, "malformed "+from+" notification")
	case err != nil:
		return n, apierr.New(apierr.CodeAPIKeyInvalid, from+" notification signature invalid")
	}
	if json.Unmarshal(body, &n) != nil || n.ID == "" || n.Event == "" || n.PlatformCallID == "" {
		return n, apierr.New(apierr.CodeInvalidJSON, "malformed "+from+" notification: id, event and platform_call_id are required")
	}
	return n, nil
}

// notify hands a verified notification to the session service once. The id is claimed
// before the notification acts and released if it fails (a panic too), so the sender's
// redelivery of a notification that failed is handled, while a copy of one that was
// handled (a replay within the signature's tolerance) is refused. One another delivery
// holds is handled anyway: handling is idempotent, and the holder may have crashed
// without releasing it.
func (h *Receivers) notify(ctx context.Context, platformName string, n platform.Notification) error {
	claim, err := h.Replays.Claim(ctx, n.ID, h.now())
	if err != nil {
		return err
	}
	if claim == simhook.Handled {
		return apierr.New(apierr.CodeConflict, "notification "+n.ID+" was already received")
	}
	handled := false
	defer func() {
		if claim == simhook.Claimed && !handled {
			h.Replays.Release(context.WithoutCancel(ctx), n.ID)
		}
	}()
	if err := h.Sessions.HandleNotification(ctx, platformName, n); err != nil {
		return err
	}
	handled = true
	return h.Replays.Done(context.WithoutCancel(ctx), n.ID)
}

func (h *Receivers) report(w http.ResponseWriter, r *http.Request) (int, any, error) {
	rep, err := persona.VerifyReport(r, h.ReportSecret)
	switch {
	case errors.Is(err, persona.ErrReportTooLarge):
		return 0, nil, apierr.New(apierr.CodeBodyTooLarge, "report too large")
	case errors.Is(err, persona.ErrReportMalformed):
		return 0, nil, apierr.New(apierr.CodeInvalidJSON, "malformed report")
	case err != nil:
		return 0, nil, apierr.New(apierr.CodeAPIKeyInvalid, "report signature invalid")
	}
	if err := h.Sessions.HandleReport(r.Context(), rep); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, receivedJSON{true}, nil
}

// transfer hands a worker's call to one of its assistant's transfer destinations: 200
// with {"transferred": true} once the destination answered, 202 with {"pending": true}
// where the transfer was queued (its failure comes to the worker in the room,
// persona.TransferNotice), else the transfer's error (transfer_failed: the call goes on,
// and the worker says so to the caller).
func (h *Receivers) transfer(w http.ResponseWriter, r *http.Request) (int, any, error) {
	req, err := persona.VerifyTransfer(r, h.ReportSecret)
	switch {
	case errors.Is(err, persona.ErrReportTooLarge):
		return 0, nil, apierr.New(apierr.CodeBodyTooLarge, "transfer request too large")
	case errors.Is(err, persona.ErrReportMalformed):
		return 0, nil, apierr.New(apierr.CodeInvalidJSON, "malformed transfer request")
	case err != nil:
		return 0, nil, apierr.New(apierr.CodeAPIKeyInvalid, "transfer request signature invalid")
	}
	pending, err := h.Sessions.AssistantTransfer(r.Context(), req.CallID, req.To)
	if err != nil {
		return 0, nil, err
	}
	if pending {
		return http.StatusAccepted, map[string]bool{"pending": true}, nil
	}
	return http.StatusOK, map[string]bool{"transferred": true}, nil
}

// tool runs one of the assistant's tools for its worker (persona.ToolPath).
func (h *Receivers) tool(w http.ResponseWriter, r *http.Request) (int, any, error) {
	req, err := persona.VerifyToolRequest(r, h.ReportSecret)
	switch {
	case errors.Is(err, persona.ErrReportTooLarge):
		return 0, nil, apierr.New(apierr.CodeBodyTooLarge, "tool request too large")
	case errors.Is(err, persona.ErrReportMalformed):
		return 0, nil, apierr.New(apierr.CodeInvalidJSON, "malformed tool request")
	case err != nil:
		return 0, nil, apierr.New(apierr.CodeAPIKeyInvalid, "tool request signature invalid")
	}
	res, err := h.Tools.Call(r.Context(), req)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, res, nil
}

func (h *Receivers) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// agentToken hands a persona worker its LiveKit registration token (persona.AgentToken):
// the request is signed with the report secret under persona.AgentTokenSubject.
// avatar answers a worker's request for an own avatar's sheet, the parts with GET URLs
// that live avatars.URLTTL (the avatar must be the account's), and for the account's
// logo, which rides in the answer: it is kept in the store, not in the bucket. A call
// with a built-in avatar asks for the logo alone; an account with no logo gets none.
func (h *Receivers) avatar(w http.ResponseWriter, r *http.Request) (int, any, error) {
	req, err := persona.VerifyAvatarRequest(r, h.ReportSecret)
	switch {
	case errors.Is(err, persona.ErrReportTooLarge):
		return 0, nil, apierr.New(apierr.CodeBodyTooLarge, "avatar request too large")
	case errors.Is(err, persona.ErrReportMalformed):
		return 0, nil, apierr.New(apierr.CodeInvalidJSON, "malformed avatar request")
	case err != nil:
		return 0, nil, apierr.New(apierr.CodeAPIKeyInvalid, "avatar request signature invalid")
	}
	out := persona.AvatarSheet{Parts: []persona.AvatarSheetPart{}, ExpiresAt: h.now().Add(avatars.URLTTL)}
	if req.AvatarID != "" {
		a, err := h.Avatars.Get(r.Context(), req.AccountID, req.AvatarID)
		if err != nil {
			return 0, nil, err
		}
		urls, exp, err := h.Avatars.PreviewURLs(r.Context(), a)
		if err != nil {
			return 0, nil, err
		}
		out.ID, out.ExpiresAt = a.ID, exp
		for _, p := range a.Parts {
			out.Parts = append(out.Parts, persona.AvatarSheetPart{Name: p.Name, Format: p.Format, Width: p.Width, Height: p.Height,
				X: p.Anchor.X, Y: p.Anchor.Y, URL: urls[p.Name]})
		}
	}
	if req.Logo {
		if h.Logos == nil {
			return 0, nil, apierr.New(apierr.CodeInternal, "no account store to read logos from")
		}
		l, err := h.Logos.GetLogo(r.Context(), req.AccountID)
		switch {
		case errors.Is(err, apierr.ErrNotFound):
			// No logo (removed since the call was dispatched): the screen shows none.
		case err != nil:
			return 0, nil, err
		default:
			out.Logo = &persona.BrandLogo{ContentType: l.ContentType, SHA256: l.SHA256, Data: l.Data}
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	return http.StatusOK, out, nil
}

func (h *Receivers) agentToken(w http.ResponseWriter, r *http.Request) (int, any, error) {
	err := persona.VerifyAgentTokenRequest(r, h.ReportSecret)
	switch {
	case errors.Is(err, persona.ErrReportTooLarge):
		return 0, nil, apierr.New(apierr.CodeBodyTooLarge, "agent token request too large")
	case errors.Is(err, persona.ErrReportMalformed):
		return 0, nil, apierr.New(apierr.CodeInvalidJSON, "malformed agent token request")
	case err != nil:
		return 0, nil, apierr.New(apierr.CodeAPIKeyInvalid, "agent token request signature invalid")
	}
	if h.AgentTokens == nil {
		return 0, nil, apierr.New(apierr.CodeInternal, "no LiveKit credentials to mint agent tokens with")
	}
	tok, err := h.AgentTokens(h.now())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, tok, nil
}
