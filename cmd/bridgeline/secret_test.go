package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/shared/config"
)

// TestDevRefusesPublicSecret: `bridgeline dev` with the LiveKit secret older releases
// shipped stops before it starts anything, with one line naming the variable (main
// prints it after "bridgeline: "), and makes no secret file in its place.
func TestDevRefusesPublicSecret(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	t.Setenv("BRIDGELINE_DATA", data)
	t.Setenv("LIVEKIT_API_SECRET", config.PublicDevSecret)
	err := run(context.Background(), []string{"dev"})
	if err == nil || !strings.HasPrefix(err.Error(), "LIVEKIT_API_SECRET: ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("bridgeline dev = %v, want one line refusing LIVEKIT_API_SECRET", err)
	}
	if _, err := os.Stat(filepath.Join(data, config.LiveKitSecretFileName)); err == nil {
		t.Errorf("a secret file was made although the process refused to start")
	}
}

// TestDevSecretsPerDataFolder: with no secret in the environment, `bridgeline dev` takes
// its LiveKit and persona report secrets from its data folder, made on first start and
// the same on the next; another data folder has others; the report secret's public
// default is refused before any file is made.
func TestDevSecretsPerDataFolder(t *testing.T) {
	t.Setenv("LIVEKIT_API_SECRET", "")
	t.Setenv("PERSONA_REPORT_SECRET", "")
	load := func(data string) config.Config {
		t.Helper()
		t.Setenv("BRIDGELINE_DATA", data)
		cfg, err := config.FromEnv()
		if err != nil {
			t.Fatal(err)
		}
		if err := localSecrets(&cfg); err != nil {
			t.Fatalf("localSecrets: %v", err)
		}
		return cfg
	}
	data := filepath.Join(t.TempDir(), "data")
	first := load(data)
	if first.PersonaReportSecret == "" || first.PersonaReportSecret == config.PublicDevReportSecret ||
		first.PersonaReportSecret == first.LiveKitSecret {
		t.Fatalf("report secret %q (LiveKit %q): want one of the data folder's own", first.PersonaReportSecret, first.LiveKitSecret)
	}
	b, err := os.ReadFile(filepath.Join(data, config.ReportSecretFileName))
	if err != nil || strings.TrimSpace(string(b)) != first.PersonaReportSecret {
		t.Fatalf("%s holds %q, %v; want the secret in use", config.ReportSecretFileName, b, err)
	}
	if again := load(data); again.PersonaReportSecret != first.PersonaReportSecret || again.LiveKitSecret != first.LiveKitSecret {
		t.Errorf("second start: other secrets; want the data folder's")
	}
	if other := load(filepath.Join(t.TempDir(), "data")); other.PersonaReportSecret == first.PersonaReportSecret {
		t.Errorf("another data folder has the same report secret")
	}

	fresh := filepath.Join(t.TempDir(), "data")
	t.Setenv("BRIDGELINE_DATA", fresh)
	t.Setenv("PERSONA_REPORT_SECRET", config.PublicDevReportSecret)
	err = run(context.Background(), []string{"dev"})
	if err == nil || !strings.HasPrefix(err.Error(), "PERSONA_REPORT_SECRET: ") {
		t.Fatalf("bridgeline dev with the public report secret = %v, want a refusal naming PERSONA_REPORT_SECRET", err)
	}
	for _, f := range []string{config.ReportSecretFileName, config.LiveKitSecretFileName} {
		if _, err := os.Stat(filepath.Join(fresh, f)); err == nil {
			t.Errorf("%s was made although the process refused to start", f)
		}
	}
}
