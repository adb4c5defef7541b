package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestAdminKeyRevoke: an operator lists an account's keys and revokes one; the last key
// is refused.
func TestAdminKeyRevoke(t *testing.T) {
	t.Setenv("BRIDGELINE_DATA", t.TempDir())
	ctx := context.Background()
	run := func(args ...string) (map[string]any, []map[string]any, error) {
		var out bytes.Buffer
		err := adminTo(ctx, args, &out)
		var obj map[string]any
		var list []map[string]any
		if strings.HasPrefix(strings.TrimSpace(out.String()), "[") {
			json.Unmarshal(out.Bytes(), &list)
		} else {
			json.Unmarshal(out.Bytes(), &obj)
		}
		return obj, list, err
	}
	acct, _, err := run("account", "create", "--name", "Ops Co")
	if err != nil {
		t.Fatal(err)
	}
	id := acct["account_id"].(string)
	made, _, err := run("key", "create", "--account", id)
	if err != nil {
		t.Fatal(err)
	}
	_, keys, err := run("key", "list", "--account", id)
	if err != nil || len(keys) != 2 {
		t.Fatalf("key list = %v, %v; want 2 keys", keys, err)
	}
	text := made["api_key"].(string)
	for _, k := range keys {
		if k["key"] != nil || k["last4"] == nil {
			t.Errorf("listed key %v: want last4 and no key", k)
		}
	}
	newest := keys[1]["id"].(string)
	if keys[1]["last4"] != text[len(text)-4:] {
		t.Errorf("key list = %v, want the new key (ending %s) second", keys, text[len(text)-4:])
	}
	rev, _, err := run("key", "revoke", "--account", id, "--key", newest)
	if err != nil || rev["revoked_at"] == nil {
		t.Fatalf("key revoke = %v, %v", rev, err)
	}
	if _, _, err := run("key", "revoke", "--account", id, "--key", keys[0]["id"].(string)); err == nil || !strings.Contains(err.Error(), "last_api_key") {
		t.Errorf("revoking the last key: err = %v, want last_api_key", err)
	}
}
