package httpapi

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/session"
)

// The query parameters of a creation-time filter.
const (
	CreatedGTE = "created[gte]"
	CreatedLTE = "created[lte]"
)

// endingBefore reads ?ending_before= into q: an id with the given prefix, never beside
// starting_after (a page is after one cursor or before one, not between two).
func endingBefore(r *http.Request, prefix string, q listing.Query) (listing.Query, error) {
	q.EndingBefore = r.URL.Query().Get("ending_before")
	if q.EndingBefore == "" {
		return q, nil
	}
	if q.StartingAfter != "" {
		return q, apierr.Invalid("ending_before", "starting_after and ending_before cannot be used together")
	}
	if !ident.Valid(prefix, q.EndingBefore) {
		return q, apierr.Invalid("ending_before", fmt.Sprintf("ending_before must be a %s_ id", prefix))
	}
	return q, nil
}

// CreatedRange reads ?created[gte]= and ?created[lte]= into q as the id range of objects
// created in that time (ids carry their creation time to the millisecond; ident.Floor
// and ident.Ceil). A value is a Unix time in whole seconds or an RFC 3339 timestamp;
// both ends are inclusive, and a range that ends before it starts matches nothing.
// The handler lists both parameters as allowed.
func CreatedRange(r *http.Request, prefix string, q listing.Query) (listing.Query, error) {
	for _, p := range []struct {
		name string
		set  func(time.Time)
	}{
		{CreatedGTE, func(t time.Time) { q.IDFrom = ident.Floor(prefix, t) }},
		{CreatedLTE, func(t time.Time) { q.IDTo = ident.Ceil(prefix, t) }},
	} {
		v, ok := r.URL.Query()[p.name]
		if !ok {
			continue
		}
		t, err := parseCreated(v[0])
		if err != nil {
			return q, invalidCreated(p.name)
		}
		p.set(t)
	}
	return q, nil
}

func invalidCreated(name string) error {
	return apierr.Invalid(name, name+" must be a Unix time in seconds or an RFC 3339 timestamp")
}

// parseCreated reads a Unix time in seconds (digits only) or an RFC 3339 timestamp.
func parseCreated(v string) (time.Time, error) {
	if v != "" && strings.Trim(v, "0123456789") == "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > 253402300799 { // past 9999-12-31: no id can hold it
			return time.Time{}, fmt.Errorf("unix time %q out of range", v)
		}
		return time.Unix(n, 0), nil
	}
	return time.Parse(time.RFC3339Nano, v)
}

// EnumParam reads an optional query parameter that must be one of values ("" when absent).
func EnumParam(r *http.Request, name string, values []string) (string, error) {
	v, ok := r.URL.Query()[name]
	if !ok {
		return "", nil
	}
	if !slices.Contains(values, v[0]) {
		return "", apierr.Invalid(name, fmt.Sprintf("%s must be one of %s", name, strings.Join(values, ", ")))
	}
	return v[0], nil
}

// IDParam reads an optional query parameter that must be an id with the given prefix;
// empty is absent, as line_id and session_id have always read.
func IDParam(r *http.Request, name, prefix string) (string, error) {
	v := r.URL.Query().Get(name)
	if v != "" && !ident.Valid(prefix, v) {
		return "", invalidID(name, prefix)
	}
	return v, nil
}

// callListQuery reads the page and the filters of GET /v1/calls. Every filter given must
// match; any combination is served by an index (see shared/store/dynamo/listfilters.go).
func callListQuery(r *http.Request) (call.ListQuery, error) {
	q, err := ListQuery(r, "call", "line_id", "session_id", "assistant_id", "status", "direction", CreatedGTE, CreatedLTE)
	if err != nil {
		return call.ListQuery{}, err
	}
	cq := call.ListQuery{}
	if cq.Query, err = CreatedRange(r, "call", q); err != nil {
		return cq, err
	}
	for _, f := range []struct {
		dst          *string
		name, prefix string
	}{{&cq.LineID, "line_id", "line"}, {&cq.SessionID, "session_id", "ses"}, {&cq.AssistantID, "assistant_id", "asst"}} {
		if *f.dst, err = IDParam(r, f.name, f.prefix); err != nil {
			return cq, err
		}
	}
	if cq.Status, err = EnumParam(r, "status", call.Statuses); err != nil {
		return cq, err
	}
	cq.Direction, err = EnumParam(r, "direction", call.Directions)
	return cq, err
}

// sessionListQuery reads the page and the status filter of GET /v1/sessions.
func sessionListQuery(r *http.Request) (session.ListQuery, error) {
	q, err := ListQuery(r, "ses", "status")
	if err != nil {
		return session.ListQuery{}, err
	}
	sq := session.ListQuery{Query: q}
	sq.Status, err = EnumParam(r, "status", session.Statuses)
	return sq, err
}
