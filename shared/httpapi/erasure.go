package httpapi

import (
	"net/http"

	"github.com/bridgeline/bridgeline/shared/erasure"
)

// CallErasure serves DELETE /v1/calls/{id}: a call's data deleted for good, its record
// kept for billing.
type CallErasure struct {
	Service erasure.Service
}

// Routes are the erasure route, one Lambda function. It deletes the recording's file
// too, so its function is wired like the recording functions (recwire).
func (h *CallErasure) Routes() []Route {
	return []Route{
		{Function: "calls-delete", Method: http.MethodDelete, Pattern: "/v1/calls/{id}", Keys: LiveForRealResource(), Handler: h.delete},
	}
}

func (h *CallErasure) delete(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	if err := DecodeEmpty(r); err != nil {
		return 0, nil, err
	}
	// A real call's data is live data, as its recording is: a test key does not delete it.
	if err := liveKeyForStoredCall(r, h.Service.Store.GetCall); err != nil {
		return 0, nil, err
	}
	c, err := h.Service.DeleteCall(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, PresentCall(c), nil
}
