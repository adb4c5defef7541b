package account_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// TestKeyForm: a key is sk_test_ or sk_live_ and 22 to 128 base62 characters; anything
// else is refused before a store read.
func TestKeyForm(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		ok         bool
	}{
		{"test key", "sk_test_" + strings.Repeat("a", 22), true},
		{"live key", "sk_live_" + strings.Repeat("Z9", 16), true},
		{"longest", "sk_live_" + strings.Repeat("x", 128), true},
		{"one too short", "sk_test_" + strings.Repeat("a", 21), false},
		{"one too long", "sk_test_" + strings.Repeat("a", 129), false},
		{"a dash", "sk_test_" + strings.Repeat("a", 21) + "-", false},
		{"a space", "sk_test_" + strings.Repeat("a", 21) + " ", false},
		{"another prefix", "pk_test_" + strings.Repeat("a", 22), false},
		{"no mode", "sk_" + strings.Repeat("a", 27), false},
		{"empty", "", false},
	} {
		if got := account.WellFormed(tc.text); got != tc.ok {
			t.Errorf("%s: WellFormed(%q) = %v, want %v", tc.name, tc.text, got, tc.ok)
		}
	}
}

// TestNewKey: a new key is well formed, of its mode, stored as its hash with a prefix and
// its last four for operators, never its text; two keys never repeat.
func TestNewKey(t *testing.T) {
	now := time.Now().UTC()
	seen := map[string]bool{}
	for _, live := range []bool{false, true} {
		for range 50 {
			text, k, err := account.NewKey("acct_1", live, now)
			if err != nil {
				t.Fatal(err)
			}
			mode := map[bool]string{false: "sk_test_", true: "sk_live_"}[live]
			if !account.WellFormed(text) || !strings.HasPrefix(text, mode) || len(text) != len(mode)+32 {
				t.Fatalf("NewKey(live %v) = %q, want %s and 32 base62 characters", live, text, mode)
			}
			if k.Live() != live || k.Revoked() || k.Hash != account.HashKey(text) || k.Prefix != text[:len(mode)+4] ||
				k.Last4 != text[len(text)-4:] || k.AccountID != "acct_1" || !strings.HasPrefix(k.ID, "key_") {
				t.Fatalf("NewKey(live %v) stored form = %+v", live, k)
			}
			if strings.Contains(k.Hash+k.Prefix+k.Last4, text[len(mode)+4:len(text)-4]) {
				t.Fatalf("the stored form of %q holds its secret part", text)
			}
			if seen[text] {
				t.Fatalf("NewKey made %q twice", text)
			}
			seen[text] = true
		}
	}
}

// TestCreateAccount: an account starts with one key of the mode asked for; a given key
// (DEV_API_KEY) must be well formed; added keys are the account's.
func TestCreateAccount(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "accounts.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := &account.Service{Store: st, Now: time.Now}
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		create func() (account.Account, string, error)
		ok     bool
		live   bool
		named  string
	}{
		{"test", func() (account.Account, string, error) { return svc.Create(ctx, "Acme", false) }, true, false, "Acme"},
		{"live", func() (account.Account, string, error) { return svc.Create(ctx, "Live Co", true) }, true, true, "Live Co"},
		{"given key", func() (account.Account, string, error) {
			text := "sk_test_" + strings.Repeat("d", 24)
			a, err := svc.CreateWithKey(ctx, "Dev", text)
			return a, text, err
		}, true, false, "Dev"},
		{"given malformed key", func() (account.Account, string, error) {
			a, err := svc.CreateWithKey(ctx, "Bad", "sk_test_short")
			return a, "", err
		}, false, false, ""},
	} {
		a, text, err := tc.create()
		if (err == nil) != tc.ok {
			t.Errorf("%s: err = %v, want ok %v", tc.name, err, tc.ok)
			continue
		}
		if !tc.ok {
			continue
		}
		k, got, err := st.KeyAndAccount(ctx, account.HashKey(text))
		if err != nil || got.ID != a.ID || got.Name != tc.named || k.Live() != tc.live || !strings.HasPrefix(a.ID, "acct_") {
			t.Errorf("%s: key finds %+v (%v), live %v; want %s named %q, live %v", tc.name, got, err, k.Live(), a.ID, tc.named, tc.live)
		}
		added, k2, err := svc.AddKey(ctx, a.ID, tc.live)
		if err != nil || k2.AccountID != a.ID || k2.Live() != tc.live {
			t.Errorf("%s: AddKey = %+v, %v", tc.name, k2, err)
		}
		if _, owner, err := st.KeyAndAccount(ctx, account.HashKey(added)); err != nil || owner.ID != a.ID {
			t.Errorf("%s: the added key finds %v, %v; want %s", tc.name, owner.ID, err, a.ID)
		}
	}
}
