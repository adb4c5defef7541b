package storetest

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/metadata"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/session"
)

// metadataCases: metadata is stored with its record and read back everywhere the record
// is, and a metadata update is a conditional write like any other, so neither it nor a
// concurrent change of another field is lost.
var metadataCases = map[string]func(*testing.T, Store){
	"assistant metadata stored, listed and patched":    assistantMetadataRoundTrip,
	"assistant metadata and draft edits race, no loss": assistantMetadataRace,
	"line metadata and line edits race, no loss":       lineMetadataRace,
	"refused metadata update writes nothing":           metadataRefusedWritesNothing,
}

const metadataWriters = 6

func assistantMetadataRoundTrip(t *testing.T, s Store) {
	acct, _ := newAccount(t, s)
	svc := assistant.Service{Store: s, Now: time.Now}
	a, err := svc.Create(ctx(t), acct.ID, assistant.Fields{Name: ptr("Ada"),
		Metadata: &metadata.Patch{Set: map[string]string{"team": "front-desk", "crm_id": "42", "blank": ""}}})
	if err != nil {
		t.Fatal(err)
	}
	want := metadata.Metadata{"team": "front-desk", "crm_id": "42"} // "" is a key not given
	checkMeta(t, "create answer", a.Metadata, want)
	got, err := s.GetAssistant(ctx(t), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkMeta(t, "GetAssistant", got.Metadata, want)
	list, err := s.ListAssistants(ctx(t), acct.ID, assistant.ListQuery{Query: listing.Query{Limit: 10}, Status: "all"})
	if err != nil || len(list) != 1 {
		t.Fatalf("ListAssistants = %d, %v; want 1", len(list), err)
	}
	checkMeta(t, "ListAssistants", list[0].Metadata, want)

	a, err = svc.Update(ctx(t), acct.ID, a.ID, assistant.Fields{Metadata: &metadata.Patch{Set: map[string]string{"crm_id": "", "tier": "gold"}}})
	if err != nil {
		t.Fatal(err)
	}
	want = metadata.Metadata{"team": "front-desk", "tier": "gold"}
	checkMeta(t, "after a patch", a.Metadata, want)
	got, _ = s.GetAssistant(ctx(t), a.ID)
	checkMeta(t, "GetAssistant after a patch", got.Metadata, want)

	a, err = svc.Update(ctx(t), acct.ID, a.ID, assistant.Fields{Metadata: &metadata.Patch{Clear: true}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetAssistant(ctx(t), a.ID)
	checkMeta(t, "GetAssistant after clearing", got.Metadata, nil)
}

// assistantMetadataRace: metadata patches of distinct keys and name edits run at once;
// every key and the last name survive.
func assistantMetadataRace(t *testing.T, s Store) {
	acct, _ := newAccount(t, s)
	svc := assistant.Service{Store: s, Now: time.Now}
	a, err := svc.Create(ctx(t), acct.ID, assistant.Fields{Name: ptr("Ada")})
	if err != nil {
		t.Fatal(err)
	}
	race(t, func(i int) error {
		_, err := svc.Update(ctx(t), acct.ID, a.ID, assistant.Fields{Metadata: &metadata.Patch{Set: map[string]string{key(i): "v"}}})
		return err
	}, func(i int) error {
		_, err := svc.Update(ctx(t), acct.ID, a.ID, assistant.Fields{Greeting: ptr(fmt.Sprintf("Hello %d", i))})
		return err
	})
	got, err := s.GetAssistant(ctx(t), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkMeta(t, "after the race", got.Metadata, allKeys())
	if got.Draft.Greeting == "" {
		t.Errorf("greeting after the race = %q, want one of the concurrent edits", got.Draft.Greeting)
	}
}

func lineMetadataRace(t *testing.T, s Store) {
	acct, _ := newAccount(t, s)
	svc := line.Service{Store: s, Assistants: s, Now: time.Now}
	l, err := svc.Provision(ctx(t), acct.ID, sim.Name, "+1555"+ident.New("h")[5:12], "Front desk")
	if err != nil {
		t.Fatal(err)
	}
	race(t, func(i int) error {
		_, err := svc.Update(ctx(t), acct.ID, l.ID, line.Update{Metadata: &metadata.Patch{Set: map[string]string{key(i): "v"}}})
		return err
	}, func(i int) error {
		_, err := svc.Update(ctx(t), acct.ID, l.ID, line.Update{Name: ptr(fmt.Sprintf("Desk %d", i)), InboundMode: ptr(line.ModeCustomerDecides)})
		return err
	})
	got, err := s.GetLine(ctx(t), l.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkMeta(t, "after the race", got.Metadata, allKeys())
	if got.InboundMode != line.ModeCustomerDecides || got.Name == "Front desk" {
		t.Errorf("line after the race = %q %q, want a concurrent edit's name and customer_decides", got.Name, got.InboundMode)
	}
	list, err := s.ListLines(ctx(t), acct.ID, listing.Query{Limit: 10})
	if err != nil || len(list) != 1 {
		t.Fatalf("ListLines = %d, %v; want 1", len(list), err)
	}
	checkMeta(t, "ListLines", list[0].Metadata, allKeys())
}

// metadataRefusedWritesNothing: an update whose result would pass the key limit fails
// as a parameter error and leaves the record as it was, revision included.
func metadataRefusedWritesNothing(t *testing.T, s Store) {
	acct, _ := newAccount(t, s)
	svc := assistant.Service{Store: s, Now: time.Now}
	full := map[string]string{}
	for i := range metadata.MaxKeys {
		full[fmt.Sprintf("k%02d", i)] = "v"
	}
	a, err := svc.Create(ctx(t), acct.ID, assistant.Fields{Name: ptr("Ada"), Metadata: &metadata.Patch{Set: full}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Update(ctx(t), acct.ID, a.ID, assistant.Fields{Name: ptr("Grace"), Metadata: &metadata.Patch{Set: map[string]string{"one_more": "v"}}})
	if e, ok := apierr.As(err); !ok || e.Param != "metadata" {
		t.Fatalf("51st key: error %v, want parameter_invalid on metadata", err)
	}
	got, err := s.GetAssistant(ctx(t), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != a.Revision || got.Name != "Ada" || len(got.Metadata) != metadata.MaxKeys {
		t.Errorf("after a refused update: revision %d name %q %d keys; want revision %d, Ada, %d keys",
			got.Revision, got.Name, len(got.Metadata), a.Revision, metadata.MaxKeys)
	}
}

// sessionMetadataRoundTrip: a session's and its call's metadata are stored and listed,
// and each PATCH changes its own record only.
func sessionMetadataRoundTrip(t *testing.T, s SessionStore) {
	acct := ident.New("acct")
	ses, c := newSessionPair(acct)
	ses.Metadata = metadata.Metadata{"order_id": "6735"}
	c.Metadata = ses.Metadata.Clone()
	if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
		t.Fatal(err)
	}
	gotS, err := s.GetSession(ctx(t), ses.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkMeta(t, "GetSession", gotS.Metadata, ses.Metadata)
	gotC, err := s.GetCall(ctx(t), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkMeta(t, "GetCall", gotC.Metadata, ses.Metadata)

	svc := newSessionService(t, s)
	if _, err := svc.UpdateMetadata(ctx(t), acct, ses.ID, metadata.Patch{Set: map[string]string{"agent": "sam"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.UpdateCallMetadata(ctx(t), acct, c.ID, metadata.Patch{Set: map[string]string{"order_id": "", "ticket": "T-1"}}); err != nil {
		t.Fatal(err)
	}
	sessions, err := s.ListSessions(ctx(t), acct, session.ListQuery{Query: listing.Query{Limit: 10}})
	if err != nil || len(sessions) != 1 {
		t.Fatalf("ListSessions = %d, %v; want 1", len(sessions), err)
	}
	checkMeta(t, "ListSessions after both updates", sessions[0].Metadata, metadata.Metadata{"order_id": "6735", "agent": "sam"})
	calls, err := s.ListCalls(ctx(t), acct, call.ListQuery{Query: listing.Query{Limit: 10}})
	if err != nil || len(calls) != 1 {
		t.Fatalf("ListCalls = %d, %v; want 1", len(calls), err)
	}
	checkMeta(t, "ListCalls after both updates", calls[0].Metadata, metadata.Metadata{"ticket": "T-1"})

	// Another account's session and call are not found, and nothing is written.
	other := ident.New("acct")
	if _, err := svc.UpdateMetadata(ctx(t), other, ses.ID, metadata.Patch{Clear: true}); !isNotFound(err) {
		t.Errorf("another account's session: %v, want resource_not_found", err)
	}
	if _, err := svc.UpdateCallMetadata(ctx(t), other, c.ID, metadata.Patch{Clear: true}); !isNotFound(err) {
		t.Errorf("another account's call: %v, want resource_not_found", err)
	}
	gotS, _ = s.GetSession(ctx(t), ses.ID)
	checkMeta(t, "GetSession after another account's update", gotS.Metadata, metadata.Metadata{"order_id": "6735", "agent": "sam"})
}

// sessionMetadataRace: metadata patches of a session and of its call race a writer that
// answers the session (a read-modify-write on revisions, as the session service does):
// every key of both and the answer survive.
func sessionMetadataRace(t *testing.T, s SessionStore) {
	acct := ident.New("acct")
	ses, c := newSessionPair(acct)
	c.PlatformCallID = ident.New("simcall")
	if err := s.SaveSession(ctx(t), ses, c, nil); err != nil {
		t.Fatal(err)
	}
	svc := newSessionService(t, s)
	var answered sync.Once
	race(t, func(i int) error {
		if i%2 == 0 {
			_, err := svc.UpdateMetadata(ctx(t), acct, ses.ID, metadata.Patch{Set: map[string]string{key(i): "v"}})
			return err
		}
		_, err := svc.UpdateCallMetadata(ctx(t), acct, c.ID, metadata.Patch{Set: map[string]string{key(i): "v"}})
		return err
	}, func(i int) error {
		var err error
		answered.Do(func() { err = answerSession(t, s, ses.ID) })
		return err
	})
	gotS, err := s.GetSession(ctx(t), ses.ID)
	if err != nil {
		t.Fatal(err)
	}
	gotC, err := s.GetCall(ctx(t), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantS, wantC := metadata.Metadata{}, metadata.Metadata{}
	for i := range metadataWriters {
		if i%2 == 0 {
			wantS[key(i)] = "v"
		} else {
			wantC[key(i)] = "v"
		}
	}
	checkMeta(t, "session after the race", gotS.Metadata, wantS)
	checkMeta(t, "call after the race", gotC.Metadata, wantC)
	if gotS.Status != session.StatusActive || gotC.AnsweredAt == nil {
		t.Errorf("after the race: session %s, call answered at %v; want the concurrent answer kept", gotS.Status, gotC.AnsweredAt)
	}
}

// answerSession marks a session and its call answered the way the session service
// writes: read both, change, save conditionally, read again on a conflict.
func answerSession(t *testing.T, s SessionStore, id string) error {
	for attempt := 0; attempt < 100; attempt++ {
		ses, err := s.GetSession(ctx(t), id)
		if err != nil {
			return err
		}
		c, err := s.GetCall(ctx(t), ses.CallID)
		if err != nil {
			return err
		}
		now := time.Now().UTC().Truncate(time.Millisecond)
		ses.Status, ses.AnsweredAt = session.StatusActive, &now
		c.Answer(now)
		err = s.SaveSession(ctx(t), ses, c, nil)
		if !errors.Is(err, apierr.ErrConflict) {
			return err
		}
		time.Sleep(time.Millisecond)
	}
	return errors.New("answer: too many conflicts")
}

// race runs metadataWriters calls of meta and of other at once and fails on any error.
func race(t *testing.T, meta, other func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 2*metadataWriters)
	for i := range metadataWriters {
		wg.Add(2)
		go func() { defer wg.Done(); errs <- meta(i) }()
		go func() { defer wg.Done(); errs <- other(i) }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func key(i int) string { return fmt.Sprintf("key_%d", i) }

func allKeys() metadata.Metadata {
	m := metadata.Metadata{}
	for i := range metadataWriters {
		m[key(i)] = "v"
	}
	return m
}

func checkMeta(t *testing.T, what string, got, want metadata.Metadata) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Errorf("%s: metadata = %v, want %v", what, got, want)
	}
}

func isNotFound(err error) bool {
	e, ok := apierr.As(err)
	return ok && e.Code == apierr.CodeResourceNotFound
}

// newSessionService is the session service over s, with no LiveKit: the metadata cases
// read and write records only.
func newSessionService(t *testing.T, s SessionStore) *session.Service {
	t.Helper()
	svc, err := session.New(s, session.NoRooms{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}
