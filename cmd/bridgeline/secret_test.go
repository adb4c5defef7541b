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
