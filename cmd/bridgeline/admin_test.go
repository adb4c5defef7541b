package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/config"
	"github.com/bridgeline/bridgeline/shared/store/dynamo"
	"github.com/bridgeline/bridgeline/shared/store/dynamo/dynamolocal"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// TestAdminUsesTheRunningStacksStore: beside a stack on DynamoDB Local (as `make
// run-dynamodb` runs it), `bridgeline admin account create` with no store chosen writes
// the account to that DynamoDB, not to a SQLite file; once the stack is gone, admin is
// back on SQLite.
func TestAdminUsesTheRunningStacksStore(t *testing.T) {
	if testing.Short() {
		t.Skip("starts DynamoDB Local")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	lk, err := dynamolocal.Start(ctx)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("DynamoDB Local is required in CI: %v", err)
		}
		t.Skipf("no DynamoDB Local: %v", err)
	}
	defer lk.Stop()

	data := filepath.Join(t.TempDir(), "data")
	t.Setenv("BRIDGELINE_DATA", data)
	t.Setenv("BRIDGELINE_STORE", "")
	t.Setenv("DYNAMODB_ENDPOINT", "")
	for _, tb := range dynamo.AllTables {
		t.Setenv(tb.EnvVar(), "")
	}
	// The running stack: this process stands in for `bridgeline dev --store dynamodb`.
	cfg, err := config.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.DynamoDBEndpoint = "dynamodb", lk.URL
	remove, err := writeStackState(cfg)
	if err != nil {
		t.Fatal(err)
	}

	created := func() string {
		t.Helper()
		var out bytes.Buffer
		if err := adminTo(ctx, []string{"account", "create", "--name", "Acme"}, &out); err != nil {
			t.Fatalf("admin account create: %v", err)
		}
		var got struct {
			AccountID string `json:"account_id"`
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.AccountID == "" {
			t.Fatalf("admin account create printed %q (%v)", out.String(), err)
		}
		return got.AccountID
	}
	id := created()
	ds, err := dynamo.Open(ctx, dynamo.Config{Tables: dynamo.TablesWithPrefix("bridgeline-"), Endpoint: lk.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ds.GetAccount(ctx, id); err != nil {
		t.Errorf("account %s is not in the stack's DynamoDB: %v", id, err)
	}
	if _, err := os.Stat(filepath.Join(data, "bridgeline.db")); err == nil {
		t.Errorf("admin made a SQLite file beside a DynamoDB stack")
	}
	// The account's call retention is kept on DynamoDB too (it used to be refused there),
	// where the retention job finds it.
	var out bytes.Buffer
	if err := adminTo(ctx, []string{"account", "retention", id, "--days", "7"}, &out); err != nil {
		t.Fatalf("admin account retention on DynamoDB: %v", err)
	}
	if a, err := ds.GetAccount(ctx, id); err != nil || a.CallRetentionDays == nil || *a.CallRetentionDays != 7 {
		t.Errorf("account after admin account retention --days 7 = %+v, %v; want 7 days", a, err)
	}
	if accts, err := ds.AccountsWithRetention(ctx); err != nil || len(accts) != 1 || accts[0].ID != id {
		t.Errorf("AccountsWithRetention = %+v, %v; want the account", accts, err)
	}

	// A stack that is gone (killed: its file stays, its process does not) is not adopted.
	remove()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(stackState{PID: gone.Process.Pid, Store: "dynamodb", DynamoDBEndpoint: lk.URL})
	if err := os.WriteFile(stackStatePath(data), b, 0o600); err != nil {
		t.Fatal(err)
	}
	id = created()
	ss, err := sqlite.Open(ctx, filepath.Join(data, "bridgeline.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	if _, err := ss.GetAccount(ctx, id); err != nil {
		t.Errorf("with no stack running, account %s is not in SQLite: %v", id, err)
	}
}
