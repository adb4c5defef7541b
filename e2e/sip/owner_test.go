package sip_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/e2e/sipphone"
	"github.com/bridgeline/bridgeline/shared/account"
)

// TestSquattedNumberTakesNoOneElsesCalls is finding 2 of the security review: an account
// claims a number it does not own on a trunk whose allowed addresses are the provider's
// shared range (here 127.0.0.1, where every phone of the test calls from). Its trunk's
// inbound credentials are its own, generated at create: a call the number's owner's
// provider sends, with the owner's trunk's credentials, is refused by the bridge's
// challenge and never reaches the squatter's line; a phone with no credentials neither.
// Only a call authenticated as the squatter's own trunk reaches its line (the control
// that the number is routed there at all). The owner's claim of the number is refused
// while the squatter holds it (LiveKit routes a number to one trunk): docs/security.md,
// "Whose number it is".
func TestSquattedNumberTakesNoOneElsesCalls(t *testing.T) {
	r := theRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const number = "+18005550199"

	type tenant struct{ key string }
	newTenant := func() tenant {
		ten := r.st.Tenant(t)
		live, _, err := (&account.Service{Store: r.st.Store, Now: time.Now}).AddKey(ctx, ten.AccountID, true)
		if err != nil {
			t.Fatal(err)
		}
		return tenant{key: live}
	}
	do := func(who tenant, method, path string, body, out any) int {
		t.Helper()
		status, raw, err := r.st.Request(method, path, body, who.key)
		if err != nil {
			t.Fatal(err)
		}
		if out != nil && status < 300 {
			if err := json.Unmarshal(raw, out); err != nil {
				t.Fatalf("%s %s: %v: %s", method, path, err, raw)
			}
		}
		if status >= 300 {
			t.Logf("%s %s: %d %s", method, path, status, raw)
		}
		return status
	}
	shared := map[string]any{"allowed_addresses": []string{"127.0.0.1"}} // the provider's range, no credentials given
	trunkOf := func(who tenant) trunkObj {
		t.Helper()
		var tr trunkObj
		harness.Must(t, do(who, http.MethodPost, "/v1/sip_trunks", map[string]any{"name": "provider", "inbound": shared}, &tr),
			http.StatusCreated, "create trunk")
		if tr.Inbound == nil || tr.Inbound.Username == "" || len(tr.Inbound.Password) < 24 {
			t.Fatalf("trunk %s has no generated inbound credentials: %+v", tr.ID, tr.Inbound)
		}
		return tr
	}
	squatter, owner := newTenant(), newTenant()
	sq := trunkOf(squatter)
	var squatted lineObj
	harness.Must(t, do(squatter, http.MethodPost, "/v1/lines", map[string]any{"platform": "sip", "handle": number,
		"sip_trunk_id": sq.ID, "inbound_mode": "disabled"}, &squatted), http.StatusCreated, "squat the number")
	t.Cleanup(func() {
		harness.WaitFor(t, 30*time.Second, "the squatted line deleted", func() bool {
			status := do(squatter, http.MethodDelete, "/v1/lines/"+squatted.ID, nil, nil)
			return status == http.StatusOK || status == http.StatusNotFound
		})
	})
	own := trunkOf(owner)
	if status := do(owner, http.MethodPost, "/v1/lines", map[string]any{"platform": "sip", "handle": number,
		"sip_trunk_id": own.ID}, nil); status != http.StatusConflict {
		t.Errorf("the owner's claim of the squatted number = %d, want 409 handle_taken", status)
	}
	calls := func() int {
		t.Helper()
		var list struct {
			Data []recordObj `json:"data"`
		}
		harness.Must(t, do(squatter, http.MethodGet, "/v1/calls?line_id="+squatted.ID, nil, &list), http.StatusOK, "list calls")
		return len(list.Data)
	}
	refused := func(t *testing.T, cfg sipphone.Config) {
		t.Helper()
		phone := r.phone(t, cfg)
		c, err := phone.Dial(ctx, r.dialURI(number))
		if err != nil {
			t.Fatal(err)
		}
		ev, err := c.Next(ctx, "CALL_CLOSED", "CALL_ESTABLISHED")
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != "CALL_CLOSED" || ev.Status() == 486 {
			t.Errorf("the phone saw %s %q, want the call refused by the bridge's challenge (401/407), not by the line", ev.Type, ev.Param)
		}
		time.Sleep(2 * time.Second) // a call that got through would be recorded by now
		if n := calls(); n != 0 {
			t.Errorf("the squatter's line has %d call(s), want none", n)
		}
	}

	t.Run("the owner's provider", func(t *testing.T) {
		refused(t, sipphone.Config{Number: "+15559990061", AuthUser: own.Inbound.Username, AuthPassword: own.Inbound.Password})
	})
	t.Run("no credentials", func(t *testing.T) {
		refused(t, sipphone.Config{Number: "+15559990062", AuthUser: noAuth})
	})
	t.Run("the squatter's own credentials", func(t *testing.T) {
		phone := r.phone(t, sipphone.Config{Number: "+15559990063", AuthUser: sq.Inbound.Username, AuthPassword: sq.Inbound.Password})
		refusedAtPhone(ctx, t, phone, r.dialURI(number), nil) // the disabled line's 486
		if n := calls(); n != 1 {
			t.Errorf("the squatter's line has %d call(s), want its own one", n)
		}
	})
}
