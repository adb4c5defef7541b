package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/bridgeline/bridgeline/shared/store/sqlite"
	"github.com/bridgeline/bridgeline/shared/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "test.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestDataSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAssistant(ctx, assistantFixture()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.GetAssistant(ctx, assistantFixture().ID)
	if err != nil || got.Name != "Kept" {
		t.Errorf("after reopen GetAssistant = %q, %v; want Kept", got.Name, err)
	}
}

// TestBoundedAssistantResponses: 80 publishes, the count that made GET /v1/assistants/{id}
// 6.5 MB, stay within Lambda's response limit on SQLite.
func TestBoundedAssistantResponses(t *testing.T) {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "bounded.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.BoundedAssistantResponses(t, s, 80)
}
