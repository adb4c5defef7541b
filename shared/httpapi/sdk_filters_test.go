package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	bridgeline "github.com/bridgeline/bridgeline/sdk/go"
	"github.com/bridgeline/bridgeline/shared/ident"
)

// TestGoSDKPagesAFilteredList: the SDK's Iter carries the list's filters on every page
// (the generated params, created[gte] included, encoded as the server reads them), walks
// a filtered list to its end, and reads each event into its type.
func TestGoSDKPagesAFilteredList(t *testing.T) {
	st := newStack(t, nil)
	ctx := context.Background()
	before := time.Now().Add(-time.Second)
	var ended []string // newest first
	for i := range 7 {
		typ := callevent.TypeCallIncoming
		if i%2 == 0 {
			typ = callevent.TypeCallEnded
		}
		e := callevent.Event{ID: ident.New("evt"), AccountID: st.acctID, Type: typ, CreatedAt: time.Now().UTC(), Data: json.RawMessage(`{}`)}
		if err := st.store.RecordEvent(ctx, e); err != nil {
			t.Fatal(err)
		}
		if typ == callevent.TypeCallEnded {
			ended = append([]string{e.ID}, ended...)
		}
	}
	srv := httptest.NewServer(st.handler)
	defer srv.Close()
	count := &countRequests{}
	c, err := bridgeline.New(srv.URL, st.key, bridgeline.Options{HTTPClient: &http.Client{Transport: count}})
	if err != nil {
		t.Fatal(err)
	}
	typ, gte := bridgeline.EventTypeCallEnded, strconv.FormatInt(before.Unix(), 10)
	var got []string
	it := c.Events(ctx, &bridgeline.ListEventsParams{Limit: bridgeline.Ptr(1), Type: &typ, CreatedGte: &gte})
	for it.Next() {
		ev := it.Current()
		if _, ok := ev.(*bridgeline.CallEndedEvent); !ok {
			t.Errorf("event %s is %T, want *CallEndedEvent", ev.EventID(), ev)
		}
		got = append(got, ev.EventID())
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if pages := int(count.n.Load()); !slices.Equal(got, ended) || pages != len(ended) {
		t.Errorf("all call.ended events = %v in %d pages, want %v in %d", got, pages, ended, len(ended))
	}
	// ending_before, from the generated params: the page just before the oldest.
	last := ended[len(ended)-1]
	l, err := c.ListEvents(ctx, &bridgeline.ListEventsParams{Limit: bridgeline.Ptr(1), Type: &typ, EndingBefore: &last})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Data) != 1 || !l.HasMore {
		t.Fatalf("ending_before %s = %+v, want one event with has_more", last, l)
	}
	if ev, err := l.Data[0].Parse(); err != nil || ev.EventID() != ended[len(ended)-2] {
		t.Errorf("ending_before %s = %v, %v; want %s", last, ev, err, ended[len(ended)-2])
	}
}

// countRequests counts the requests it sends.
type countRequests struct{ n atomic.Int32 }

func (c *countRequests) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(req)
}
