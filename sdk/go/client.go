package bridgeline

// The client: an API key, retries that are safe because every POST carries an
// Idempotency-Key, and typed errors. The typed methods are in operations.go; everything
// generated from openapi.yaml is in client.gen.go.

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
	"net/url"
	"strconv"
	"strings"
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

// Client calls the Bridgeline API for the account its API key belongs to. Its methods
// (one for each operation of openapi.yaml, named after the operation) answer the object
// the API returns, or an error: an *APIError when the API answered with one, another error
// when no answer came (after the retries Options allow). It is safe for concurrent use.
type Client struct {
	// Generated is the client oapi-codegen generates from openapi.yaml, with the same API
	// key and retries: each XWithResponse method answers the whole response (status,
	// headers, body, and the body decoded for each documented status). For what the typed
	// methods do not show, such as a response header; Check turns its answer into an error.
	Generated *ClientWithResponses
}

// New is a client of the API at baseURL (e.g. http://127.0.0.1:8080 for the local stack)
// with apiKey (sk_test_... or sk_live_...). The API key is a secret: use it only on your
// server.
func New(baseURL, apiKey string, o Options) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("bridgeline: the API URL %q is not an http(s) URL such as http://127.0.0.1:8080", baseURL)
	}
	if strings.TrimSpace(apiKey) == "" {
		return nil, errors.New("bridgeline: no API key (sk_test_... or sk_live_...)")
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = 3
	}
	if o.Backoff == 0 {
		o.Backoff = 500 * time.Millisecond
	}
	g, err := NewClientWithResponses(strings.TrimRight(baseURL, "/"),
		WithHTTPClient(&retrier{http: o.HTTPClient, max: max(o.MaxRetries, 0), backoff: o.Backoff}),
		WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+apiKey)
			return nil
		}))
	if err != nil {
		return nil, err
	}
	return &Client{Generated: g}, nil
}

// WithIdempotencyKey sends a POST with your Idempotency-Key instead of a fresh one, so
// that repeating the call (after a crash, say) returns the first answer instead of
// acting twice: derive it from your own record, e.g. "order-6735-call". Every method
// takes it:
//
//	s, err := c.CreateSession(ctx, body, bridgeline.WithIdempotencyKey("order-6735-call"))
func WithIdempotencyKey(key string) RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set("Idempotency-Key", key)
		return nil
	}
}

// Ptr returns a pointer to v, for the optional fields of requests:
// bridgeline.AssistantCreate{Name: "Ada", Greeting: bridgeline.Ptr("Hello!")}.
func Ptr[T any](v T) *T { return &v }

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
		return json.Unmarshal(b, &e) == nil && e.Code == "idempotency_key_in_use", 0
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

// APIError is an error answer of the API; every status has this shape. Branch on Code,
// the stable reason (openapi.yaml's ErrorCode lists them), never on Message:
//
//	var e *bridgeline.APIError
//	if errors.As(err, &e) && e.Code == "resource_not_found" { ... }
type APIError struct {
	// Status is the HTTP status, e.g. 404.
	Status int
	// Type is the error's family: invalid_request_error, authentication_error,
	// rate_limit_error or api_error.
	Type string
	// Code is the stable, machine-readable reason, e.g. resource_not_found. A 2xx
	// answer the SDK cannot read is unexpected_response.
	Code string
	// Message is for people, never to parse.
	Message string
	// Param is the offending field, query parameter or header, when there is one.
	Param string
	// RequestID identifies the request (its Request-Id header): quote it to support.
	RequestID string
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("bridgeline: %d %s: %s", e.Status, e.Code, e.Message)
	if e.Param != "" {
		s += " (" + e.Param + ")"
	}
	if e.RequestID != "" {
		s += " [" + e.RequestID + "]"
	}
	return s
}

// UnmarshalJSON reads the API's error body, {"error": {"type", "code", ...}}.
func (e *APIError) UnmarshalJSON(b []byte) error {
	var body struct {
		Error struct {
			Type      string `json:"type"`
			Code      string `json:"code"`
			Message   string `json:"message"`
			Param     string `json:"param"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		return err
	}
	b2 := body.Error
	e.Type, e.Code, e.Message, e.Param, e.RequestID = b2.Type, b2.Code, b2.Message, b2.Param, b2.RequestID
	return nil
}

// Check is nil for a 2xx answer and an *APIError for any other: for the calls of
// Client.Generated, whose answers carry the response rather than an error.
//
//	r, err := c.Generated.GetAssistantWithResponse(ctx, id)
//	if err == nil {
//		err = bridgeline.Check(r.HTTPResponse, r.Body)
//	}
func Check(resp *http.Response, body []byte) error {
	if resp == nil {
		return errors.New("bridgeline: no response")
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	e := &APIError{Status: resp.StatusCode}
	if err := json.Unmarshal(body, e); err != nil || e.Code == "" {
		e.Code, e.Message = "unexpected_response", fmt.Sprintf("HTTP %d: %.200s", resp.StatusCode, body)
	}
	if e.RequestID == "" {
		e.RequestID = resp.Header.Get("Request-Id")
	}
	return e
}

// answer is a typed method's result: the decoded body of the documented success status,
// or the error the answer carries.
func answer[T any](resp *http.Response, body []byte, v *T) (*T, error) {
	if err := Check(resp, body); err != nil {
		return nil, err
	}
	if v == nil {
		return nil, &APIError{Status: resp.StatusCode, Code: "unexpected_response", RequestID: resp.Header.Get("Request-Id"),
			Message: fmt.Sprintf("HTTP %d with a body this SDK cannot read: %.200s", resp.StatusCode, body)}
	}
	return v, nil
}
