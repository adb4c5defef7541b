package apierr

import (
	"errors"
	"testing"
)

type rec struct{ AccountID, Name string }

func TestOwned(t *testing.T) {
	nf := NotFound("thing", "thg_1")
	boom := errors.New("disk on fire")
	for _, tc := range []struct {
		name    string
		v       rec
		err     error
		want    rec
		wantErr error
	}{
		{"mine", rec{"acct_a", "x"}, nil, rec{"acct_a", "x"}, nil},
		{"another account's is not found", rec{"acct_b", "x"}, nil, rec{}, nf},
		{"absent is not found", rec{}, ErrNotFound, rec{}, nf},
		{"a read failure stays internal", rec{}, boom, rec{}, boom},
	} {
		got, err := Owned(tc.v, tc.v.AccountID, tc.err, "acct_a", nf)
		if got != tc.want || !errors.Is(err, tc.wantErr) {
			t.Errorf("%s: Owned = %+v, %v; want %+v, %v", tc.name, got, err, tc.want, tc.wantErr)
		}
		if _, ok := As(err); ok != (tc.wantErr == nf) {
			t.Errorf("%s: client-visible error = %v, want %v", tc.name, ok, tc.wantErr == nf)
		}
	}
}
