package httpapi

import (
	"net/http"
	"time"

	"github.com/bridgeline/bridgeline/shared/usage"
)

// Usage serves GET /v1/usage: the account's usage per UTC day, from the aggregate kept
// as calls end (shared/usage).
type Usage struct {
	Reader usage.Reader
}

// Routes is the usage route.
func (h *Usage) Routes() []Route {
	return []Route{{Function: "usage-get", Method: http.MethodGet, Pattern: "/v1/usage", Keys: TestKeys(), Handler: h.get}}
}

// UsageJSON is the answer of GET /v1/usage.
type UsageJSON struct {
	Object string `json:"object"`
	// From and To are the range's first and last UTC dates.
	From string `json:"from"`
	To   string `json:"to"`
	// Data is every day of the range, oldest first.
	Data  []usage.Day  `json:"data"`
	Total usage.Counts `json:"total"`
}

func (h *Usage) get(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r, CreatedGTE, CreatedLTE); err != nil {
		return 0, nil, err
	}
	var bounds [2]*time.Time
	for i, name := range []string{CreatedGTE, CreatedLTE} {
		v, ok := r.URL.Query()[name]
		if !ok {
			continue
		}
		t, err := parseCreated(v[0])
		if err != nil {
			return 0, nil, invalidCreated(name)
		}
		bounds[i] = &t
	}
	rep, err := h.Reader.Get(r.Context(), AccountFrom(r.Context()).ID, bounds[0], bounds[1])
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, UsageJSON{Object: "usage", From: rep.From, To: rep.To, Data: rep.Days, Total: rep.Total}, nil
}
