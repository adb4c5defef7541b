package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/platform/sip"
	"github.com/bridgeline/bridgeline/shared/siptrunk"
)

// SIPTrunkStore is what a store keeps for SIP trunks and the lines on them.
type SIPTrunkStore interface {
	Store
	siptrunk.Store
	siptrunk.LineStore
}

// RunSIPTrunks runs the SIP trunk cases, each against a fresh store from newStore.
func RunSIPTrunks(t *testing.T, newStore func(t *testing.T) SIPTrunkStore) {
	for name, c := range sipTrunkCases {
		t.Run(name, func(t *testing.T) { c(t, newStore(t)) })
	}
}

var sipTrunkCases = map[string]func(*testing.T, SIPTrunkStore){
	"create get list round trip":                        trunkRoundTrip,
	"update and delete are conditional":                 trunkConditional,
	"every trunk, paged by id, across accounts":         trunkAll,
	"a line and its trunk are written together":         trunkLineCreate,
	"a taken handle or a stale trunk writes nothing":    trunkLineCreateConflicts,
	"a deleted line frees its handle and its assistant": trunkLineDelete,
	"a stale line or trunk is not deleted":              trunkLineDeleteConflicts,
}

func newTrunk(accountID string) siptrunk.Trunk {
	now := time.Now().UTC().Truncate(time.Millisecond)
	return siptrunk.Trunk{ID: ident.New(siptrunk.IDPrefix), AccountID: accountID, Name: "Acme on Twilio",
		Inbound:  &siptrunk.Inbound{AllowedAddresses: []string{"54.172.60.0/30"}, Username: "acme", Password: "sealed:local:v1:abc"},
		Outbound: &siptrunk.Outbound{Address: "acme.pstn.twilio.com", Transport: "tls", Username: "acme", Password: "sealed:local:v1:def"},
		Revision: 1, CreatedAt: now, UpdatedAt: now}
}

func sipLine(accountID, trunkID, handle string) line.Line {
	now := time.Now().UTC().Truncate(time.Millisecond)
	return line.Line{ID: ident.New("line"), AccountID: accountID, Handle: handle, Platform: sip.Name, SIPTrunkID: trunkID,
		InboundMode: line.ModeAssistant, DecisionTimeoutSeconds: line.DefaultDecisionTimeout, OnDecisionTimeout: line.TimeoutDecline,
		Revision: 1, CreatedAt: now, UpdatedAt: now}
}

func trunkRoundTrip(t *testing.T, s SIPTrunkStore) {
	acct := ident.New("acct")
	a, b := newTrunk(acct), newTrunk(acct)
	for _, tr := range []siptrunk.Trunk{a, b} {
		if err := s.CreateTrunk(ctx(t), tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateTrunk(ctx(t), a); !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("CreateTrunk(same id) err = %v, want ErrConflict", err)
	}
	got, err := s.GetTrunk(ctx(t), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != a.Name || got.Inbound.Password != a.Inbound.Password || got.Outbound.Transport != "tls" || got.Revision != 1 {
		t.Errorf("GetTrunk = %+v, want %+v", got, a)
	}
	if _, err := s.GetTrunk(ctx(t), ident.New(siptrunk.IDPrefix)); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("GetTrunk(unknown) err = %v, want ErrNotFound", err)
	}
	list, err := s.ListTrunks(ctx(t), acct, listing.Query{Limit: 10})
	if err != nil || len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID {
		t.Errorf("ListTrunks = %v, %v; want b then a", trunkIDs(list), err)
	}
	if other, err := s.ListTrunks(ctx(t), ident.New("acct"), listing.Query{Limit: 10}); err != nil || len(other) != 0 {
		t.Errorf("ListTrunks(another account) = %v, %v; want none", trunkIDs(other), err)
	}
}

func trunkIDs(ts []siptrunk.Trunk) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func trunkConditional(t *testing.T, s SIPTrunkStore) {
	tr := newTrunk(ident.New("acct"))
	if err := s.CreateTrunk(ctx(t), tr); err != nil {
		t.Fatal(err)
	}
	tr.Name = "renamed"
	if err := s.UpdateTrunk(ctx(t), tr); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateTrunk(ctx(t), tr); !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("UpdateTrunk(stale revision) err = %v, want ErrConflict", err)
	}
	if err := s.DeleteTrunk(ctx(t), tr); !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("DeleteTrunk(stale revision) err = %v, want ErrConflict", err)
	}
	got, err := s.GetTrunk(ctx(t), tr.ID)
	if err != nil || got.Name != "renamed" || got.Revision != 2 {
		t.Fatalf("GetTrunk = %+v, %v; want renamed at revision 2", got, err)
	}
	if err := s.DeleteTrunk(ctx(t), got); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetTrunk(ctx(t), tr.ID); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("GetTrunk(deleted) err = %v, want ErrNotFound", err)
	}
}

