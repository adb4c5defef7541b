package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/session"
)

// The list filter cases: every combination of the call filters, the session status
// filter, the event type and creation-time filters, and paging with ending_before. The
// expected answer is worked out from the records written, with the same rules the
// API documents: every filter set must match, created bounds are inclusive id bounds.
// RunSessions and RunEventLog list them beside their other cases.

// pageAll pages through a list with limit 2, forwards with starting_after and then
// backwards with ending_before from the oldest item, and checks both walks give want.
func pageAll[T any](t *testing.T, name string, want []string, id func(T) string, list func(listing.Query) ([]T, error), base listing.Query) {
	t.Helper()
	walk := func(q listing.Query, backwards bool) []string {
		var got []string
		for range len(want) + 2 {
			items, err := list(q)
			if err != nil {
				t.Fatalf("%s: list(%+v): %v", name, q, err)
			}
			page, more := listing.PageOf(items, q)
			var pageIDs []string
			for _, it := range page {
				pageIDs = append(pageIDs, id(it))
			}
			if backwards {
				got = append(pageIDs, got...)
			} else {
				got = append(got, pageIDs...)
			}
			if !more || len(page) == 0 {
				return got
			}
			if backwards {
				q.EndingBefore = pageIDs[0]
			} else {
				q.StartingAfter = pageIDs[len(pageIDs)-1]
			}
		}
		t.Fatalf("%s: paging did not end", name)
		return nil
	}
	fwd := base
	fwd.Limit = 2
	if got := walk(fwd, false); !slices.Equal(got, want) {
		t.Errorf("%s: paged with starting_after = %v, want %v", name, got, want)
	}
	if len(want) < 2 {
		return
	}
	// Backwards from the oldest: the pages before it hold everything newer.
	back := base
	back.Limit, back.EndingBefore = 2, want[len(want)-1]
	if got := walk(back, true); !slices.Equal(got, want[:len(want)-1]) {
		t.Errorf("%s: paged with ending_before = %v, want %v", name, got, want[:len(want)-1])
	}
}

func callListFilters(t *testing.T, s SessionStore) {
	acct := ident.New("acct")
	lines := []string{ident.New("line"), ident.New("line"), ""}
	assistants := []string{ident.New("asst"), ""}
	var calls []call.Call // newest first
	for i := range 14 {
		_, c := newSessionPair(acct)
		c.Status = call.Statuses[i%len(call.Statuses)]
		c.Direction = call.Directions[i%len(call.Directions)]
		c.LineID = lines[i%len(lines)]
		c.AssistantID = assistants[(i/2)%len(assistants)]
		if i%4 == 0 {
			c.SessionID = ""
		}
		if err := s.SaveCall(ctx(t), c, nil); err != nil {
			t.Fatal(err)
		}
		calls = append([]call.Call{c}, calls...)
		if i%3 == 0 {
			time.Sleep(2 * time.Millisecond) // ids in several milliseconds, for the created bounds
		}
	}
	// Another account's calls match every filter but the account.
	for _, c := range calls[:3] {
		c.ID, c.AccountID, c.SessionID = ident.New("call"), ident.New("acct"), ""
		if err := s.SaveCall(ctx(t), c, nil); err != nil {
			t.Fatal(err)
		}
	}
	from, _ := ident.Time("call", calls[10].ID)
	to, _ := ident.Time("call", calls[3].ID)
	probe := calls[4] // a call with a line, an assistant and a session
	if probe.LineID == "" || probe.AssistantID == "" || probe.SessionID == "" {
		t.Fatalf("probe call %+v lacks a line, an assistant or a session", probe)
	}
	// Every subset of the six filters, set to the probe's values.
	for mask := range 1 << 6 {
		q := call.ListQuery{Query: listing.Query{Limit: listing.MaxLimit}}
		var name []string
		set := func(bit int, label string, f func()) {
			if mask&(1<<bit) != 0 {
				f()
				name = append(name, label)
			}
		}
		set(0, "line", func() { q.LineID = probe.LineID })
		set(1, "assistant", func() { q.AssistantID = probe.AssistantID })
		set(2, "status", func() { q.Status = probe.Status })
		set(3, "direction", func() { q.Direction = probe.Direction })
		set(4, "session", func() { q.SessionID = probe.SessionID })
		set(5, "created", func() { q.IDFrom, q.IDTo = ident.Floor("call", from), ident.Ceil("call", to) })
		label := fmt.Sprint(name)
		var want []string
		for _, c := range calls {
			if q.Matches(c) && (q.IDFrom == "" || q.IDFrom <= c.ID && c.ID <= q.IDTo) {
				want = append(want, c.ID)
			}
		}
		got, err := s.ListCalls(ctx(t), acct, q)
		if err != nil {
			t.Fatalf("ListCalls(%s): %v", label, err)
		}
		if !slices.Equal(ids(got), want) {
			t.Errorf("ListCalls(%s) = %v, want %v", label, ids(got), want)
		}
		// Paging both ways on the combinations that merge partitions or need none.
		if mask == 0 || mask == 0b100 || mask == 0b1000 || mask == 0b100011 || mask == 0b1001 {
			pageAll(t, "calls "+label, want, func(c call.Call) string { return c.ID },
				func(lq listing.Query) ([]call.Call, error) {
					q2 := q
					q2.Query = lq
					return s.ListCalls(ctx(t), acct, q2)
				},
				q.Query)
		}
	}
	// Statuses and directions that no call has are empty lists, not errors.
	got, err := s.ListCalls(ctx(t), ident.New("acct"), call.ListQuery{Query: listing.Query{Limit: 5}, Status: call.StatusActive})
	if err != nil || len(got) != 0 {
		t.Errorf("ListCalls(another account, active) = %v, %v; want none", ids(got), err)
	}
	// A created range that ends before it starts matches nothing.
	got, err = s.ListCalls(ctx(t), acct, call.ListQuery{Query: listing.Query{Limit: 5,
		IDFrom: ident.Floor("call", to), IDTo: ident.Ceil("call", from.Add(-time.Millisecond))}})
	if err != nil || len(got) != 0 {
		t.Errorf("ListCalls(empty range) = %v, %v; want none", ids(got), err)
	}
}

