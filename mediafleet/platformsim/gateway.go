package platformsim

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/simhook"
)

// GatewayHandler serves the sim as a platform gateway, a process of its own: the control
// routes the control plane drives it through (simhook's /gateway/ routes, signed with
// the sim's Secret; shared/platform/simclient is their client) beside the sim's own
// /sim/ API and page (Handler), which there require Config.APIToken (requireToken) and
// are not served without one.
func (s *Sim) GatewayHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+simhook.DialPath, func(w http.ResponseWriter, r *http.Request) {
		var b simhook.DialBody
		if !s.readControl(w, r, &b) {
			return
		}
		id, err := s.Dial(r.Context(), platform.DialRequest{CallID: b.CallID, From: b.From, To: b.To, Media: b.Media,
			Room: platform.Room{URL: b.Room.URL, Token: b.Room.Token}})
		if err != nil {
			writeError(w, http.StatusBadRequest, "parameter_invalid", err.Error())
			return
		}
		writeJSON(w, http.StatusOK, simhook.DialResult{PlatformCallID: id})
	})
	mux.HandleFunc("POST "+simhook.AnswerPath, func(w http.ResponseWriter, r *http.Request) {
		var b simhook.AnswerBody
		if s.readControl(w, r, &b) {
			s.writeControl(w, s.Answer(r.Context(), b.PlatformCallID, b.CallID, platform.Room{URL: b.Room.URL, Token: b.Room.Token}))
		}
	})
	mux.HandleFunc("POST "+simhook.RejectPath, func(w http.ResponseWriter, r *http.Request) {
		var b simhook.RejectBody
		if s.readControl(w, r, &b) {
			s.writeControl(w, s.RejectCall(r.Context(), b.PlatformCallID, b.CallID, b.Reason))
		}
	})
	mux.HandleFunc("POST "+simhook.HangupPath, func(w http.ResponseWriter, r *http.Request) {
		var b simhook.HangupBody
		if s.readControl(w, r, &b) {
			s.writeControl(w, s.Hangup(r.Context(), b.PlatformCallID))
		}
	})
	if s.cfg.APIToken != "" {
		mux.Handle("/sim/", requireToken(s.cfg.APIToken, s.Handler()))
	}
	return mux
}

// requireToken lets through requests that carry token: `Authorization: Bearer <token>`
// from programs, or HTTP Basic with the token as the password, which a browser asks for
// once and then sends with the page's own requests. Anything else is 401.
func requireToken(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := ""
		if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			got = strings.TrimSpace(v)
		} else if _, pw, ok := r.BasicAuth(); ok {
			got = pw
		}
		sum := sha256.Sum256([]byte(got))
		if got == "" || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="sim", charset="UTF-8"`)
			writeError(w, http.StatusUnauthorized, "api_key_invalid", "the sim API takes the gateway's SIM_API_TOKEN")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// readControl verifies a control request's signature and decodes its body into v; on
// failure it has answered.
func (s *Sim) readControl(w http.ResponseWriter, r *http.Request, v any) bool {
	// r.Pattern is "POST /gateway/...": the route's own path is what the control plane signed.
	_, path, _ := strings.Cut(r.Pattern, " ")
	body, err := simhook.VerifyBody(r, s.cfg.Secret, simhook.ToPlatform, path, time.Now())
	switch {
	case errors.Is(err, simhook.ErrMalformed):
		writeError(w, http.StatusBadRequest, "invalid_json", err.Error())
		return false
	case err != nil:
		writeError(w, http.StatusUnauthorized, "signature_invalid", err.Error())
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_json", err.Error())
		return false
	}
	return true
}

func (s *Sim) writeControl(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, platform.ErrUnknownCall):
		writeError(w, http.StatusNotFound, simhook.CodeUnknownCall, err.Error())
	case err != nil:
		writeError(w, http.StatusBadRequest, "parameter_invalid", err.Error())
	default:
		writeJSON(w, http.StatusOK, struct{}{})
	}
}
