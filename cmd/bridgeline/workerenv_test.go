package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/config"
)

// TestInProcessWorkersHoldNoLiveKitSecret: the local stack's persona workers read an
// environment without the LiveKit secret, even when the stack was given it in its own
// (the worker refuses to start with one), and nothing they read holds it.
func TestInProcessWorkersHoldNoLiveKitSecret(t *testing.T) {
	secret := "stack-secret-given-0123456789-0123456789"
	t.Setenv("LIVEKIT_API_SECRET", secret)
	t.Setenv("PERSONA_REPORT_SECRET", "stack-report-secret-0123456789-0123456789")
	cfg, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	getenv := workerGetenv(cfg, "http://127.0.0.1:8080")
	if v := getenv("LIVEKIT_API_SECRET"); v != "" {
		t.Errorf("the workers read LIVEKIT_API_SECRET=%q", v)
	}
	for _, k := range []string{"LIVEKIT_URL", "LIVEKIT_API_KEY", "BRIDGELINE_API_URL", "PERSONA_REPORT_SECRET"} {
		if strings.Contains(getenv(k), secret) {
			t.Errorf("the workers' %s holds the LiveKit secret", k)
		}
	}
	wcfg, err := worker.ConfigFromEnv(getenv)
	if err != nil {
		t.Fatalf("the in-process workers' configuration: %v", err)
	}
	if strings.Contains(fmt.Sprintf("%+v", wcfg), secret) {
		t.Errorf("the workers' configuration holds the LiveKit secret: %+v", wcfg)
	}
}
