package webhook_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/events/webhook"
)

// A receiver verifies the raw body before decoding it, and answers 2xx only to requests
// that verify.
func ExampleVerify() {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // the endpoint's secret, from its creation
	handler := func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhook.Verify(secret, r.Header, body); err != nil {
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}

	// What Bridgeline sends: the envelope, signed now.
	body := `{"id":"evt_1","type":"call.ended","created_at":"2026-11-22T07:00:00.123Z","data":{}}`
	req := httptest.NewRequest(http.MethodPost, "/hooks", strings.NewReader(body))
	webhook.SetHeaders(req.Header, []string{secret}, "evt_1", time.Now(), []byte(body))
	rec := httptest.NewRecorder()
	handler(rec, req)
	fmt.Println(rec.Code)

	// The same request with the body changed on the way.
	req = httptest.NewRequest(http.MethodPost, "/hooks", strings.NewReader(strings.Replace(body, "ended", "answered", 1)))
	webhook.SetHeaders(req.Header, []string{secret}, "evt_1", time.Now(), []byte(body))
	rec = httptest.NewRecorder()
	handler(rec, req)
	fmt.Println(rec.Code)
	// Output:
	// 204
	// 400
}
