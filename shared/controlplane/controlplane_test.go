package controlplane_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/config"
	"github.com/bridgeline/bridgeline/shared/controlplane"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "cp.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// testConfig is the defaults with a report secret of the test's own (it has no default).
func testConfig() config.Config {
	cfg := config.Defaults()
	cfg.PersonaReportSecret = strings.Repeat("r", 40)
	return cfg
}

// TestNewRefusesABadConfig: New validates, so every process refuses a bad setting the
// same way, naming the variable.
func TestNewRefusesABadConfig(t *testing.T) {
	cfg := testConfig()
	cfg.MaxSession = 0
	_, err := controlplane.New(cfg, controlplane.Deps{Store: openStore(t)})
	if err == nil || !strings.Contains(err.Error(), "MAX_SESSION_MINUTES") {
		t.Fatalf("New(MaxSession 0) = %v, want an error naming MAX_SESSION_MINUTES", err)
	}
	if _, err := controlplane.New(testConfig(), controlplane.Deps{}); err == nil {
		t.Fatal("New without a store = nil error")
	}
}

// TestConfigReachesTheServices: the settings of Config are the services' (the drift this
// package ended: Lambdas once ran without the dispatch timeout).
func TestConfigReachesTheServices(t *testing.T) {
	cfg := testConfig()
	cfg.MaxSession, cfg.AssistantDispatchTimeout, cfg.SweepWindow = 90*time.Second, 40*time.Second, 20*time.Second
	cfg.HostedVoices, cfg.PersonaWorkers = []string{"nova"}, 0
	cp, err := controlplane.New(cfg, controlplane.Deps{Store: openStore(t), LocalDelivery: true})
	if err != nil {
		t.Fatal(err)
	}
	set := cp.Sessions.Settings()
	if set.MaxDuration != cfg.MaxSession || set.DispatchTimeout != cfg.AssistantDispatchTimeout || set.MaxConcurrentSessions != cfg.MaxConcurrentSessions {
		t.Errorf("session service limits = %v, %v, %d; want %v, %v, %d", set.MaxDuration, set.DispatchTimeout, set.MaxConcurrentSessions,
			cfg.MaxSession, cfg.AssistantDispatchTimeout, cfg.MaxConcurrentSessions)
	}
	if len(cp.Assistants.HostedVoices) != 1 || cp.Assistants.HostedVoices[0] != "nova" {
		t.Errorf("assistant service hosted voices = %v, want [nova]", cp.Assistants.HostedVoices)
	}
	if cp.Delivery == nil || set.OnWrite == nil {
		t.Errorf("LocalDelivery: worker %v, session notify set %v; want both", cp.Delivery, set.OnWrite != nil)
	}
	if cp.Sessions.PublicURL() != cfg.LiveKitPublicURL {
		t.Errorf("rooms without LiveKit: rtc_url %q, want %q", cp.Sessions.PublicURL(), cfg.LiveKitPublicURL)
	}
}

// TestOneRouteTable: the local handler and each function's handler serve the same
// routes: a function's handler answers its own route and no other.
func TestOneRouteTable(t *testing.T) {
	cp, err := controlplane.New(testConfig(), controlplane.Deps{Store: openStore(t), SimSecret: "s"})
	if err != nil {
		t.Fatal(err)
	}
	routes := cp.API.Routes()
	functions := map[string]bool{}
	for _, r := range routes {
		functions[r.Function] = true
	}
	// Every /v1 resource and each receiver is there.
	for _, fn := range []string{"assistants-get", "lines-list", "webhook-endpoints-create", "events-redeliver",
		"calls-answer", "sessions-create", "calls-get", "livekit-webhook", "persona-report", "platform-sim"} {
		if !functions[fn] {
			t.Errorf("route table has no %s", fn)
		}
	}
	h, err := cp.FunctionHandler("avatars-list")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{"/v1/avatars": http.StatusUnauthorized, "/v1/assistants": http.StatusNotFound} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != want {
			t.Errorf("avatars-list's handler: GET %s = %d, want %d", path, rec.Code, want)
		}
	}
}
