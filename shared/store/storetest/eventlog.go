package storetest

import (
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/decision"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
)

// EventLogStore is the event log the events API reads: events, written by RecordEvent
// here (state changes write theirs in their own transactions), and their attempts.
type EventLogStore interface {
	delivery.Log
	decision.EventLog
}

// RunEventLog runs the event log cases, each against a fresh store.
func RunEventLog(t *testing.T, newStore func(t *testing.T) EventLogStore) {
	for name, c := range eventLogCases {
		t.Run(name, func(t *testing.T) { c(t, newStore(t)) })
	}
}

var eventLogCases = map[string]func(*testing.T, EventLogStore){
	"record get round trip":      eventRoundTrip,
	"list newest first, by type": eventList,
	"get unknown":                eventUnknown,
	// listfilters.go
	"list by type and creation time, paged both ways": eventListFilters,
	"redeliveries counted up to max, concurrently":    eventRedeliveryCap,
}

// eventRedeliveryCap: 12 concurrent counts against a max of 5 let exactly 5 through, the
// rest conflict, and an unknown event counts nothing.
func eventRedeliveryCap(t *testing.T, s EventLogStore) {
	e := newEvent(ident.New("acct"), callevent.TypeCallEnded)
	if err := s.RecordEvent(ctx(t), e); err != nil {
		t.Fatal(err)
	}
	const max, tries = 5, 12
	var wg sync.WaitGroup
	var ok, refused atomic.Int32
	for range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch err := s.CountRedelivery(ctx(t), e.ID, max); {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, apierr.ErrConflict):
				refused.Add(1)
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != max || refused.Load() != tries-max {
		t.Errorf("%d concurrent counts, max %d: %d counted, %d refused; want %d and %d", tries, max, ok.Load(), refused.Load(), max, tries-max)
	}
	if err := s.CountRedelivery(ctx(t), ident.New("evt"), max); err == nil {
		t.Error("CountRedelivery of an unknown event = nil, want an error")
	}
	if got, err := s.GetEvent(ctx(t), e.ID); err != nil || got.ID != e.ID {
		t.Errorf("GetEvent after counting = %+v, %v", got, err)
	}
}

func newEvent(accountID, typ string) callevent.Event {
	data, _ := json.Marshal(map[string]any{"call_id": ident.New("call"), "n": 1})
	return callevent.Event{ID: ident.New("evt"), AccountID: accountID, Type: typ,
		CreatedAt: time.Now().UTC().Truncate(time.Millisecond), Data: data}
}

func eventRoundTrip(t *testing.T, s EventLogStore) {
	e := newEvent(ident.New("acct"), callevent.TypeCallIncoming)
	if err := s.RecordEvent(ctx(t), e); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetEvent(ctx(t), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != e.ID || got.AccountID != e.AccountID || got.Type != e.Type || !got.CreatedAt.Equal(e.CreatedAt) {
		t.Errorf("GetEvent = %+v, want %+v", got, e)
	}
	var a, b any
	json.Unmarshal(got.Data, &a)
	json.Unmarshal(e.Data, &b)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("data = %s, want %s", got.Data, e.Data)
	}
}

func eventList(t *testing.T, s EventLogStore) {
	acct := ident.New("acct")
	var ended, all []string
	for i := range 5 {
		typ := callevent.TypeCallEnded
		if i%2 == 1 {
			typ = callevent.TypeCallIncoming
		}
		e := newEvent(acct, typ)
		if err := s.RecordEvent(ctx(t), e); err != nil {
			t.Fatal(err)
		}
		all = append([]string{e.ID}, all...)
		if typ == callevent.TypeCallEnded {
			ended = append([]string{e.ID}, ended...)
		}
	}
	if err := s.RecordEvent(ctx(t), newEvent(ident.New("acct"), callevent.TypeCallEnded)); err != nil {
		t.Fatal(err)
	}
	page, err := s.ListEvents(ctx(t), acct, "", listing.Query{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := eventIDs(page); len(got) != 3 || got[0] != all[0] || got[1] != all[1] {
		t.Errorf("first page = %v, want %v then one more", got, all[:2])
	}
	page, err = s.ListEvents(ctx(t), acct, "", listing.Query{Limit: 10, StartingAfter: all[1]})
	if err != nil {
		t.Fatal(err)
	}
	if got := eventIDs(page); len(got) != 3 || got[0] != all[2] {
		t.Errorf("page after %s = %v, want %v", all[1], got, all[2:])
	}
	page, err = s.ListEvents(ctx(t), acct, callevent.TypeCallEnded, listing.Query{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := eventIDs(page); len(got) != 3 || got[0] != ended[0] || got[2] != ended[2] {
		t.Errorf("call.ended events = %v, want %v", got, ended)
	}
}

func eventUnknown(t *testing.T, s EventLogStore) {
	if _, err := s.GetEvent(ctx(t), ident.New("evt")); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("GetEvent(unknown) = %v, want ErrNotFound", err)
	}
}

func eventIDs(es []callevent.Event) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}
