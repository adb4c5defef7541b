package siptrunk_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/siptrunk"
)

// TestInboundCredentialsGenerated: an inbound side given without credentials gets its
// own, generated: a username and a 32-character password, shown once (NewPassword on the
// write that made them, never on a read), sealed at rest, and given to LiveKit's inbound
// trunk, which challenges every INVITE for them. Two trunks on the same provider range
// never share them; updates that leave them out keep them.
func TestInboundCredentialsGenerated(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	shared := []string{"54.172.60.0/30"} // a provider's range every customer of it allows
	newTrunk := func() siptrunk.Trunk {
		t.Helper()
		tr, err := r.svc.Create(ctx, r.acct, siptrunk.Input{Inbound: &siptrunk.InboundInput{AllowedAddresses: shared}})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	a, b := newTrunk(), newTrunk()
	for _, tr := range []siptrunk.Trunk{a, b} {
		in := tr.Inbound
		if !strings.HasPrefix(in.Username, "bl") || len(in.Username) != 2+siptrunk.GeneratedUsernameLen {
			t.Errorf("generated username %q, want bl and %d characters", in.Username, siptrunk.GeneratedUsernameLen)
		}
		if len(in.NewPassword) != siptrunk.GeneratedPasswordLen || strings.Trim(in.NewPassword, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") != "" {
			t.Errorf("generated password %q, want %d letters and digits", in.NewPassword, siptrunk.GeneratedPasswordLen)
		}
		if in.Password == "" || in.Password == in.NewPassword {
			t.Errorf("stored password %q, want it sealed", in.Password)
		}
	}
	if a.Inbound.Username == b.Inbound.Username || a.Inbound.NewPassword == b.Inbound.NewPassword {
		t.Errorf("two trunks share credentials: %s/%s and %s/%s", a.Inbound.Username, a.Inbound.NewPassword, b.Inbound.Username, b.Inbound.NewPassword)
	}
	got, err := r.svc.Get(ctx, r.acct, a.ID)
	if err != nil || got.Inbound.NewPassword != "" || got.Inbound.Username != a.Inbound.Username {
		t.Errorf("Get = %+v, %v; want the username and no password in clear", got.Inbound, err)
	}

	// LiveKit's inbound trunk (made with the first line) carries the credentials.
	mustLine(t, r, a, "+15550100041")
	in, _, _ := r.lk.of(a.ID)
	if len(in) != 1 || in[0].AuthUsername != a.Inbound.Username || in[0].AuthPassword != a.Inbound.NewPassword {
		t.Fatalf("LiveKit's inbound trunk %+v, want %s with the generated password", in, a.Inbound.Username)
	}

	// Updates that leave the credentials out keep them and show no password.
	up, err := r.svc.Update(ctx, r.acct, a.ID, siptrunk.Input{Inbound: &siptrunk.InboundInput{AllowedAddresses: []string{"54.172.60.4/30"}}})
	if err != nil {
		t.Fatal(err)
	}
	if up.Inbound.Username != a.Inbound.Username || up.Inbound.Password != a.Inbound.Password || up.Inbound.NewPassword != "" {
		t.Errorf("update without credentials: %+v, want the stored ones kept and none shown", up.Inbound)
	}
	if in, _, _ := r.lk.of(a.ID); len(in) != 1 || in[0].AuthPassword != a.Inbound.NewPassword {
		t.Errorf("LiveKit's inbound trunk after the update %+v, want the same password", in)
	}

	// A password the customer sets is at least MinInboundPasswordLen, reaches LiveKit, and
	// is not shown back.
	own := strings.Repeat("k", siptrunk.MinInboundPasswordLen)
	up, err = r.svc.Update(ctx, r.acct, a.ID, siptrunk.Input{Inbound: &siptrunk.InboundInput{Password: &own}})
	if err != nil {
		t.Fatal(err)
	}
	if up.Inbound.NewPassword != "" || up.Inbound.Username != a.Inbound.Username || len(up.Inbound.AllowedAddresses) != 0 {
		t.Errorf("update with a password: %+v, want the username kept, no password shown, no address filter", up.Inbound)
	}
	if in, _, _ := r.lk.of(a.ID); len(in) != 1 || in[0].AuthPassword != own || in[0].AuthUsername != a.Inbound.Username {
		t.Errorf("LiveKit's inbound trunk after the new password %+v", in)
	}
	// A new username without a password gets a new generated password, shown once.
	up, err = r.svc.Update(ctx, r.acct, a.ID, siptrunk.Input{Inbound: &siptrunk.InboundInput{Username: "acme-in"}})
	if err != nil {
		t.Fatal(err)
	}
	if up.Inbound.Username != "acme-in" || len(up.Inbound.NewPassword) != siptrunk.GeneratedPasswordLen || up.Inbound.NewPassword == own {
		t.Errorf("update with a new username: %+v, want a fresh generated password", up.Inbound)
	}
}

// TestTrunkWithoutCredentialsTakesNoCalls: a trunk stored before inbound credentials were
// required (allowed addresses only) gets no inbound trunk in LiveKit: its numbers take
// no calls, rather than calls from anyone in a provider's shared range. Giving it
// credentials brings them back.
func TestTrunkWithoutCredentialsTakesNoCalls(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	old := siptrunk.Trunk{ID: ident.New(siptrunk.IDPrefix), AccountID: r.acct, Revision: 1, CreatedAt: now, UpdatedAt: now,
		Inbound: &siptrunk.Inbound{AllowedAddresses: []string{"54.172.60.0/30"}}}
	if err := r.db.CreateTrunk(ctx, old); err != nil {
		t.Fatal(err)
	}
	mustLine(t, r, old, "+15550100042")
	if in, _, rules := r.lk.of(old.ID); len(in) != 0 || len(rules) != 0 {
		t.Fatalf("LiveKit holds %+v and rules %+v for a trunk without credentials, want nothing", in, rules)
	}
	up, err := r.svc.Update(ctx, r.acct, old.ID, siptrunk.Input{Inbound: &siptrunk.InboundInput{AllowedAddresses: []string{"54.172.60.0/30"}}})
	if err != nil {
		t.Fatal(err)
	}
	if up.Inbound.NewPassword == "" {
		t.Fatalf("the update gave the trunk no credentials: %+v", up.Inbound)
	}
	checkInStep(t, r.lk, up, true, false, "+15550100042")
	if in, _, _ := r.lk.of(old.ID); len(in) != 1 || in[0].AuthUsername != up.Inbound.Username || in[0].AuthPassword != up.Inbound.NewPassword {
		t.Errorf("LiveKit's inbound trunk %+v, want the new credentials", in)
	}
}
