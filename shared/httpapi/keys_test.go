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
	"github.com/bridgeline/bridgeline/shared/httpapi/contracttest"
)

// TestContractAPIKeys: keys are made (shown once), listed without their text, revoked
// at once (the next request with the key is 401: "seconds until 401" is 0 on the local
// stack), revoked idempotently, and an account never loses its last key.
func TestContractAPIKeys(t *testing.T) {
	c := newContract(t, nil)
	made := c.Do(contracttest.Call{Method: "POST", Path: "/v1/api_keys", Body: `{}`, Status: 201, Valid: true})
	text, id := made.Str("key"), made.Str("id")
	if !strings.HasPrefix(text, "sk_test_") || made.Str("mode") != "test" || made.Str("last4") != text[len(text)-4:] || made.Str("prefix") != text[:12] {
		t.Fatalf("created key = %s, want an sk_test_ key with its prefix and last four", made.Raw)
	}
	c.Do(contracttest.Call{Method: "POST", Path: "/v1/api_keys", Body: `{"mode":"live"}`, Status: 400, Code: "parameter_unknown"})

	list := c.Do(contracttest.Call{Method: "GET", Path: "/v1/api_keys", Status: 200, Valid: true})
	data := list.Body["data"].([]any)
	if len(data) != 2 || data[0].(map[string]any)["id"] != id {
		t.Fatalf("list = %s, want the new key first of two", list.Raw)
	}
	if strings.Contains(string(list.Raw), text) || strings.Contains(string(list.Raw), `"key"`) {
		t.Errorf("list = %s: it shows a key's text", list.Raw)
	}
	page := c.Do(contracttest.Call{Method: "GET", Path: "/v1/api_keys?limit=1", Status: 200, Valid: true})
	if page.Body["has_more"] != true {
		t.Errorf("limit=1 page = %s, want has_more", page.Raw)
	}
	c.Do(contracttest.Call{Method: "GET", Path: "/v1/api_keys?starting_after=whep_01jd3f4g5h6j7k8m9n0p1q2r3t", Status: 400, Code: "parameter_invalid"})

	// The new key works, and its use is recorded.
	as := func(key string) []string { return []string{"Authorization", "Bearer " + key} }
	c.Do(contracttest.Call{Method: "GET", Path: "/v1/lines", Headers: as(text), Status: 200, Valid: true})
	used := c.Do(contracttest.Call{Method: "GET", Path: "/v1/api_keys", Status: 200, Valid: true})
	if used.Body["data"].([]any)[0].(map[string]any)["last_used_at"] == nil {
		t.Errorf("list after a use = %s, want last_used_at set", used.Raw)
	}

	// Another account cannot see or revoke it.
	c.Do(contracttest.Call{Method: "DELETE", Path: "/v1/api_keys/" + id, Headers: as(c.st.otherKey), Status: 404, Code: "resource_not_found"})

	// Revoked: the very next request with it is refused.
	start := time.Now()
	rev := c.Do(contracttest.Call{Method: "DELETE", Path: "/v1/api_keys/" + id, Status: 200, Valid: true})
	if rev.Body["revoked_at"] == nil {
		t.Fatalf("revoke = %s, want revoked_at", rev.Raw)
	}
	r := c.Do(contracttest.Call{Method: "GET", Path: "/v1/lines", Headers: as(text), Status: 401, Code: "api_key_invalid"})
	t.Logf("key revoked: %.3f s until 401 (local stack)", time.Since(start).Seconds())
	if msg := r.Body["error"].(map[string]any)["message"]; msg != "this API key was revoked" {
		t.Errorf("revoked key's 401 message = %v", msg)
	}
	again := c.Do(contracttest.Call{Method: "DELETE", Path: "/v1/api_keys/" + id, Status: 200, Valid: true})
	if again.Body["revoked_at"] != rev.Body["revoked_at"] {
		t.Errorf("second revoke = %s, want the first revocation unchanged (%v)", again.Raw, rev.Body["revoked_at"])
	}

	// The last key stays.
	list = c.Do(contracttest.Call{Method: "GET", Path: "/v1/api_keys", Status: 200, Valid: true})
	if data := list.Body["data"].([]any); len(data) != 1 {
		t.Fatalf("list after revoke = %s, want one key", list.Raw)
	}
	last := list.Body["data"].([]any)[0].(map[string]any)["id"].(string)
	c.Do(contracttest.Call{Method: "DELETE", Path: "/v1/api_keys/" + last, Status: 409, Code: "last_api_key"})
	c.Do(contracttest.Call{Method: "DELETE", Path: "/v1/api_keys/key_01jd3f4g5h6j7k8m9n0p1q2r3t", Status: 404, Code: "resource_not_found", Valid: true})
	c.Do(contracttest.Call{Method: "GET", Path: "/v1/lines", Status: 200})

	c.RequireCoverage(func(p string) bool { return strings.HasPrefix(p, "/v1/api_keys") })
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