func callListStatusChange(t *testing.T, s SessionStore) {
	acct := ident.New("acct")
	_, c := newSessionPair(acct)
	c.AssistantID = ident.New("asst")
	if err := s.SaveCall(ctx(t), c, nil); err != nil {
		t.Fatal(err)
	}
	c.Revision = 1
	evt, _ := c.End(call.StatusEnded, call.ReasonRemoteHangup, call.EndedByRemote, time.Now(), func() string { return ident.New("evt") })
	if err := s.SaveCall(ctx(t), c, []callevent.Event{evt}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		status, assistant string
		want              int
	}{
		{call.StatusRinging, "", 0},
		{call.StatusRinging, c.AssistantID, 0},
		{call.StatusEnded, "", 1},
		{call.StatusEnded, c.AssistantID, 1},
	} {
		got, err := s.ListCalls(ctx(t), acct, call.ListQuery{Query: listing.Query{Limit: 5}, Status: tc.status,
			AssistantID: tc.assistant, LineID: c.LineID})
		if err != nil || len(got) != tc.want {
			t.Errorf("ListCalls(status %s, assistant %q) = %v, %v; want %d", tc.status, tc.assistant, ids(got), err, tc.want)
		}
	}
}

func sessionListByStatus(t *testing.T, s SessionStore) {
	acct := ident.New("acct")
	var all []session.Session // newest first
	for i := range 7 {
		ses, c := newSessionPair(acct)
		ses.Status = session.Statuses[i%len(session.Statuses)]
		if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
			t.Fatal(err)
		}
		all = append([]session.Session{ses}, all...)
	}
	other, oc := newSessionPair(ident.New("acct"))
	if err := s.SaveSession(ctx(t), other, oc, nil); err != nil {
		t.Fatal(err)
	}
	for _, status := range append([]string{""}, session.Statuses...) {
		var want []string
		for _, ses := range all {
			if status == "" || ses.Status == status {
				want = append(want, ses.ID)
			}
		}
		list := func(q listing.Query) ([]session.Session, error) {
			return s.ListSessions(ctx(t), acct, session.ListQuery{Query: q, Status: status})
		}
		got, err := list(listing.Query{Limit: listing.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		if gotIDs := sessionIDs(got); !slices.Equal(gotIDs, want) {
			t.Errorf("ListSessions(status %q) = %v, want %v", status, gotIDs, want)
		}
		pageAll(t, "sessions "+status, want, func(s session.Session) string { return s.ID }, list, listing.Query{})
	}
}

func eventListFilters(t *testing.T, s EventLogStore) {
	acct := ident.New("acct")
	types := []string{callevent.TypeCallIncoming, callevent.TypeCallEnded}
	var all []callevent.Event // newest first
	for i := range 9 {
		e := newEvent(acct, types[i%2])
		if err := s.RecordEvent(ctx(t), e); err != nil {
			t.Fatal(err)
		}
		all = append([]callevent.Event{e}, all...)
		time.Sleep(2 * time.Millisecond)
	}
	from, _ := ident.Time("evt", all[6].ID)
	to, _ := ident.Time("evt", all[1].ID)
	for _, tc := range []struct {
		name    string
		typ     string
		created bool
	}{
		{"all", "", false},
		{"type", callevent.TypeCallEnded, false},
		{"created", "", true},
		{"type and created", callevent.TypeCallIncoming, true},
	} {
		q := listing.Query{Limit: listing.MaxLimit}
		if tc.created {
			q.IDFrom, q.IDTo = ident.Floor("evt", from), ident.Ceil("evt", to)
		}
		var want []string
		for _, e := range all {
			if (tc.typ == "" || e.Type == tc.typ) && (!tc.created || q.IDFrom <= e.ID && e.ID <= q.IDTo) {
				want = append(want, e.ID)
			}
		}
		list := func(q listing.Query) ([]callevent.Event, error) { return s.ListEvents(ctx(t), acct, tc.typ, q) }
		got, err := list(q)
		if err != nil {
			t.Fatal(err)
		}
		var gotIDs []string
		for _, e := range got {
			gotIDs = append(gotIDs, e.ID)
		}
		if !slices.Equal(gotIDs, want) {
			t.Errorf("ListEvents(%s) = %v, want %v", tc.name, gotIDs, want)
		}
		pageAll(t, "events "+tc.name, want, func(e callevent.Event) string { return e.ID }, list, q)
	}
}
