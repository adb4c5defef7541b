package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	bridgeline "github.com/bridgeline/bridgeline/sdk/go"
	"github.com/bridgeline/bridgeline/shared/ident"
)

// TestGoSDKPagesAFilteredList: the SDK's auto-pagination carries the list's filters on
// every page (the generated params, created[gte] included, encoded as the server reads
// them), and walks a filtered list to its end.
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
	c, err := bridgeline.New(srv.URL, st.key, bridgeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	limit, typ, gte := bridgeline.Limit(1), bridgeline.EventTypeCallEnded, strconv.FormatInt(before.Unix(), 10)
	pages := 0
	var got []string
	for e, err := range bridgeline.All(ctx, func(ctx context.Context, after string) ([]bridgeline.Event, bool, error) {
		p := &bridgeline.ListEventsParams{Limit: &limit, Type: &typ, CreatedGte: &gte}
		if after != "" {
			p.StartingAfter = &after
		}
		r, err := c.ListEventsWithResponse(ctx, p)
		if err == nil {
			err = bridgeline.Check(r.HTTPResponse, r.Body)
		}
		if err != nil {
			return nil, false, err
		}
		pages++
		return r.JSON200.Data, r.JSON200.HasMore, nil
	}, eventID) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, eventID(e))
	}
	if !slices.Equal(got, ended) || pages != len(ended) {
		t.Errorf("all call.ended events = %v in %d pages, want %v in %d", got, pages, ended, len(ended))
	}
	// ending_before, from the generated params: the page just before the oldest.
	last := ended[len(ended)-1]
	r, err := c.ListEventsWithResponse(ctx, &bridgeline.ListEventsParams{Limit: &limit, Type: &typ, EndingBefore: &last})
	if err != nil {
		t.Fatal(err)
	}
	if r.JSON200 == nil {
		t.Fatalf("ending_before = %d %s", r.StatusCode(), r.Body)
	}
	if len(r.JSON200.Data) != 1 || eventID(r.JSON200.Data[0]) != ended[len(ended)-2] || !r.JSON200.HasMore {
		t.Errorf("ending_before %s = %s, want [%s] with has_more", last, r.Body, ended[len(ended)-2])
	}
}

func eventID(e bridgeline.Event) string {
	b, _ := json.Marshal(e)
	var v struct {
		ID string `json:"id"`
	}
	json.Unmarshal(b, &v)
	return v.ID
}
