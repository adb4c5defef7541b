// Package storetest is the one conformance suite every store implementation passes:
// `storetest.Run(t, newStore)` runs the same cases against SQLite and DynamoDB. Each case
// states a rule the services rely on (conditional writes, version numbering, idempotency
// records, pagination order).
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/idempotency"
	"github.com/bridgeline/bridgeline/shared/line"
)

// Store is what the core cases need of a store (store.Store embeds it all).
type Store interface {
	account.Store
	assistant.Store
	line.Store
	idempotency.Store
}

// Run runs every case, each against a fresh store from newStore.
func Run(t *testing.T, newStore func(t *testing.T) Store) {
	groups := []struct {
		name  string
		cases map[string]func(*testing.T, Store)
	}{
		{"accounts", accountCases},
		{"assistants", assistantCases},
		{"lines", lineCases},
		{"pins", pinCases},
		{"idempotency", idempotencyCases},
		{"metadata", metadataCases},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for name, c := range g.cases {
				t.Run(name, func(t *testing.T) { c(t, newStore(t)) })
			}
		})
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func newAccount(t *testing.T, s Store) (account.Account, string) {
	t.Helper()
	svc := account.Service{Store: s, Now: time.Now}
	a, key, err := svc.Create(ctx(t), "Test Co", false)
	if err != nil {
		t.Fatalf("create account: %v", err)
	}
	return a, key
}

func ptr[T any](v T) *T { return &v }
