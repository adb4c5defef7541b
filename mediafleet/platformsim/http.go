package platformsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/bridgeline/bridgeline/shared/platform"
)

// Handler serves the sim's HTTP API. Mount it at /sim/ on the local stack only:
//
//	POST /sim/calls                {"from", "to", "media", "party"}  place an inbound call on the line `to` (201)
//	GET  /sim/calls                                          list calls, newest first
//	GET  /sim/calls/{id}                                     one call
//	POST /sim/calls/{id}/say       {"text"}                  the sim party says text (202; say.go)
//	POST /sim/calls/{id}/hangup                              the sim party hangs up
//	POST /sim/calls/{id}/joined                              a browser party is in the room
//	GET  /sim/                                               the browser caller page (page.go)
//	GET  /sim/page/{file}                                    its script, style and the LiveKit client SDK
//
// party is "bot" (the default: a callerbot joins) or "browser" (the page that placed the
// call joins; see PartyBrowser).
//
// Errors are {"error": {"code", "message"}} with 400, 404, 409 (say: the party is not in
// the room), 415 (a body that is not application/json) or 500.
func (s *Sim) Handler() http.Handler {
	return jsonBodiesOnly(s.handler())
}

// jsonBodiesOnly refuses, with 415, a request whose body is not declared
// application/json. The sim's API takes no credential on the local stack, so without
// this any web page the developer visits could place or steer calls with a form post
// (text/plain or form encodings need no CORS preflight; application/json does, and the
// sim answers none). Bodiless requests (GET, hangup, joined) pass.
func jsonBodiesOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
			mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || mt != "application/json" {
				writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "request bodies must be application/json")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Sim) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /sim/calls", s.servePlace)
	mux.HandleFunc("GET /sim/calls", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": s.List()})
	})
	mux.HandleFunc("GET /sim/calls/{id}", func(w http.ResponseWriter, r *http.Request) {
		c, err := s.Get(r.PathValue("id"))
		if err != nil {
			writeError(w, http.StatusNotFound, "resource_not_found", fmt.Sprintf("no such sim call: %q", r.PathValue("id")))
			return
		}
		writeJSON(w, http.StatusOK, c)
	})
	mux.HandleFunc("POST /sim/calls/{id}/hangup", func(w http.ResponseWriter, r *http.Request) {
		c, err := s.RemoteHangup(r.PathValue("id"))
		if err != nil {
			writeError(w, http.StatusNotFound, "resource_not_found", fmt.Sprintf("no such sim call: %q", r.PathValue("id")))
			return
		}
		writeJSON(w, http.StatusOK, c)
	})
	mux.HandleFunc("POST /sim/calls/{id}/say", s.serveSay)
	mux.HandleFunc("POST /sim/calls/{id}/joined", func(w http.ResponseWriter, r *http.Request) {
		c, err := s.Joined(r.PathValue("id"))
		if err != nil {
			writeError(w, http.StatusNotFound, "resource_not_found", fmt.Sprintf("no live browser call: %q", r.PathValue("id")))
			return
		}
		writeJSON(w, http.StatusOK, c)
	})
	s.pageRoutes(mux)
	mux.HandleFunc("/sim/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "route_not_found", fmt.Sprintf("no route %s %s", r.Method, r.URL.Path))
	})
	return mux
}

func (s *Sim) servePlace(w http.ResponseWriter, r *http.Request) {
	var body struct {
		From  string `json:"from"`
		To    string `json:"to"`
		Media string `json:"media"`
		Party string `json:"party"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_json", "body must be {\"from\", \"to\", \"media\", \"party\"}: "+strings.TrimPrefix(err.Error(), "json: "))
		return
	}
	if body.To == "" {
		writeError(w, http.StatusBadRequest, "parameter_missing", "to (the line's handle) is required")
		return
	}
	if body.From == "" {
		body.From = "+15550199999"
	}
	if body.Media != "" && body.Media != platform.MediaVideo && body.Media != platform.MediaAudio {
		writeError(w, http.StatusBadRequest, "parameter_invalid", "media must be video or audio")
		return
	}
	if body.Party != "" && body.Party != "bot" && body.Party != PartyBrowser {
		writeError(w, http.StatusBadRequest, "parameter_invalid", "party must be bot or browser")
		return
	}
	c, err := s.Place(PlaceRequest{From: body.From, To: body.To, Media: body.Media,
		Party: PartyOptions{Browser: body.Party == PartyBrowser}})
	if err != nil {
		writeError(w, http.StatusBadRequest, "parameter_invalid", err.Error())
		return
	}
	writeJSON(w, http.StatusCreated, c)
}

func (s *Sim) serveSay(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Text string `json:"text"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_json", "body must be {\"text\"}: "+strings.TrimPrefix(err.Error(), "json: "))
		return
	}
	id := r.PathValue("id")
	u, err := s.Say(r.Context(), id, body.Text)
	switch {
	case err == nil:
		writeJSON(w, http.StatusAccepted, u)
	case errors.Is(err, ErrText) && strings.TrimSpace(body.Text) == "":
		writeError(w, http.StatusBadRequest, "parameter_missing", "text is required")
	case errors.Is(err, ErrText):
		writeError(w, http.StatusBadRequest, "parameter_invalid", fmt.Sprintf("text is longer than %d characters", MaxSayRunes))
	case errors.Is(err, platform.ErrUnknownCall):
		writeError(w, http.StatusNotFound, "resource_not_found", fmt.Sprintf("no such sim call: %q", id))
	case errors.Is(err, ErrNotInRoom):
		writeError(w, http.StatusConflict, "party_not_in_room", "the call's party is not a bot in the room: the call is ringing or over, or its party is a browser page")
	default:
		s.log.Error("say", "sim_call_id", id, "err", err)
		writeError(w, http.StatusInternalServerError, "internal_error", err.Error())
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}
