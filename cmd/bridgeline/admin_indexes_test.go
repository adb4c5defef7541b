package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

// TestAdminIndexesBackfillOnSQLite: the backfill is DynamoDB's (tested beside the store);
// on SQLite, whose filter columns are computed from each row, it reports nothing done.
func TestAdminIndexesBackfillOnSQLite(t *testing.T) {
	t.Setenv("BRIDGELINE_DATA", t.TempDir())
	t.Setenv("BRIDGELINE_STORE", "")
	var out bytes.Buffer
	if err := adminTo(context.Background(), []string{"indexes", "backfill", "--store", "sqlite"}, &out); err != nil {
		t.Fatalf("admin indexes backfill: %v", err)
	}
	var got struct {
		Updated *int `json:"updated"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Updated == nil || *got.Updated != 0 {
		t.Errorf("admin indexes backfill = %s (%v), want updated 0", out.Bytes(), err)
	}
}
