package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/lktoken"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform/simhook"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/session"
)

// LiveKitWebhookPath is where livekit-server sends its webhooks.
const LiveKitWebhookPath = "/internal/livekit/webhook"

// Receivers serves the internal routes that other systems call: LiveKit's webhooks, the
// sim platform's notifications and the persona workers' reports. None takes an API key;
// each verifies its sender's signature and answers 401 when it does not hold.
type Receivers struct {
	Sessions *session.Service
	// RTC verifies LiveKit webhooks and, with the same fleet key, worker reports; nil
	// answers both 401 (a process given no LiveKit credentials).
	RTC LiveKitVerifier
	// SimSecret verifies the sim's notifications; empty leaves the sim route out.
	SimSecret string
	Now       func() time.Time
}

// LiveKitVerifier verifies what the media fleet sends: *lkapi.Client. An interface, so
// that the HTTP layer links no LiveKit package.
type LiveKitVerifier interface {
	ReceiveWebhook(r *http.Request) (rtc.WebhookEvent, error)
	KeyProvider() lktoken.Keys
}

// errNoVerifier answers signed requests to a process that cannot check them.
var errNoVerifier = errors.New("no LiveKit credentials to verify with")

// Routes are the internal receivers.
func (h *Receivers) Routes() []Route {
	routes := []Route{
		{Function: "livekit-webhook", Method: http.MethodPost, Pattern: LiveKitWebhookPath, Public: true,
			MaxBody: rtc.MaxWebhookBytes, Handler: h.livekit},
		// A long call's final report carries its whole transcript: persona's own 1 MiB
		// limit applies, not the customer API's 256 KiB.
		{Function: "persona-report", Method: http.MethodPost, Pattern: persona.ReportPath, Public: true,
			MaxBody: persona.MaxReportBytes, Handler: h.report},
	}
	if h.SimSecret != "" {
		routes = append(routes, Route{Function: "platform-sim", Method: http.MethodPost, Pattern: simhook.Path, Public: true,
			Handler: h.sim})
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
	n, err := simhook.Verify(r, h.SimSecret, h.now())
	switch {
	case errors.Is(err, simhook.ErrMalformed):
		return 0, nil, apierr.New(apierr.CodeInvalidJSON, "malformed sim notification")
	case err != nil:
		return 0, nil, apierr.New(apierr.CodeAPIKeyInvalid, "sim notification signature invalid")
	}
	if err := h.Sessions.HandleNotification(r.Context(), "sim", n); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, receivedJSON{true}, nil
}

func (h *Receivers) report(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if h.RTC == nil {
		return 0, nil, apierr.New(apierr.CodeAPIKeyInvalid, "report signature invalid: "+errNoVerifier.Error())
	}
	rep, err := persona.VerifyReport(r, h.RTC.KeyProvider())
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

func (h *Receivers) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}
