package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/bridgeline/bridgeline/shared/store/sqlite"
	"github.com/bridgeline/bridgeline/shared/store/storetest"
)

func TestSessionLimitConformance(t *testing.T) {
	storetest.RunSessionLimits(t, func(t *testing.T) storetest.SessionLimitStore {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "test.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
