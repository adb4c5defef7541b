package bridgeline

// The hand-written layer over the generated client (client.gen.go): an API-key client
// whose POSTs carry an Idempotency-Key and are retried with the same key and bytes, typed
// errors, and auto-pagination. Everything else is the generated code, regenerated from
// openapi.yaml by scripts/check-sdk.sh.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Options tune New. The zero value is the defaults.
type Options struct {
	// HTTPClient sends the requests; default a client with a 30 s timeout.
	HTTPClient *http.Client
	// MaxRetries is how many times a request is retried after a network error, a 409
	// idempotency_key_in_use, a 429 or a 5xx; default 3, negative for none.
	MaxRetries int
	// Backoff is the wait before the first retry, doubled each time (a 429's Retry-After
	// wins when longer); default 500 ms.
	Backoff time.Duration
}

// New is the generated client for the API at baseURL (e.g. http://127.0.0.1:8080),
// authenticated with apiKey (sk_test_... or sk_live_...), retrying as Options say.
func New(baseURL, apiKey string, o Options) (*ClientWithResponses, error) {
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = 3
	}
	if o.Backoff == 0 {
		o.Backoff = 500 * time.Millisecond
	}
	return NewClientWithResponses(baseURL,
		WithHTTPClient(&retrier{http: o.HTTPClient, max: max(o.MaxRetries, 0), backoff: o.Backoff}),
		WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+apiKey)
			return nil
		}))
}

// retrier sends a request and retries it when that is safe: a POST always carries an
// Idempotency-Key (a fresh one unless the caller set it), so a retry with the same key
// and bytes is answered once by the server, never applied twice.
type retrier struct {
	http    *http.Client
	max     int
	backoff time.Duration
}

func (r *retrier) Do(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read request body: %w", err)
		}
		body = b
	}
	if req.Method == http.MethodPost && req.Header.Get("Idempotency-Key") == "" {
		req.Header.Set("Idempotency-Key", newKey())
	}
	wait := r.backoff
	for attempt := 0; ; attempt++ {
		try := req.Clone(req.Context())
		if body != nil {
			try.Body = io.NopCloser(bytes.NewReader(body))
			try.ContentLength = int64(len(body))
		}
		resp, err := r.http.Do(try)
		retry, after := retryable(resp, err)
		if !retry || attempt >= r.max || (req.Method != http.MethodPost && req.Method != http.MethodGet && err == nil && resp.StatusCode >= 500) {
			return resp, err
		}
		if resp != nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		d := max(wait, after)
		wait *= 2
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(d):
		}
	}
}

// retryable says whether an answer (or its failure) is worth another try, and how long
// the server asked to wait.
func retryable(resp *http.Response, err error) (bool, time.Duration) {
	if err != nil {
		return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded), 0
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		s, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return true, time.Duration(s) * time.Second
	case resp.StatusCode == http.StatusConflict:
		// Only "the first request with this key is still running" is worth waiting for.
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(b))
		var e APIError
		return json.Unmarshal(b, &e) == nil && e.Err.Code == "idempotency_key_in_use", 0
	case resp.StatusCode >= 500:
		return true, 0
	}
	return false, 0
}

func newKey() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// APIError is any error answer of the API: every status has this shape.
type APIError struct {
	Status int `json:"-"`
	Err    struct {
		Type      string `json:"type"`
		Code      string `json:"code"`
		Message   string `json:"message"`
		Param     string `json:"param,omitempty"`
		RequestID string `json:"request_id"`
	} `json:"error"`
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("bridgeline: %d %s: %s", e.Status, e.Err.Code, e.Err.Message)
	if e.Err.Param != "" {
		s += " (" + e.Err.Param + ")"
	}
	return s + " [" + e.Err.RequestID + "]"
}

// Check is nil for a 2xx answer and an *APIError for any other, so that a caller writes
//
//	r, err := c.GetAssistantWithResponse(ctx, id)
//	if err == nil { err = bridgeline.Check(r.HTTPResponse, r.Body) }
func Check(resp *http.Response, body []byte) error {
	if resp == nil {
		return errors.New("bridgeline: no response")
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	e := &APIError{Status: resp.StatusCode}
	if err := json.Unmarshal(body, e); err != nil || e.Err.Code == "" {
		e.Err.Code, e.Err.Message = "unexpected_response", fmt.Sprintf("HTTP %d: %.200s", resp.StatusCode, body)
	}
	return e
}

// Each calls fn with every item of a list, page after page, and stops at the first
// error of page or fn, which it returns: page fetches the page after the item whose id is
// startingAfter ("" for the first) and says whether more follow. On Go 1.23 and later,
// All offers the same as an iterator.
func Each[T any](ctx context.Context, page func(ctx context.Context, startingAfter string) (items []T, hasMore bool, err error), id func(T) string, fn func(T) error) error {
	after := ""
	for {
		items, more, err := page(ctx, after)
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := fn(it); err != nil {
				return err
			}
		}
		if !more || len(items) == 0 {
			return nil
		}
		after = id(items[len(items)-1])
	}
}
