package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// adminOnSQLite runs admin commands against a SQLite store in a folder of the test's own,
// each answer decoded: the data folder and the runner.
func adminOnSQLite(t *testing.T) (string, func(args ...string) (map[string]any, error)) {
	t.Helper()
	data := t.TempDir()
	t.Setenv("BRIDGELINE_DATA", data)
	t.Setenv("BRIDGELINE_STORE", "sqlite")
	return data, func(args ...string) (map[string]any, error) {
		var out bytes.Buffer
		err := adminTo(context.Background(), args, &out)
		var obj map[string]any
		json.Unmarshal(out.Bytes(), &obj)
		return obj, err
	}
}

// TestAdminAccountLimits: an operator gives an account its own limit of live sessions,
// which the store then holds creates to, and puts it back to the default.
func TestAdminAccountLimits(t *testing.T) {
	t.Setenv("MAX_CONCURRENT_SESSIONS", "")
	data, run := adminOnSQLite(t)
	ctx := context.Background()
	acct, err := run("account", "create", "--name", "Limits Co")
	if err != nil {
		t.Fatal(err)
	}
	id := acct["account_id"].(string)
	got, err := run("account", "limits", id)
	if err != nil || got["max_concurrent_sessions"] != 20.0 || got["own_limit"] != nil || got["live_sessions"] != 0.0 {
		t.Fatalf("account limits = %v, %v; want the default 20, no own limit, 0 live", got, err)
	}
	got, err = run("account", "limits", id, "--max-concurrent-sessions", "2")
	if err != nil || got["max_concurrent_sessions"] != 2.0 || got["own_limit"] != 2.0 {
		t.Fatalf("account limits --max-concurrent-sessions 2 = %v, %v", got, err)
	}
	for _, bad := range []string{"-1", "lots", "10001"} {
		if _, err := run("account", "limits", id, "--max-concurrent-sessions", bad); err == nil || !strings.Contains(err.Error(), "max-concurrent-sessions") {
			t.Errorf("--max-concurrent-sessions %s: err = %v, want a refusal naming the flag", bad, err)
		}
	}
	if _, err := run("account", "limits", "acct_01m813q4jpa7fqz94g6r8cb30d", "--max-concurrent-sessions", "2"); err == nil {
		t.Error("limits of an unknown account: no error")
	}

	// The store holds the account to its own limit of 2 (the service's default is 20).
	s, err := sqlite.Open(ctx, filepath.Join(data, "bridgeline.db"))
	if err != nil {
		t.Fatal(err)
	}
	created := 0
	for range 3 {
		now := time.Now().UTC()
		ses := session.Session{ID: ident.New("ses"), AccountID: id, Status: session.StatusRinging, CreatedAt: now, Slot: true}
		c := call.Call{ID: ident.New("call"), AccountID: id, SessionID: ses.ID, Status: call.StatusRinging, StartedAt: now}
		ses.CallID = c.ID
		switch err := s.CreateSession(ctx, ses, c, nil, 20); {
		case err == nil:
			created++
		case !errors.Is(err, session.ErrConcurrentLimit):
			t.Fatal(err)
		}
	}
	s.Close()
	if created != 2 {
		t.Errorf("3 creates at the account's own limit 2: %d created, want 2", created)
	}
	got, err = run("account", "limits", id, "--max-concurrent-sessions", "default")
	if err != nil || got["max_concurrent_sessions"] != 20.0 || got["own_limit"] != nil || got["live_sessions"] != 2.0 {
		t.Errorf("account limits --max-concurrent-sessions default = %v, %v; want 20, no own limit, 2 live", got, err)
	}
}

// TestAdminAccountOutboundPolicy: the operator sets an account's daily outbound minutes
// and its allowed destination countries (shared/destination), which the store keeps in
// the account, and puts them back to the defaults; bad values are refused naming the flag.
func TestAdminAccountOutboundPolicy(t *testing.T) {
	data, run := adminOnSQLite(t)
	ctx := context.Background()
	acct, err := run("account", "create", "--name", "Outbound Co")
	if err != nil {
		t.Fatal(err)
	}
	id := acct["account_id"].(string)
	got, err := run("account", "limits", id)
	if err != nil || got["daily_outbound_minutes"] != float64(session.DefaultDailyOutboundMinutes) ||
		got["own_daily_outbound_minutes"] != nil || got["allowed_destination_countries"] != nil {
		t.Fatalf("account limits = %v, %v; want the default cap and no countries of its own", got, err)
	}
	got, err = run("account", "limits", id, "--daily-outbound-minutes", "90", "--allowed-destination-countries", "us,GB")
	if err != nil || got["daily_outbound_minutes"] != 90.0 || got["own_daily_outbound_minutes"] != 90.0 {
		t.Fatalf("set the cap = %v, %v", got, err)
	}
	if cs, _ := got["allowed_destination_countries"].([]any); len(cs) != 2 || cs[0] != "GB" || cs[1] != "US" {
		t.Errorf("allowed_destination_countries = %v, want [GB US]", got["allowed_destination_countries"])
	}
	s, err := sqlite.Open(ctx, filepath.Join(data, "bridgeline.db"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.GetAccount(ctx, id)
	s.Close()
	if err != nil || a.DailyOutboundMinutes == nil || *a.DailyOutboundMinutes != 90 || strings.Join(a.AllowedDestinationCountries, ",") != "GB,US" {
		t.Fatalf("stored account = %+v, %v; want the cap 90 and GB,US", a.Outbound, err)
	}
	got, err = run("account", "limits", id, "--allowed-destination-countries", "none")
	if cs, ok := got["allowed_destination_countries"].([]any); err != nil || !ok || len(cs) != 0 {
		t.Errorf("--allowed-destination-countries none = %v, %v; want []", got, err)
	}
	got, err = run("account", "limits", id, "--daily-outbound-minutes", "default", "--allowed-destination-countries", "default")
	if err != nil || got["own_daily_outbound_minutes"] != nil || got["allowed_destination_countries"] != nil {
		t.Errorf("back to the defaults = %v, %v", got, err)
	}
	for flag, bad := range map[string]string{"--daily-outbound-minutes": "-5", "--allowed-destination-countries": "UK"} {
		if _, err := run("account", "limits", id, flag, bad); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(flag, "--")) {
			t.Errorf("%s %s: err = %v, want a refusal naming the flag", flag, bad, err)
		}
	}
}
