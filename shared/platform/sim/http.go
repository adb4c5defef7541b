package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/bridgeline/bridgeline/shared/platform"
)

// Handler serves the sim's HTTP API. Mount it at /sim/ on the local stack only:
//
//	POST /sim/calls                {"from", "to", "media"}  place an inbound call on the line `to` (201)
//	GET  /sim/calls                                          list calls, newest first
//	GET  /sim/calls/{id}                                     one call
//	POST /sim/calls/{id}/hangup                              the sim party hangs up
//
// Errors are {"error": {"code", "message"}} with 400 or 404.
func (s *Sim) Handler() http.Handler {
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
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_json", "body must be {\"from\", \"to\", \"media\"}: "+strings.TrimPrefix(err.Error(), "json: "))
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
	c, err := s.Place(PlaceRequest{From: body.From, To: body.To, Media: body.Media})
	if err != nil {
		writeError(w, http.StatusBadRequest, "parameter_invalid", err.Error())
		return
	}
	writeJSON(w, http.StatusCreated, c)
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
