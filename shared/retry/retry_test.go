package retry_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/retry"
)

func TestOnConflict(t *testing.T) {
	refused := apierr.Invalid("name", "bad")
	wrapped := fmt.Errorf("update line line_1: %w", apierr.ErrConflict)
	for _, tc := range []struct {
		name      string
		conflicts int   // how many tries lose to another writer first
		then      error // what the next try returns
		wantTries int
		wantErr   error
	}{
		{"first try wins", 0, nil, 1, nil},
		{"wins after three conflicts", 3, nil, 4, nil},
		{"a wrapped conflict is one too", 5, nil, 6, nil},
		{"another error ends it at once", 0, refused, 1, refused},
		{"an error after conflicts", 2, refused, 3, refused},
		{"gives up after MaxRetries", 1000, nil, retry.MaxRetries + 1, apierr.ErrConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tries := 0
			err := retry.OnConflict(func() error {
				tries++
				if tries <= tc.conflicts {
					return wrapped
				}
				return tc.then
			})
			if tries != tc.wantTries || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("OnConflict: %d tries, %v; want %d tries, %v", tries, err, tc.wantTries, tc.wantErr)
			}
		})
	}
}
