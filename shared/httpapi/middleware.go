package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/idempotency"
	"github.com/bridgeline/bridgeline/shared/ident"
)

// requestID gives every request an id, in the context and the Request-Id header, and
// logs the request once it is served. The log line never holds credentials or bodies.
func (a *API) requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := ident.New("req")
		w.Header().Set("Request-Id", id)
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		r = r.WithContext(contextWithRequestID(r.Context(), id))
		start := time.Now()
		next.ServeHTTP(rec, r)
		a.log().InfoContext(r.Context(), "request", "request_id", id, "method", r.Method, "path", r.URL.Path,
			"status", rec.status, "duration_ms", time.Since(start).Milliseconds(), "account_id", rec.account)
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status  int
	account string
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// recoverer turns a panic into a logged 500.
func (a *API) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				a.writeError(w, r, fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// limitBody reads the body up front (at most max bytes, MaxBodyBytes when 0, else 413) so
// handlers and the idempotency check see the same bytes, and refuses non-JSON bodies with
// 415 (a Multipart route checks its own type). It runs per route, before authentication, so each route has its own limit.
func (a *API) limitBody(next http.Handler, max int64, notJSON bool) http.Handler {
	if max <= 0 {
		max = MaxBodyBytes
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				a.writeError(w, r, apierr.New(apierr.CodeBodyTooLarge, fmt.Sprintf("request body is over %d bytes", max)))
				return
			}
			a.writeError(w, r, apierr.New(apierr.CodeInvalidJSON, "could not read the request body"))
			return
		}
		if len(bytes.TrimSpace(body)) > 0 && strings.HasPrefix(r.URL.Path, "/v1/") && !notJSON && !jsonMediaType(r.Header.Get("Content-Type")) {
			a.writeError(w, r, apierr.New(apierr.CodeUnsupportedMediaType,
				"a request body must be sent with Content-Type: application/json"))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// jsonMediaType reports whether a Content-Type header is application/json (any case,
// with or without parameters such as charset). A missing one is not: a body is JSON only
// when its sender says so, as the README and openapi.yaml promise.
func jsonMediaType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// KeyAuth authenticates the key of `Authorization: Bearer sk_...` (or HTTP Basic with the
// key as the user name) against the stored key hashes. A
// revoked key is refused from the request after its revocation on.
func (a *API) KeyAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		acct, k, err := authorizeKey(r.Context(), a.accounts, r.Header.Get("Authorization"), a.now())
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		Authenticated(w, r, account.Caller{Account: acct, Live: k.Live(), KeyID: k.ID}, next)
	})
}

// Authenticated hands a request on as made by c. Auth middlewares call it once they
// have found the account and its key's mode, by key locally or from the Lambda
// authorizer's context.
func Authenticated(w http.ResponseWriter, r *http.Request, c account.Caller, next http.Handler) {
	if rec, ok := w.(*statusRecorder); ok {
		rec.account = c.ID
	}
	next.ServeHTTP(w, r.WithContext(WithAccount(r.Context(), c)))
}

// keyFrom reads the API key from an Authorization header: `Bearer <key>`, or HTTP Basic
// with the key as the user name and no password (`curl -u sk_test_...:`, as Stripe
// takes it). No header, another scheme or a bare key is api_key_missing with a message
// that says how to send it.
func keyFrom(authorization string) (string, error) {
	h := strings.TrimSpace(authorization)
	if h == "" {
		return "", apierr.New(apierr.CodeAPIKeyMissing, "no API key: send it as `Authorization: Bearer sk_...`")
	}
	scheme, rest, _ := strings.Cut(h, " ")
	rest = strings.TrimSpace(rest)
	switch {
	case strings.EqualFold(scheme, "Bearer") && rest != "":
		return rest, nil
	case strings.EqualFold(scheme, "Basic") && rest != "":
		raw, err := base64.StdEncoding.DecodeString(rest)
		if err != nil {
			return "", apierr.New(apierr.CodeAPIKeyMissing, "the Basic credentials are not base64: use `Authorization: Bearer sk_...`, or the key as the user name (`curl -u sk_...:`)")
		}
		user, _, _ := strings.Cut(string(raw), ":")
		if user == "" {
			return "", apierr.New(apierr.CodeAPIKeyMissing, "no API key in the Basic credentials: the key is the user name, the password empty (`curl -u sk_...:`)")
		}
		return user, nil
	case rest == "" && strings.HasPrefix(scheme, "sk_"):
		return "", apierr.New(apierr.CodeAPIKeyMissing, "the Authorization header holds a bare key: use `Authorization: Bearer sk_...`")
	default:
		return "", apierr.New(apierr.CodeAPIKeyMissing, "no API key: use `Authorization: Bearer sk_...`")
	}
}

