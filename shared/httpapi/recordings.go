package httpapi

import (
	"net/http"

	"github.com/bridgeline/bridgeline/shared/call"
)

// Recordings serves GET and DELETE /v1/calls/{id}/recording: a recorded call's download
// URL, and its deletion for good.
type Recordings struct {
	Service call.Recordings
}

// Routes are the recording routes, one Lambda function each.
func (h *Recordings) Routes() []Route {
	return []Route{
		{Function: "calls-recording-get", Method: http.MethodGet, Pattern: "/v1/calls/{id}/recording", Keys: TestKeys(), Handler: h.get},
		{Function: "calls-recording-delete", Method: http.MethodDelete, Pattern: "/v1/calls/{id}/recording", Keys: LiveForRealResource(), Handler: h.delete},
	}
}

// RecordingJSON is the answer of GET /v1/calls/{id}/recording.
type RecordingJSON struct {
	Object string `json:"object"`
	CallID string `json:"call_id"`
	// URL downloads the file (no API key: the URL's signature is the credential) until
	// ExpiresAt, at most 15 minutes from the answer.
	URL        string `json:"url"`
	ExpiresAt  Time   `json:"expires_at"`
	DurationMS int64  `json:"duration_ms"`
	SizeBytes  int64  `json:"size_bytes"`
	Format     string `json:"format"`
}

func (h *Recordings) get(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	d, err := h.Service.URL(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	// The URL is a credential for a quarter of an hour: no cache keeps it.
	w.Header().Set("Cache-Control", "no-store")
	return http.StatusOK, RecordingJSON{Object: "call_recording", CallID: d.CallID, URL: d.URL, ExpiresAt: Time(d.ExpiresAt),
		DurationMS: d.DurationMS, SizeBytes: d.SizeBytes, Format: d.Format}, nil
}

func (h *Recordings) delete(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	if err := DecodeEmpty(r); err != nil {
		return 0, nil, err
	}
	// A real call's recording is live data: a test key does not delete it.
	if err := liveKeyForStoredCall(r, h.Service.Store.GetCall); err != nil {
		return 0, nil, err
	}
	if err := h.Service.Delete(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
