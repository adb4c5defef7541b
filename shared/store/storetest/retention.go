package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/erasure"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// RetentionStore is what an account's call retention needs of a store: the accounts
// and their setting, and the calls the retention job reads and redacts.
type RetentionStore interface {
	account.Store
	erasure.Store
	erasure.RetentionStore
	SetCallRetention(ctx context.Context, accountID string, days *int) (account.Account, error)
}

// RunRetention runs the call retention cases, each against a fresh store.
func RunRetention(t *testing.T, newStore func(t *testing.T) RetentionStore) {
	for name, c := range retentionCases {
		t.Run(name, func(t *testing.T) { c(t, newStore(t)) })
	}
}

var retentionCases = map[string]func(*testing.T, RetentionStore){
	"the setting lists the account, and off takes it out": retentionSetting,
	"retain redacts the account's ended calls only":       retentionRedacts,
}

// retentionAccount makes an account, with its key.
func retentionAccount(t *testing.T, s RetentionStore, name string) account.Account {
	t.Helper()
	a, _, err := (&account.Service{Store: s, Now: time.Now}).Create(ctx(t), name, false)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// listed reports whether AccountsWithRetention lists id, with days. The DynamoDB store
// reads an eventually consistent index: the check waits for it a little.
func listed(t *testing.T, s RetentionStore, id string, days *int) bool {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		accts, err := s.AccountsWithRetention(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, a := range accts {
			if a.ID == id {
				found = days != nil && a.CallRetentionDays != nil && *a.CallRetentionDays == *days
			}
		}
		if found == (days != nil) || time.Now().After(deadline) {
			return found
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func retentionSetting(t *testing.T, s RetentionStore) {
	a, other := retentionAccount(t, s, "Retention Co"), retentionAccount(t, s, "Keeps Everything")
	if listed(t, s, a.ID, nil) {
		t.Fatal("an account without retention is listed")
	}
	days := 30
	got, err := s.SetCallRetention(ctx(t), a.ID, &days)
	if err != nil || got.CallRetentionDays == nil || *got.CallRetentionDays != 30 {
		t.Fatalf("SetCallRetention(30) = %+v, %v", got, err)
	}
	if read, err := s.GetAccount(ctx(t), a.ID); err != nil || read.CallRetentionDays == nil || *read.CallRetentionDays != 30 || read.Name != "Retention Co" {
		t.Fatalf("account after SetCallRetention = %+v, %v; want 30 days and the rest kept", read, err)
	}
	if !listed(t, s, a.ID, &days) {
		t.Fatal("AccountsWithRetention does not list the account with 30 days")
	}
	if listed(t, s, other.ID, nil) {
		t.Error("AccountsWithRetention lists an account without retention")
	}
	mark := time.Now().UTC().Truncate(time.Millisecond)
	if err := s.SetRetainedThrough(ctx(t), a.ID, mark); err != nil {
		t.Fatal(err)
	}
	if read, _ := s.GetAccount(ctx(t), a.ID); read.RetainedThrough == nil || !read.RetainedThrough.Equal(mark) || read.CallRetentionDays == nil {
		t.Errorf("account after SetRetainedThrough = %+v, want the mark and the setting", read)
	}
	if _, err := s.SetCallRetention(ctx(t), a.ID, nil); err != nil {
		t.Fatal(err)
	}
	if listed(t, s, a.ID, nil) {
		t.Error("AccountsWithRetention lists the account after retention was turned off")
	}
	if _, err := s.SetCallRetention(ctx(t), "acct_none", &days); err == nil {
		t.Error("SetCallRetention of no account = nil error")
	}
}

func retentionRedacts(t *testing.T, s RetentionStore) {
	a, other := retentionAccount(t, s, "Retention Co"), retentionAccount(t, s, "Keeps Everything")
	save := func(accountID, status string) call.Call {
		t.Helper()
		at := time.Now().UTC().Truncate(time.Millisecond)
		c := call.Call{ID: ident.New("call"), AccountID: accountID, Direction: call.Inbound, LineID: "line_1",
			From: "+15550100009", To: "+15550100001", Media: "audio", Status: status, HandledBy: call.HandledByAssistant,
			Platform: "sim", StartedAt: at, AnsweredAt: &at, Transcript: []persona.Turn{{Speaker: "caller", Text: "hi"}}}
		if status == call.StatusEnded {
			c.EndedAt = &at
		}
		if err := s.SaveCall(ctx(t), c, nil); err != nil {
			t.Fatal(err)
		}
		return c
	}
	ended, live, others := save(a.ID, call.StatusEnded), save(a.ID, call.StatusActive), save(other.ID, call.StatusEnded)
	time.Sleep(5 * time.Millisecond) // the calls are older than a retention of 0 days
	zero := 0
	if _, err := s.SetCallRetention(ctx(t), a.ID, &zero); err != nil {
		t.Fatal(err)
	}
	if !listed(t, s, a.ID, &zero) {
		t.Fatal("AccountsWithRetention does not list the account with 0 days")
	}
	svc := erasure.Service{Store: s, Files: &deletedFiles{}}
	if n, err := svc.Retain(ctx(t), s); err != nil || n != 1 {
		t.Fatalf("Retain = %d, %v; want the one ended call redacted", n, err)
	}
	if c, err := s.GetCall(ctx(t), ended.ID); err != nil || !c.Redacted() || c.From != "" || c.Transcript != nil {
		t.Errorf("ended call after Retain = %+v (%v), want redacted", c, err)
	}
	for _, c := range []call.Call{live, others} {
		if got, err := s.GetCall(ctx(t), c.ID); err != nil || got.Redacted() || got.From == "" {
			t.Errorf("call %s (%s) after Retain = %+v (%v), want it whole", c.ID, c.Status, got, err)
		}
	}
	if read, _ := s.GetAccount(ctx(t), a.ID); read.RetainedThrough == nil {
		t.Error("account after Retain: no retained_through mark")
	}
	if n, err := svc.Retain(ctx(t), s); err != nil || n != 0 {
		t.Errorf("Retain again = %d, %v; want nothing new", n, err)
	}
}
