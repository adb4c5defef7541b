package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLocalLiveKitSecretPerDataFolder: the first call makes the secret (0600), the next
// reads the same one, another data folder gets another, and a file others may read is
// refused.
func TestLocalLiveKitSecretPerDataFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	a, err := LocalLiveKitSecret(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) < 32 || a == PublicDevSecret {
		t.Fatalf("secret %q: want 32+ characters, not the public default", a)
	}
	st, err := os.Stat(filepath.Join(dir, LiveKitSecretFileName))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("secret file mode %v, want 0600", st.Mode().Perm())
	}
	again, err := LocalLiveKitSecret(dir)
	if err != nil || again != a {
		t.Errorf("second start: %q, %v; want the first secret", again, err)
	}
	other, err := LocalLiveKitSecret(t.TempDir())
	if err != nil || other == a {
		t.Errorf("another data folder: %q, %v; want a secret of its own", other, err)
	}
	if err := os.Chmod(filepath.Join(dir, LiveKitSecretFileName), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LocalLiveKitSecret(dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a secret file others may read: err %v, want a refusal", err)
	}
}

// TestPublicDevSecretRefused: the secret older releases shipped is refused wherever it
// comes from, with one line naming the variable; no default secret is left.
func TestPublicDevSecretRefused(t *testing.T) {
	if Defaults().LiveKitSecret != "" {
		t.Fatalf("Defaults().LiveKitSecret = %q, want none", Defaults().LiveKitSecret)
	}
	c, err := Read(env(map[string]string{"LIVEKIT_API_SECRET": PublicDevSecret}))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Validate()
	if err == nil || !strings.HasPrefix(err.Error(), "LIVEKIT_API_SECRET: ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Validate() = %v, want one line naming LIVEKIT_API_SECRET", err)
	}
}

// TestLocalReportSecretPerDataFolder: the persona report secret is the data folder's
// own as the LiveKit secret is: made once (0600), read again, another folder's differs,
// and it is not the LiveKit secret beside it.
func TestLocalReportSecretPerDataFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	a, err := LocalReportSecret(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) < 32 || a == PublicDevReportSecret {
		t.Fatalf("secret %q: want 32+ characters, not the public default", a)
	}
	st, err := os.Stat(filepath.Join(dir, ReportSecretFileName))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("secret file: %v, %v; want mode 0600", st, err)
	}
	if again, err := LocalReportSecret(dir); err != nil || again != a {
		t.Errorf("second start: %q, %v; want the first secret", again, err)
	}
	if other, err := LocalReportSecret(t.TempDir()); err != nil || other == a {
		t.Errorf("another data folder: %q, %v; want a secret of its own", other, err)
	}
	if lk, err := LocalLiveKitSecret(dir); err != nil || lk == a {
		t.Errorf("the LiveKit secret beside it: %q, %v; want another secret", lk, err)
	}
}

// TestPublicDevReportSecretRefused: the report secret older releases shipped is no
// default any more and is refused when set, with one line naming the variable.
func TestPublicDevReportSecretRefused(t *testing.T) {
	if Defaults().PersonaReportSecret != "" {
		t.Fatalf("Defaults().PersonaReportSecret = %q, want none", Defaults().PersonaReportSecret)
	}
	c, err := Read(env(map[string]string{"PERSONA_REPORT_SECRET": PublicDevReportSecret}))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Validate()
	if err == nil || !strings.HasPrefix(err.Error(), "PERSONA_REPORT_SECRET: ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Validate() = %v, want one line naming PERSONA_REPORT_SECRET", err)
	}
}
