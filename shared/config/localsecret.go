package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// PublicDevSecret is the LiveKit secret older releases gave every local stack. It is
// published (this file, the project's history), so a process holding it would let any
// web page a developer visits sign LiveKit requests: livekit-server answers CORS from
// every origin. Validate refuses it.
const PublicDevSecret = "bridgeline-dev-secret-change-me-0123456789"

// LiveKitSecretFileName is the file under the data folder that holds the local stack's
// LiveKit API secret.
const LiveKitSecretFileName = "livekit-api-secret"

// PublicDevReportSecret is the persona report secret older releases gave every local
// stack (published like PublicDevSecret). With it a local process could forge worker
// reports and ask the stack for agent tokens; Validate refuses it.
const PublicDevReportSecret = "bridgeline-dev-report-secret-change-me-012345"

// ReportSecretFileName is the file under the data folder that holds the local stack's
// persona report secret.
const ReportSecretFileName = "persona-report-secret"

// LocalLiveKitSecret returns the local stack's LiveKit API secret kept in dataDir,
// making it (32 random bytes, hex, mode 0600) on first use: each data folder has its
// own, and no two machines share one. A file readable by others is refused, as the
// webhook secrets' key file is (shared/secretbox): it signs every LiveKit token.
func LocalLiveKitSecret(dataDir string) (string, error) {
	return localSecret(dataDir, LiveKitSecretFileName, "LiveKit secret")
}

// LocalReportSecret returns the local stack's persona report secret kept in dataDir,
// made on first use as LocalLiveKitSecret's is (a file of its own, never the LiveKit
// secret: livekit-server holds that one).
func LocalReportSecret(dataDir string) (string, error) {
	return localSecret(dataDir, ReportSecretFileName, "persona report secret")
}

// localSecret reads the secret kept in dataDir/name, making it on first use.
func localSecret(dataDir, name, what string) (string, error) {
	path := filepath.Join(dataDir, name)
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			f.Close()
			os.Remove(path)
			return "", err
		}
		_, werr := f.WriteString(hex.EncodeToString(b) + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(path)
			return "", fmt.Errorf("%s: write %s: %w", what, path, werr)
		}
	case !errors.Is(err, fs.ErrExist):
		return "", fmt.Errorf("%s: create %s: %w", what, path, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s: %s is mode %v; it must be readable by its owner only (chmod 600)", what, path, st.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	secret := strings.TrimSpace(string(b))
	if len(secret) < 32 {
		return "", fmt.Errorf("%s: %s holds %d characters, want at least 32 (delete it to make a new one)", what, path, len(secret))
	}
	return secret, nil
}
