package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/apierr"
)

var accountCases = map[string]func(*testing.T, Store){
	"a key hash finds the key and its account": func(t *testing.T, s Store) {
		a, key := newAccount(t, s)
		k, got, err := s.KeyAndAccount(ctx(t), account.HashKey(key))
		if err != nil || got.ID != a.ID || k.AccountID != a.ID || k.Hash != account.HashKey(key) || k.Revoked() {
			t.Fatalf("KeyAndAccount = key of %s, account %s, %v; want both of %s", k.AccountID, got.ID, err, a.ID)
		}
		if _, _, err := s.KeyAndAccount(ctx(t), account.HashKey(key+"x")); !errors.Is(err, apierr.ErrNotFound) {
			t.Errorf("KeyAndAccount(other) err = %v, want ErrNotFound", err)
		}
	},
	"a second key works and a taken hash conflicts": func(t *testing.T, s Store) {
		a, key := newAccount(t, s)
		text, k, err := account.NewKey(a.ID, true, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddKey(ctx(t), k); err != nil {
			t.Fatalf("AddKey: %v", err)
		}
		if _, got, err := s.KeyAndAccount(ctx(t), account.HashKey(text)); err != nil || got.ID != a.ID {
			t.Errorf("KeyAndAccount(second) = %v, %v", got.ID, err)
		}
		dup := account.KeyFromText(a.ID, key, time.Now())
		if err := s.AddKey(ctx(t), dup); !errors.Is(err, apierr.ErrConflict) {
			t.Errorf("AddKey(taken hash) err = %v, want ErrConflict", err)
		}
	},
	"keys are listed, revoked once, and never the last": func(t *testing.T, s Store) {
		a, first := newAccount(t, s)
		svc := account.Service{Store: s, Now: time.Now}
		text, k2, err := svc.AddKey(ctx(t), a.ID, false)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := s.ListKeys(ctx(t), a.ID)
		if err != nil || len(keys) != 2 {
			t.Fatalf("ListKeys = %d keys, %v; want 2", len(keys), err)
		}
		if keys[1].ID != k2.ID || keys[1].Last4 != text[len(text)-4:] || keys[0].Last4 != first[len(first)-4:] {
			t.Errorf("ListKeys = %+v, want the first key then %s ending %s", keys, k2.ID, text[len(text)-4:])
		}
		other, _ := newAccount(t, s)
		if _, err := s.RevokeKey(ctx(t), other.ID, k2.ID, time.Now()); !errors.Is(err, apierr.ErrNotFound) {
			t.Errorf("RevokeKey(another account's key) err = %v, want ErrNotFound", err)
		}
		at := time.Now().UTC().Truncate(time.Millisecond)
		got, err := s.RevokeKey(ctx(t), a.ID, k2.ID, at)
		if err != nil || got.RevokedAt == nil || !got.RevokedAt.Equal(at) {
			t.Fatalf("RevokeKey = %+v, %v; want revoked at %v", got, err, at)
		}
		again, err := s.RevokeKey(ctx(t), a.ID, k2.ID, at.Add(time.Hour))
		if err != nil || again.RevokedAt == nil || !again.RevokedAt.Equal(at) {
			t.Errorf("RevokeKey again = %+v, %v; want the first revocation kept", again, err)
		}
		if k, got, err := s.KeyAndAccount(ctx(t), account.HashKey(text)); err != nil || !k.Revoked() || got.ID != a.ID {
			t.Errorf("KeyAndAccount(revoked) = %+v of %s, %v; want the key, revoked, with its account", k, got.ID, err)
		}
		if k, err := s.KeyByHash(ctx(t), account.HashKey(text)); err != nil || !k.Revoked() {
			t.Errorf("KeyByHash(revoked) = %+v, %v; want the key, revoked", k, err)
		}
		keys, _ = s.ListKeys(ctx(t), a.ID)
		if len(keys) != 1 {
			t.Fatalf("ListKeys after revoke = %d keys, want 1", len(keys))
		}
		if _, err := s.RevokeKey(ctx(t), a.ID, keys[0].ID, time.Now()); !errors.Is(err, account.ErrLastKey) {
			t.Errorf("RevokeKey(last) err = %v, want ErrLastKey", err)
		}
		if k, _, err := s.KeyAndAccount(ctx(t), account.HashKey(first)); err != nil || k.Revoked() {
			t.Errorf("the last key stopped working: revoked %v, %v", k.Revoked(), err)
		}
	},
	"concurrent key creates stop at the cap": func(t *testing.T, s Store) {
		// The account has its first key; 30 concurrent creates with a cap of 20 make
		// exactly 19, the rest ErrKeyLimit; a revoke frees one place, taken once.
		a, _ := newAccount(t, s)
		const max, tries = 20, 30
		svc := account.Service{Store: s, Now: time.Now, MaxKeys: max}
		var wg sync.WaitGroup
		var mu sync.Mutex
		made, refused := 0, 0
		for range tries {
			wg.Go(func() {
				_, _, err := svc.AddKey(ctx(t), a.ID, false)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					made++
				case errors.Is(err, account.ErrKeyLimit):
					refused++
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if made != max-1 || refused != tries-(max-1) {
			t.Fatalf("%d concurrent key creates, cap %d: %d made, %d refused; want %d and %d", tries, max, made, refused, max-1, tries-(max-1))
		}
		keys, err := s.ListKeys(ctx(t), a.ID)
		if err != nil || len(keys) != max {
			t.Fatalf("ListKeys = %d, %v; want %d", len(keys), err, max)
		}
		if _, err := s.RevokeKey(ctx(t), a.ID, keys[0].ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		if _, _, err := svc.AddKey(ctx(t), a.ID, false); err != nil {
			t.Errorf("add after a revoke = %v, want a place", err)
		}
		if _, _, err := svc.AddKey(ctx(t), a.ID, false); !errors.Is(err, account.ErrKeyLimit) {
			t.Errorf("add past the cap = %v, want ErrKeyLimit", err)
		}
	},
	"racing revokes of the last two keys leave one": func(t *testing.T, s Store) {
		for round := range 5 {
			a, _ := newAccount(t, s)
			svc := account.Service{Store: s, Now: time.Now}
			if _, _, err := svc.AddKey(ctx(t), a.ID, false); err != nil {
				t.Fatal(err)
			}
			keys, err := s.ListKeys(ctx(t), a.ID)
			if err != nil || len(keys) != 2 {
				t.Fatalf("ListKeys = %d, %v", len(keys), err)
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, k := range keys {
				wg.Go(func() { _, errs[i] = s.RevokeKey(ctx(t), a.ID, k.ID, time.Now()) })
			}
			wg.Wait()
			// Both may be refused (a store may cancel both colliding writes); both may
			// never succeed.
			left, err := s.ListKeys(ctx(t), a.ID)
			if err != nil || len(left) == 0 || len(left) != 2-count(errs, nil) {
				t.Fatalf("round %d: revokes %v left %d keys, %v; want 1 or 2, one per refusal", round, errs, len(left), err)
			}
			for _, err := range errs {
				if err != nil && !errors.Is(err, account.ErrLastKey) && !errors.Is(err, apierr.ErrConflict) {
					t.Errorf("round %d: revoke err = %v, want ErrLastKey or ErrConflict", round, err)
				}
			}
		}
	},
	"touch records a use": func(t *testing.T, s Store) {
		_, key := newAccount(t, s)
		at := time.Now().UTC().Truncate(time.Millisecond)
		if err := s.TouchKey(ctx(t), account.HashKey(key), at); err != nil {
			t.Fatal(err)
		}
		k, err := s.KeyByHash(ctx(t), account.HashKey(key))
		if err != nil || k.LastUsedAt == nil || !k.LastUsedAt.Equal(at) {
			t.Errorf("KeyByHash after touch = %+v, %v; want last used %v", k, err, at)
		}
	},
	"branding is set, its logo kept apart and removed": func(t *testing.T, s Store) {
		a, key := newAccount(t, s)
		if _, err := s.GetLogo(ctx(t), a.ID); !errors.Is(err, apierr.ErrNotFound) {
			t.Fatalf("GetLogo(no logo) err = %v, want ErrNotFound", err)
		}
		data := []byte("\x89PNG\r\n\x1a\n stands in for a logo's bytes")
		logo := account.Logo{LogoInfo: account.LogoInfo{ContentType: "image/png", Bytes: len(data), Width: 64, Height: 32,
			SHA256: "ab12", UpdatedAt: time.Now().UTC().Truncate(time.Millisecond)}, Data: data}
		got, err := s.SetBranding(ctx(t), a.ID, account.BrandingChange{Name: ptr("Acme Dental"), BrandColor: ptr("#0A7B83"),
			SupportURL: ptr("https://acme.example/help"), Logo: &logo})
		if err != nil || got.Name != "Acme Dental" || got.BrandColor != "#0a7b83" || got.SupportURL != "https://acme.example/help" ||
			got.Logo == nil || got.Logo.SHA256 != "ab12" {
			t.Fatalf("SetBranding = %+v, %v", got, err)
		}
		// Authentication reads the account as it now is (the logo's bytes stay out of it).
		_, read, err := s.KeyAndAccount(ctx(t), account.HashKey(key))
		if err != nil || read.Name != "Acme Dental" || read.BrandColor != "#0a7b83" || read.Logo == nil || read.Logo.Width != 64 ||
			!read.Logo.UpdatedAt.Equal(logo.UpdatedAt) || read.CreatedAt.IsZero() {
			t.Errorf("KeyAndAccount after SetBranding = %+v, %v", read, err)
		}
		l, err := s.GetLogo(ctx(t), a.ID)
		if err != nil || string(l.Data) != string(data) || l.ContentType != "image/png" || l.Height != 32 {
			t.Errorf("GetLogo = %+v, %v; want the bytes set", l.LogoInfo, err)
		}
		// A change of one field keeps the others, the logo among them.
		got, err = s.SetBranding(ctx(t), a.ID, account.BrandingChange{SupportURL: ptr("")})
		if err != nil || got.Name != "Acme Dental" || got.SupportURL != "" || got.Logo == nil {
			t.Errorf("SetBranding(support_url only) = %+v, %v", got, err)
		}
		if _, err := s.SetBranding(ctx(t), a.ID, account.BrandingChange{RemoveLogo: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetLogo(ctx(t), a.ID); !errors.Is(err, apierr.ErrNotFound) {
			t.Errorf("GetLogo after removal err = %v, want ErrNotFound", err)
		}
		if read, _ := s.GetAccount(ctx(t), a.ID); read.Logo != nil || read.Name != "Acme Dental" {
			t.Errorf("GetAccount after logo removal = %+v", read)
		}
		if _, err := s.SetBranding(ctx(t), "acct_nope", account.BrandingChange{Name: ptr("x")}); !errors.Is(err, apierr.ErrNotFound) {
			t.Errorf("SetBranding(unknown account) err = %v, want ErrNotFound", err)
		}
	},
	"unknown account is not found": func(t *testing.T, s Store) {
		if _, err := s.GetAccount(ctx(t), "acct_nope"); !errors.Is(err, apierr.ErrNotFound) {
			t.Errorf("GetAccount err = %v, want ErrNotFound", err)
		}
	},
}

func count[T comparable](xs []T, v T) int {
	n := 0
	for _, x := range xs {
		if x == v {
			n++
		}
	}
	return n
}
