package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/platform/sip"
	"github.com/bridgeline/bridgeline/shared/siptrunk"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// TestAdminLineRelease: a number another account claimed first (finding 2 of issue 30)
// refuses its owner's claim with 409 handle_taken naming the operator's remedy; `admin
// line release` deletes the squatting line, after which the owner's claim succeeds and
// the squatter's is refused. A number no SIP line holds is a clear error.
func TestAdminLineRelease(t *testing.T) {
	data, run := adminOnSQLite(t)
	ctx := context.Background()
	accountOf := func(name string) string {
		t.Helper()
		a, err := run("account", "create", "--name", name, "--live")
		if err != nil {
			t.Fatal(err)
		}
		return a["account_id"].(string)
	}
	squatter, owner := accountOf("Squatter"), accountOf("Owner")
	st, err := sqlite.Open(ctx, filepath.Join(data, "bridgeline.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The API's rules, with no LiveKit (nothing here routes calls).
	svc := &siptrunk.Service{Store: st, Lines: st, LineRules: &line.Service{Store: st, Assistants: st, Now: time.Now},
		Calls: st, Now: time.Now}
	trunk := func(acct string) siptrunk.Trunk {
		t.Helper()
		name := "provider"
		tr, err := svc.Create(ctx, acct, siptrunk.Input{Name: &name,
			Inbound: &siptrunk.InboundInput{AllowedAddresses: []string{"54.172.60.0/30"}}})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	const number = "+18005550199"
	claim := func(acct string, tr siptrunk.Trunk) (line.Line, error) {
		return svc.CreateLine(ctx, acct, siptrunk.LineInput{Platform: sip.Name, Handle: number, TrunkID: tr.ID})
	}
	sqTrunk, ownTrunk := trunk(squatter), trunk(owner)
	squatted, err := claim(squatter, sqTrunk)
	if err != nil {
		t.Fatal(err)
	}
	_, err = claim(owner, ownTrunk)
	if ae, ok := apierr.As(err); !ok || ae.Code != apierr.CodeHandleTaken || !strings.Contains(ae.Message, "admin line release") {
		t.Fatalf("the owner's claim of the squatted number = %v, want handle_taken naming the operator's release", err)
	}

	got, err := run("line", "release", "--handle", number)
	if err != nil || got["released_line_id"] != squatted.ID || got["account_id"] != squatter {
		t.Fatalf("admin line release = %v, %v; want the squatter's line %s", got, err, squatted.ID)
	}
	if _, err := st.GetLine(ctx, squatted.ID); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("the squatter's line after the release: %v, want it gone", err)
	}
	if tr, err := st.GetTrunk(ctx, sqTrunk.ID); err != nil || len(tr.Numbers) != 0 {
		t.Errorf("the squatter's trunk after the release: numbers %v (%v), want none", tr.Numbers, err)
	}
	mine, err := claim(owner, ownTrunk)
	if err != nil || mine.AccountID != owner {
		t.Fatalf("the owner's claim after the release = %+v, %v", mine, err)
	}
	if _, err := claim(squatter, sqTrunk); err == nil {
		t.Error("the squatter's claim of the owner's number: nil error, want handle_taken")
	}
	if _, err := run("line", "release", "--handle", "+18005550100"); err == nil || !strings.Contains(err.Error(), "no SIP line holds") {
		t.Errorf("admin line release of a number no line holds = %v, want a clear error", err)
	}
}