// RateLimiter decides whether an account may make one more request now, and if not,
// how long it should wait: the in-process Limiter (local stack), or one shared by every
// Lambda instance (dynamo.RateLimiter).
type RateLimiter interface {
	Take(ctx context.Context, bucket string, now time.Time) (ok bool, retryAfter time.Duration, err error)
}

// rateLimited applies the per-account limit: every key of an account shares it (a key
// the account makes through POST /v1/api_keys gets no rate of its own). A limiter that
// fails lets the request through: the limit guards capacity, and refusing every request
// while its store is unwell would turn a slow counter into an outage.
func (a *API) rateLimited(next http.Handler) http.Handler {
	if a.limiter == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok, wait, err := a.limiter.Take(r.Context(), AccountFrom(r.Context()).ID, a.now())
		if err != nil {
			a.log().WarnContext(r.Context(), "rate limiter", "request_id", RequestID(r.Context()), "error", err.Error())
		} else if !ok {
			w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait.Seconds())))))
			a.writeError(w, r, apierr.New(apierr.CodeRateLimited, "too many requests; retry after the Retry-After seconds"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Limiter is a token bucket per account: Rate tokens a second, up to Burst.
type Limiter struct {
	Rate  float64
	Burst float64

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// NewLimiter makes a limiter; rate <= 0 turns limiting off.
func NewLimiter(rate, burst float64) *Limiter {
	return &Limiter{Rate: rate, Burst: burst, buckets: map[string]*bucket{}}
}

// Unlimited is a RateLimiter that allows every request (a function given no shared
// limit).
var Unlimited RateLimiter = (*Limiter)(nil)

// Take is Allow as a RateLimiter: the wait is until the next token. A nil Limiter allows
// everything.
func (l *Limiter) Take(_ context.Context, key string, now time.Time) (bool, time.Duration, error) {
	if l == nil || l.Allow(key, now) {
		return true, 0, nil
	}
	return false, time.Duration(float64(time.Second) / l.Rate), nil
}

// Allow takes a token for key at now, if one is left.
func (l *Limiter) Allow(key string, now time.Time) bool {
	if l.Rate <= 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		b = &bucket{tokens: l.Burst, last: now}
		l.buckets[key] = b
	}
	b.tokens = min(l.Burst, b.tokens+now.Sub(b.last).Seconds()*l.Rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// idempotent implements Idempotency-Key on POST: the first request with a key runs and
// its response is kept for 24 h; a retry with the same body replays it, a retry with
// another body is 422, and a retry while the first still runs is 409. A response of 500
// or more is not kept, so a retry runs again, unless the handler called KeepIdempotent
// (what it did cannot safely run twice); nor is a 429 (concurrent_session_limit: nothing
// was written, and a retry once a session ended should run).
//
// The key is the account's, and a replay is for the API key that first used it: the
// fingerprint covers the method, the URI, the caller's key id and the body, so another
// key of the account (a test key that learned a live key's Idempotency-Key) gets 422.
// The fields named in rt.ReplayOmits are removed from the stored response, and a replay
// gets fresh ones from rt.ReplayRefill (see Route).
func (a *API) idempotent(next http.Handler, rt Route) http.Handler {
	omit := rt.ReplayOmits
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		if key == "" {
			next.ServeHTTP(w, r)
			return
		}
		if len(key) > 255 || !printable(key) {
			a.writeError(w, r, apierr.Param(apierr.CodeIdempotencyKeyInvalid, "Idempotency-Key",
				"Idempotency-Key must be 1-255 printable ASCII characters"))
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		caller := AccountFrom(r.Context())
		now := a.now().UTC()
		acct := caller.ID
		rec := idempotency.Record{AccountID: acct, Key: key, RequestHash: IdempotencyHash(r.Method, r.URL.RequestURI(), caller.KeyID, body),
			CreatedAt: now, ExpiresAt: now.Add(idempotency.Retention)}
		got, inserted, err := a.idempotency.BeginIdempotent(r.Context(), rec, now)
		if err != nil {
			a.writeError(w, r, fmt.Errorf("idempotency begin: %w", err))
			return
		}
		if !inserted {
			switch {
			case got.RequestHash != rec.RequestHash:
				a.writeError(w, r, apierr.Param(apierr.CodeIdempotencyKeyReused, "Idempotency-Key",
					"this Idempotency-Key was used with a different request, or by another API key"))
			case got.Status == 0:
				a.writeError(w, r, apierr.Param(apierr.CodeIdempotencyKeyInUse, "Idempotency-Key",
					"a request with this Idempotency-Key is still in progress; retry shortly"))
			default:
				replay := got.Body
				if rt.ReplayRefill != nil && got.Status < 300 {
					if replay, err = refill(r, got.Body, rt.ReplayRefill); err != nil {
						a.writeError(w, r, err)
						return
					}
				}
				w.Header().Set("Idempotent-Replayed", "true")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(got.Status)
				w.Write(replay)
			}
			return
		}
		cap := &capture{ResponseWriter: w, status: http.StatusOK}
		keep := new(bool)
		r = r.WithContext(context.WithValue(r.Context(), keepKey{}, keep))
		defer func() {
			// A panic or a server error leaves the key free for a retry.
			if v := recover(); v != nil {
				a.idempotency.ReleaseIdempotent(r.Context(), acct, key)
				panic(v)
			}
		}()
		next.ServeHTTP(cap, r)
		if (cap.status >= 500 || cap.status == http.StatusTooManyRequests) && !*keep {
			err = a.idempotency.ReleaseIdempotent(r.Context(), acct, key)
		} else {
			err = a.idempotency.CompleteIdempotent(r.Context(), acct, key, cap.status, omitFields(cap.buf.Bytes(), omit))
		}
		if err != nil {
			a.log().ErrorContext(r.Context(), "idempotency record", "request_id", RequestID(r.Context()), "error", err.Error())
		}
	})
}

// IdempotencyHash is the fingerprint an Idempotency-Key's record keeps of its first
// request: the method, the URI with its query, the id of the API key that sent it, and
// the exact body bytes.
func IdempotencyHash(method, requestURI, keyID string, body []byte) string {
	sum := sha256.Sum256([]byte(method + " " + requestURI + "\nkey " + keyID + "\n" + string(body)))
	return hex.EncodeToString(sum[:])
}

type keepKey struct{}

// KeepIdempotent has the request's idempotency record keep its answer even when it is a
// server error: a retry with the same key replays it instead of running again. A handler
// calls it when it failed after a step that must not be repeated (a dial).
func KeepIdempotent(ctx context.Context) {
	if keep, ok := ctx.Value(keepKey{}).(*bool); ok {
		*keep = true
	}
}

// capture copies what a handler writes.
type capture struct {
	http.ResponseWriter
	status int
	buf    bytes.Buffer
}

func (c *capture) WriteHeader(code int) {
	c.status = code
	c.ResponseWriter.WriteHeader(code)
}

func (c *capture) Write(b []byte) (int, error) {
	c.buf.Write(b)
	return c.ResponseWriter.Write(b)
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// refill runs a route's ReplayRefill over a stored answer. A stored body that is not a
// JSON object is replayed as it is.
func refill(r *http.Request, stored []byte, fn func(*http.Request, map[string]json.RawMessage) error) ([]byte, error) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(stored, &obj) != nil {
		return stored, nil
	}
	if err := fn(r, obj); err != nil {
		return nil, err
	}
	return marshalObject(obj)
}

// marshalObject encodes a JSON object as writeJSON does (no HTML escaping), sorted by key.
func marshalObject(obj map[string]json.RawMessage) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// omitFields returns the JSON object body without the named top-level fields (or
// "object.field", a field of a top-level object). A body that is not an object holding
// them (an error) is returned as it is.
func omitFields(body []byte, omit []string) []byte {
	if len(omit) == 0 {
		return body
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return body
	}
	changed := false
	for _, f := range omit {
		if top, sub, nested := strings.Cut(f, "."); nested {
			// One level down: "inbound.password" is the password in the inbound object.
			var inner map[string]json.RawMessage
			if json.Unmarshal(obj[top], &inner) != nil {
				continue
			}
			if _, ok := inner[sub]; !ok {
				continue
			}
			delete(inner, sub)
			raw, err := marshalObject(inner)
			if err != nil {
				return body
			}
			obj[top], changed = raw, true
			continue
		}
		if _, ok := obj[f]; ok {
			delete(obj, f)
			changed = true
		}
	}
	if !changed {
		return body
	}
	out, err := marshalObject(obj)
	if err != nil {
		return body
	}
	return out
}
