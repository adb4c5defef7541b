package httpapi_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
)

// TestContractAPIKeys: keys are made (shown once), listed without their text, revoked
// at once (the next request with the key is 401: "seconds until 401" is 0 on the local
// stack), revoked idempotently, and an account never loses its last key.
func TestContractAPIKeys(t *testing.T) {
	c := newContract(t, nil)
	made := c.do(call{method: "POST", path: "/v1/api_keys", body: `{}`, status: 201, valid: true})
	text, id := made.str("key"), made.str("id")
	if !strings.HasPrefix(text, "sk_test_") || made.str("mode") != "test" || made.str("last4") != text[len(text)-4:] || made.str("prefix") != text[:12] {
		t.Fatalf("created key = %s, want an sk_test_ key with its prefix and last four", made.raw)
	}
	c.do(call{method: "POST", path: "/v1/api_keys", body: `{"mode":"live"}`, status: 400, code: "parameter_unknown"})

	list := c.do(call{method: "GET", path: "/v1/api_keys", status: 200, valid: true})
	data := list.body["data"].([]any)
	if len(data) != 2 || data[0].(map[string]any)["id"] != id {
		t.Fatalf("list = %s, want the new key first of two", list.raw)
	}
	if strings.Contains(string(list.raw), text) || strings.Contains(string(list.raw), `"key"`) {
		t.Errorf("list = %s: it shows a key's text", list.raw)
	}
	page := c.do(call{method: "GET", path: "/v1/api_keys?limit=1", status: 200, valid: true})
	if page.body["has_more"] != true {
		t.Errorf("limit=1 page = %s, want has_more", page.raw)
	}
	c.do(call{method: "GET", path: "/v1/api_keys?starting_after=whep_01jd3f4g5h6j7k8m9n0p1q2r3t", status: 400, code: "parameter_invalid"})

	// The new key works, and its use is recorded.
	as := func(key string) []string { return []string{"Authorization", "Bearer " + key} }
	c.do(call{method: "GET", path: "/v1/lines", headers: as(text), status: 200, valid: true})
	used := c.do(call{method: "GET", path: "/v1/api_keys", status: 200, valid: true})
	if used.body["data"].([]any)[0].(map[string]any)["last_used_at"] == nil {
		t.Errorf("list after a use = %s, want last_used_at set", used.raw)
	}

	// Another account cannot see or revoke it.
	c.do(call{method: "DELETE", path: "/v1/api_keys/" + id, headers: as(c.st.otherKey), status: 404, code: "resource_not_found"})

	// Revoked: the very next request with it is refused.
	start := time.Now()
	rev := c.do(call{method: "DELETE", path: "/v1/api_keys/" + id, status: 200, valid: true})
	if rev.body["revoked_at"] == nil {
		t.Fatalf("revoke = %s, want revoked_at", rev.raw)
	}
	r := c.do(call{method: "GET", path: "/v1/lines", headers: as(text), status: 401, code: "api_key_invalid"})
	t.Logf("key revoked: %.3f s until 401 (local stack)", time.Since(start).Seconds())
	if msg := r.body["error"].(map[string]any)["message"]; msg != "this API key was revoked" {
		t.Errorf("revoked key's 401 message = %v", msg)
	}
	again := c.do(call{method: "DELETE", path: "/v1/api_keys/" + id, status: 200, valid: true})
	if again.body["revoked_at"] != rev.body["revoked_at"] {
		t.Errorf("second revoke = %s, want the first revocation unchanged (%v)", again.raw, rev.body["revoked_at"])
	}

	// The last key stays.
	list = c.do(call{method: "GET", path: "/v1/api_keys", status: 200, valid: true})
	if data := list.body["data"].([]any); len(data) != 1 {
		t.Fatalf("list after revoke = %s, want one key", list.raw)
	}
	last := list.body["data"].([]any)[0].(map[string]any)["id"].(string)
	c.do(call{method: "DELETE", path: "/v1/api_keys/" + last, status: 409, code: "last_api_key"})
	c.do(call{method: "DELETE", path: "/v1/api_keys/key_01jd3f4g5h6j7k8m9n0p1q2r3t", status: 404, code: "resource_not_found", valid: true})
	c.do(call{method: "GET", path: "/v1/lines", status: 200})

	c.requireCoverage(func(p string) bool { return strings.HasPrefix(p, "/v1/api_keys") })
}

// TestRevokeRaceKeepsOneKey: accounts with two keys revoke both at once over HTTP, each
// key revoking itself: every account keeps one.
func TestRevokeRaceKeepsOneKey(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	svc := &account.Service{Store: e.store, Now: time.Now}
	for round := range 10 {
		a, first, err := svc.Create(ctx, "Race Co", false)
		if err != nil {
			t.Fatal(err)
		}
		second, _, err := svc.AddKey(ctx, a.ID, false)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := e.store.ListKeys(ctx, a.ID)
		if err != nil || len(keys) != 2 {
			t.Fatalf("ListKeys = %d, %v", len(keys), err)
		}
		statuses := make([]int, 2)
		var wg sync.WaitGroup
		for i, text := range []string{first, second} {
			wg.Go(func() {
				statuses[i] = e.do("DELETE", "/v1/api_keys/"+keys[i].ID, "", "Authorization", "Bearer "+text).status
			})
		}
		wg.Wait()
		left, err := e.store.ListKeys(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(statuses)
		if fmt.Sprint(statuses) != "[200 409]" || len(left) != 1 {
			t.Fatalf("round %d: concurrent revokes = %v leaving %d keys, want 200 and 409 leaving 1", round, statuses, len(left))
		}
	}
}
