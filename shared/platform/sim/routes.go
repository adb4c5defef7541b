package sim

import (
	"net/http"

	"github.com/bridgeline/bridgeline/shared/httpapi"
)

// Routes mounts the sim's HTTP API and its browser caller page, served by h (the
// Simulator's Handler), on the local stack's router: public routes (no API key) outside
// /v1, which only the local stack adds. The sim writes its own responses: its JSON, and
// the page's HTML and scripts.
func Routes(h http.Handler) []httpapi.Route {
	own := func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		h.ServeHTTP(w, r)
		return 0, nil, nil
	}
	var routes []httpapi.Route
	for _, rt := range []struct{ method, pattern string }{
		{http.MethodPost, "/sim/calls"}, {http.MethodGet, "/sim/calls"},
		{http.MethodGet, "/sim/calls/{id}"}, {http.MethodPost, "/sim/calls/{id}/hangup"},
		{http.MethodPost, "/sim/calls/{id}/joined"}, {http.MethodPost, "/sim/calls/{id}/say"},
		{http.MethodGet, "/sim/{$}"}, {http.MethodGet, "/sim/page/{file}"},
	} {
		routes = append(routes, httpapi.Route{Function: "sim", Method: rt.method, Pattern: rt.pattern, Public: true, Handler: own})
	}
	return routes
}