func trunkAll(t *testing.T, s SIPTrunkStore) {
	var want []string
	for range 5 {
		tr := newTrunk(ident.New("acct"))
		if err := s.CreateTrunk(ctx(t), tr); err != nil {
			t.Fatal(err)
		}
		want = append(want, tr.ID)
	}
	var got []string
	after := ""
	for {
		page, err := s.AllTrunks(ctx(t), after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 2 {
			t.Fatalf("AllTrunks(limit 2) = %d trunks", len(page))
		}
		got = append(got, trunkIDs(page)...)
		if len(page) < 2 {
			break
		}
		after = page[len(page)-1].ID
	}
	if !slices.Equal(got, want) {
		t.Errorf("AllTrunks pages = %v, want %v in id order", got, want)
	}
}

// published makes an account's assistant with a published version.
func published(t *testing.T, s SIPTrunkStore, acct account.Account) assistant.Assistant {
	t.Helper()
	assistants, _ := services(s)
	a, err := assistants.Create(ctx(t), acct.ID, completeFields("Ada"))
	if err != nil {
		t.Fatal(err)
	}
	if a, err = assistants.Publish(ctx(t), acct.ID, a.ID); err != nil {
		t.Fatal(err)
	}
	return a
}

func trunkLineCreate(t *testing.T, s SIPTrunkStore) {
	acct, _ := newAccount(t, s)
	a := published(t, s, acct)
	tr := newTrunk(acct.ID)
	if err := s.CreateTrunk(ctx(t), tr); err != nil {
		t.Fatal(err)
	}
	l := sipLine(acct.ID, tr.ID, "+15550170001")
	l.AssistantID = a.ID
	tr.Numbers = []string{l.Handle}
	if err := s.CreateLineOnTrunk(ctx(t), l, &line.AssistantChange{To: a.ID, ToRevision: a.Revision}, tr); err != nil {
		t.Fatal(err)
	}
	got, err := s.LineByHandle(ctx(t), sip.Name, l.Handle)
	if err != nil || got.ID != l.ID || got.SIPTrunkID != tr.ID || got.AssistantID != a.ID {
		t.Errorf("LineByHandle = %+v, %v; want %s on %s", got, err, l.ID, tr.ID)
	}
	gt, err := s.GetTrunk(ctx(t), tr.ID)
	if err != nil || gt.Revision != 2 || !slices.Equal(gt.Numbers, []string{l.Handle}) {
		t.Errorf("trunk = %+v, %v; want revision 2 with %s", gt, err, l.Handle)
	}
	ga, err := s.GetAssistant(ctx(t), a.ID)
	if err != nil || ga.AssignedLines != 1 {
		t.Errorf("assistant assigned lines = %d, %v; want 1", ga.AssignedLines, err)
	}
}

func trunkLineCreateConflicts(t *testing.T, s SIPTrunkStore) {
	acct := ident.New("acct")
	tr := newTrunk(acct)
	if err := s.CreateTrunk(ctx(t), tr); err != nil {
		t.Fatal(err)
	}
	first := sipLine(acct, tr.ID, "+15550170002")
	next := tr
	next.Numbers = []string{first.Handle}
	if err := s.CreateLineOnTrunk(ctx(t), first, nil, next); err != nil {
		t.Fatal(err)
	}
	// The same number again, on the trunk as it now stands: the handle is taken.
	now, _ := s.GetTrunk(ctx(t), tr.ID)
	dup := sipLine(ident.New("acct"), tr.ID, first.Handle)
	now.Numbers = append(now.Numbers, dup.Handle)
	if err := s.CreateLineOnTrunk(ctx(t), dup, nil, now); !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("CreateLineOnTrunk(taken handle) err = %v, want ErrConflict", err)
	}
	// Another number on the trunk as it was read before the first line: stale.
	stale := sipLine(acct, tr.ID, "+15550170003")
	tr.Numbers = []string{stale.Handle}
	if err := s.CreateLineOnTrunk(ctx(t), stale, nil, tr); !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("CreateLineOnTrunk(stale trunk) err = %v, want ErrConflict", err)
	}
	if _, err := s.GetLine(ctx(t), stale.ID); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("the line of a refused write exists (%v)", err)
	}
	if _, err := s.LineByHandle(ctx(t), sip.Name, stale.Handle); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("the handle of a refused write is claimed (%v)", err)
	}
	got, _ := s.GetTrunk(ctx(t), tr.ID)
	if got.Revision != 2 || !slices.Equal(got.Numbers, []string{first.Handle}) {
		t.Errorf("trunk after the refused writes = %+v, want revision 2 with only %s", got, first.Handle)
	}
}

