package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
)

var accountCases = map[string]func(*testing.T, Store){
	"key hash finds its account": func(t *testing.T, s Store) {
		a, key := newAccount(t, s)
		got, err := s.AccountByKeyHash(ctx(t), account.HashKey(key))
		if err != nil || got.ID != a.ID {
			t.Fatalf("AccountByKeyHash = %v, %v; want %s", got.ID, err, a.ID)
		}
		if _, err := s.AccountByKeyHash(ctx(t), account.HashKey(key+"x")); !errors.Is(err, apierr.ErrNotFound) {
			t.Errorf("AccountByKeyHash(other) err = %v, want ErrNotFound", err)
		}
	},
	"a second key works and a taken hash conflicts": func(t *testing.T, s Store) {
		a, key := newAccount(t, s)
		text, k, err := account.NewKey(a.ID, true, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddKey(ctx(t), k); err != nil {
			t.Fatalf("AddKey: %v", err)
		}
		if got, err := s.AccountByKeyHash(ctx(t), account.HashKey(text)); err != nil || got.ID != a.ID {
			t.Errorf("AccountByKeyHash(second) = %v, %v", got.ID, err)
		}
		dup := account.KeyFromText(a.ID, key, time.Now())
		if err := s.AddKey(ctx(t), dup); !errors.Is(err, apierr.ErrConflict) {
			t.Errorf("AddKey(taken hash) err = %v, want ErrConflict", err)
		}
	},
	"unknown account is not found": func(t *testing.T, s Store) {
		if _, err := s.GetAccount(ctx(t), "acct_nope"); !errors.Is(err, apierr.ErrNotFound) {
			t.Errorf("GetAccount err = %v, want ErrNotFound", err)
		}
	},
}
