package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/config"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
)

// admin runs operator commands against the same store the stack uses; they work while
// the stack runs (SQLite in WAL mode takes one writer at a time). Unless BRIDGELINE_STORE
// or --store chooses, the store is the running stack's (stack.go): beside `make
// run-dynamodb` that is its DynamoDB Local.
func admin(ctx context.Context, args []string) error {
	return adminTo(ctx, args, os.Stdout)
}

func adminTo(ctx context.Context, args []string, out io.Writer) error {
	if len(args) < 2 {
		return fmt.Errorf("admin: want `account create`, `account limits`, `key create`, `key list`, `key revoke`, `line add`, `events replay` or `indexes backfill`")
	}
	if args[0] == "events" && args[1] == "replay" {
		return eventsReplay(ctx, args[2:], out) // AWS queues, no store
	}
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("admin "+args[0]+" "+args[1], flag.ContinueOnError)
	storeName := fs.String("store", cfg.Store, "sqlite or dynamodb")
	name := fs.String("name", "", "name")
	acct := fs.String("account", "", "account id (acct_...)")
	handle := fs.String("handle", "", "line handle, e.g. +15550100003")
	platform := fs.String("platform", sim.Name, "calling platform of the line")
	live := fs.Bool("live", false, "make an sk_live_ key instead of sk_test_")
	keyID := fs.String("key", "", "API key id (key_...)")
	maxSessions := fs.String("max-concurrent-sessions", "", "the account's own limit of live sessions (0-10000), or default")
	flags := args[2:]
	if len(flags) > 0 && !strings.HasPrefix(flags[0], "-") {
		*acct, flags = flags[0], flags[1:] // `account limits <account> --flag ...`
	}
	if err := fs.Parse(flags); err != nil {
		return err
	}
	cfg.Store = *storeName
	storeChosen := os.Getenv("BRIDGELINE_STORE") != ""
	fs.Visit(func(f *flag.Flag) { storeChosen = storeChosen || f.Name == "store" })
	adopted, err := adoptRunningStack(&cfg, storeChosen)
	if err != nil {
		return err
	}
	if adopted != "" {
		fmt.Fprintln(os.Stderr, "bridgeline admin: using", adopted)
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	s, closeStore, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	switch args[0] + " " + args[1] {
	case "account create":
		if *name == "" {
			return fmt.Errorf("admin account create: --name is required")
		}
		svc := account.Service{Store: s, Now: time.Now}
		a, key, err := svc.Create(ctx, *name, *live)
		if err != nil {
			return err
		}
		return enc.Encode(map[string]string{"account_id": a.ID, "api_key": key})
	case "key create":
		if _, err := s.GetAccount(ctx, *acct); err != nil {
			return fmt.Errorf("admin key create: account %q: %w", *acct, err)
		}
		text, k, err := account.NewKey(*acct, *live, time.Now().UTC())
		if err != nil {
			return err
		}
		if err := s.AddKey(ctx, k); err != nil {
			return err
		}
		return enc.Encode(map[string]string{"account_id": *acct, "api_key": text})
	case "key list":
		keys, err := s.ListKeys(ctx, *acct)
		if err != nil {
			return fmt.Errorf("admin key list: %w", err)
		}
		out := make([]httpapi.KeyJSON, 0, len(keys))
		for _, k := range keys {
			out = append(out, httpapi.PresentKey(k))
		}
		return enc.Encode(out)
	case "key revoke":
		// The same store call as DELETE /v1/api_keys/{id}: idempotent, never the last key.
		if *acct == "" || *keyID == "" {
			return fmt.Errorf("admin key revoke: --account and --key are required")
		}
		k, err := s.RevokeKey(ctx, *acct, *keyID, time.Now())
		if err != nil {
			return fmt.Errorf("admin key revoke: %w", err)
		}
		return enc.Encode(map[string]any{"account_id": k.AccountID, "key_id": k.ID, "revoked_at": k.RevokedAt})
	case "account limits":
		return accountLimits(ctx, s, cfg, *acct, *maxSessions, enc)
	case "line add":
		if *acct == "" || *handle == "" {
			return fmt.Errorf("admin line add: --account and --handle are required")
		}
		if _, err := s.GetAccount(ctx, *acct); errors.Is(err, apierr.ErrNotFound) {
			return fmt.Errorf("admin line add: no account %q", *acct)
		} else if err != nil {
			return err
		}
		svc := line.Service{Store: s, Assistants: s, Now: time.Now}
		l, err := svc.Provision(ctx, *acct, *platform, *handle, *name)
		if err != nil {
			return err
		}
		return enc.Encode(map[string]string{"line_id": l.ID, "account_id": l.AccountID, "platform": l.Platform, "handle": l.Handle})
	case "indexes backfill":
		return indexesBackfill(ctx, s, enc)
	}
	return fmt.Errorf("admin: unknown command %q", args[0]+" "+args[1])
}

// indexesBackfill gives records written before the list filter indexes their keys
// (DynamoDB; SQLite's filter columns are computed from each row, so it has nothing to do).
func indexesBackfill(ctx context.Context, s any, enc *json.Encoder) error {
	b, ok := s.(interface {
		BackfillListKeys(ctx context.Context) (int, error)
	})
	if !ok {
		return enc.Encode(map[string]any{"updated": 0, "note": "nothing to backfill on this store"})
	}
	n, err := b.BackfillListKeys(ctx)
	if err != nil {
		return fmt.Errorf("admin indexes backfill: %w", err)
	}
	return enc.Encode(map[string]any{"updated": n})
}