func trunkLineDelete(t *testing.T, s SIPTrunkStore) {
	acct, _ := newAccount(t, s)
	a := published(t, s, acct)
	tr := newTrunk(acct.ID)
	if err := s.CreateTrunk(ctx(t), tr); err != nil {
		t.Fatal(err)
	}
	l := sipLine(acct.ID, tr.ID, "+15550170004")
	l.AssistantID = a.ID
	tr.Numbers = []string{l.Handle}
	if err := s.CreateLineOnTrunk(ctx(t), l, &line.AssistantChange{To: a.ID, ToRevision: a.Revision}, tr); err != nil {
		t.Fatal(err)
	}
	tr, _ = s.GetTrunk(ctx(t), tr.ID)
	tr.Numbers = nil
	if err := s.DeleteLineFromTrunk(ctx(t), l, tr); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetLine(ctx(t), l.ID); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("GetLine(deleted) err = %v, want ErrNotFound", err)
	}
	if _, err := s.LineByHandle(ctx(t), sip.Name, l.Handle); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("LineByHandle(deleted) err = %v, want ErrNotFound", err)
	}
	if got, _ := s.GetTrunk(ctx(t), tr.ID); got.Revision != 3 || len(got.Numbers) != 0 {
		t.Errorf("trunk = %+v, want revision 3 with no numbers", got)
	}
	if ga, _ := s.GetAssistant(ctx(t), a.ID); ga.AssignedLines != 0 {
		t.Errorf("assistant assigned lines = %d, want 0", ga.AssignedLines)
	}
	// The number can be a line again.
	again := sipLine(acct.ID, tr.ID, l.Handle)
	tr, _ = s.GetTrunk(ctx(t), tr.ID)
	tr.Numbers = []string{again.Handle}
	if err := s.CreateLineOnTrunk(ctx(t), again, nil, tr); err != nil {
		t.Errorf("CreateLineOnTrunk(a freed number) = %v", err)
	}
}

func trunkLineDeleteConflicts(t *testing.T, s SIPTrunkStore) {
	acct := ident.New("acct")
	tr := newTrunk(acct)
	if err := s.CreateTrunk(ctx(t), tr); err != nil {
		t.Fatal(err)
	}
	l := sipLine(acct, tr.ID, "+15550170005")
	tr.Numbers = []string{l.Handle}
	if err := s.CreateLineOnTrunk(ctx(t), l, nil, tr); err != nil {
		t.Fatal(err)
	}
	// tr is at revision 1 as read here; the store holds 2.
	tr.Numbers = nil
	if err := s.DeleteLineFromTrunk(ctx(t), l, tr); !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("DeleteLineFromTrunk(stale trunk) err = %v, want ErrConflict", err)
	}
	stale := l
	stale.Revision = 7
	cur, _ := s.GetTrunk(ctx(t), tr.ID)
	cur.Numbers = nil
	if err := s.DeleteLineFromTrunk(ctx(t), stale, cur); !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("DeleteLineFromTrunk(stale line) err = %v, want ErrConflict", err)
	}
	if got, err := s.LineByHandle(ctx(t), sip.Name, l.Handle); err != nil || got.ID != l.ID {
		t.Errorf("the line after refused deletes: %+v, %v; want it kept", got, err)
	}
}
