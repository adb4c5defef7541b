package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/bridgeline/bridgeline/shared/decision"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
	"github.com/bridgeline/bridgeline/shared/store/storetest"
)

func TestWebhookConformance(t *testing.T) {
	storetest.RunWebhooks(t, func(t *testing.T) storetest.WebhookStore {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "test.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestDecisionConformance(t *testing.T) {
	storetest.RunDecisions(t, func(t *testing.T) decision.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "test.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestEventLogConformance(t *testing.T) {
	storetest.RunEventLog(t, func(t *testing.T) storetest.EventLogStore {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "test.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestSIPTrunkConformance(t *testing.T) {
	storetest.RunSIPTrunks(t, func(t *testing.T) storetest.SIPTrunkStore {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "test.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestCampaignConformance(t *testing.T) {
	storetest.RunCampaigns(t, func(t *testing.T) storetest.CampaignEvents {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "test.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestAvatarConformance(t *testing.T) {
	storetest.RunAvatars(t, func(t *testing.T) storetest.AvatarStore {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "test.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
