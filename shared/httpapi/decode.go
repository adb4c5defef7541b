package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
)

func contextWithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, keyRequestID, id)
}

// Decode reads the JSON body into v strictly: unknown fields, wrong types, trailing data
// and malformed JSON are 400s naming the problem. An empty body decodes as {} when
// optional is true. Routes with a body take no query parameters, so any is refused.
func Decode(r *http.Request, v any, optional bool) error {
	if err := Query(r); err != nil {
		return err
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return apierr.New(apierr.CodeInvalidJSON, "could not read the request body")
	}
	return DecodeBytes(body, v, optional)
}

// DecodeBytes is Decode on bytes already read.
func DecodeBytes(body []byte, v any, optional bool) error {
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return nil
		}
		return apierr.New(apierr.CodeInvalidJSON, "the request needs a JSON object body")
	}
	if t := bytes.TrimSpace(body); t[0] != '{' {
		return apierr.New(apierr.CodeInvalidJSON, "the request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return apierr.New(apierr.CodeInvalidJSON, "unexpected data after the JSON object")
	}
	return checkKeys(body, reflect.TypeOf(v), "")
}

func decodeError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var field *fieldError
	switch {
	case errors.As(err, &field):
		return apierr.Invalid(field.param, field.msg)
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
		return apierr.New(apierr.CodeInvalidJSON, "malformed JSON: "+strings.TrimPrefix(err.Error(), "json: "))
	case errors.As(err, &typ):
		param := typ.Field
		if param == "" {
			return apierr.New(apierr.CodeInvalidJSON, "the request body must be a JSON object")
		}
		return apierr.Invalid(param, fmt.Sprintf("%s must be %s, not %s", param, jsonKind(typ.Type.String()), typ.Value))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return apierr.Param(apierr.CodeParameterUnknown, name, fmt.Sprintf("unknown parameter %q", name))
	}
	return apierr.New(apierr.CodeInvalidJSON, "malformed JSON")
}

func jsonKind(goType string) string {
	switch {
	case strings.Contains(goType, "string"):
		return "a string"
	case strings.Contains(goType, "int"):
		return "an integer"
	case strings.Contains(goType, "float"):
		return "a number"
	case strings.Contains(goType, "bool"):
		return "a boolean"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	}
	return "an object"
}

// fieldError is a value error found while decoding one field.
type fieldError struct{ param, msg string }

func (e *fieldError) Error() string { return e.param + ": " + e.msg }

// Nullable is a JSON field that distinguishes absent, null and a value.
type Nullable[T any] struct {
	Set   bool // the field was present
	Null  bool // the field was null
	Value T
}

// UnmarshalJSON records presence and null.
func (n *Nullable[T]) UnmarshalJSON(b []byte) error {
	n.Set = true
	if string(b) == "null" {
		n.Null = true
		return nil
	}
	return json.Unmarshal(b, &n.Value)
}

// Ptr returns the value when present and not null.
func (n Nullable[T]) Ptr() *T {
	if !n.Set || n.Null {
		return nil
	}
	return &n.Value
}

// NotNull rejects an explicit null for a field that must hold a value.
func (n Nullable[T]) NotNull(param string) error {
	if n.Null {
		return apierr.Invalid(param, param+" must not be null")
	}
	return nil
}

// Query checks the query string holds only the named parameters.
func Query(r *http.Request, allowed ...string) error {
	for k := range r.URL.Query() {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			return apierr.Param(apierr.CodeParameterUnknown, k, fmt.Sprintf("unknown query parameter %q", k))
		}
	}
	return nil
}

// ListQuery reads ?limit= and the cursor, ?starting_after= or ?ending_before= (an id
// with the given prefix), plus the other allowed parameters.
func ListQuery(r *http.Request, prefix string, allowed ...string) (listing.Query, error) {
	if err := Query(r, append(allowed, "limit", "starting_after", "ending_before")...); err != nil {
		return listing.Query{}, err
	}
	q := listing.Query{Limit: listing.DefaultLimit, StartingAfter: r.URL.Query().Get("starting_after")}
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > listing.MaxLimit {
			return q, apierr.Invalid("limit", fmt.Sprintf("limit must be an integer from 1 to %d", listing.MaxLimit))
		}
		q.Limit = n
	}
	if q.StartingAfter != "" && !ident.Valid(prefix, q.StartingAfter) {
		return q, apierr.Invalid("starting_after", fmt.Sprintf("starting_after must be a %s_ id", prefix))
	}
	return endingBefore(r, prefix, q)
}

// ListJSON is the list envelope.
type ListJSON[T any] struct {
	Object  string `json:"object"`
	Data    []T    `json:"data"`
	HasMore bool   `json:"has_more"`
}

// NewList cuts items fetched with Limit+1 into a page and maps them to their JSON form.
func NewList[S, T any](items []S, q listing.Query, present func(S) T) ListJSON[T] {
	page, more := listing.PageOf(items, q)
	out := ListJSON[T]{Object: "list", Data: make([]T, 0, len(page)), HasMore: more}
	for _, it := range page {
		out.Data = append(out.Data, present(it))
	}
	return out
}

// MaxListBytes bounds the encoded items of a page of a list whose items can be large
// (assistants and versions carry prompts of up to 20,000 characters). Lambda refuses a
// response over 6 MB, counted after the body is quoted into the proxy's JSON, which can
// double it (every `"` becomes `\"`); 2 MiB keeps the worst case under that, and one
// assistant object at the field limits (about 1.5 MB) always fits.
const MaxListBytes = 2 << 20

// NewBoundedList is NewList that also ends the page before its items pass MaxListBytes,
// with has_more set: a page may hold fewer than limit items, never none while more exist,
// and the cursor of its last item continues where it stopped. For ending_before the page
// keeps the items nearest its cursor (the oldest) and the first item's id continues.
func NewBoundedList[S, T any](items []S, q listing.Query, present func(S) T) ListJSON[T] {
	out := NewList(items, q, present)
	n := len(out.Data)
	size := 0
	for i := range n {
		j := i // the i-th item from the cursor's end
		if q.Ascending() {
			j = n - 1 - i
		}
		b, err := json.Marshal(out.Data[j])
		if err != nil {
			break // writeJSON reports it
		}
		if size += len(b); size > MaxListBytes && i > 0 {
			if q.Ascending() {
				out.Data = out.Data[j+1:]
			} else {
				out.Data = out.Data[:j]
			}
			out.HasMore = true
			break
		}
	}
	return out
}

// Time is a timestamp as the API writes it: RFC 3339, UTC, milliseconds.
type Time time.Time

// MarshalJSON writes 2026-11-22T07:00:00.123Z.
func (t Time) MarshalJSON() ([]byte, error) {
	return []byte(`"` + t.String() + `"`), nil
}

// String is the time as the API writes it: UTC, to the millisecond.
func (t Time) String() string { return callevent.FormatTime(time.Time(t)) }

// TimePtr is a nullable Time.
func TimePtr(t *time.Time) *Time {
	if t == nil || t.IsZero() {
		return nil
	}
	v := Time(*t)
	return &v
}

// StringOrNull writes "" as null.
func StringOrNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
