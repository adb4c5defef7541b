package childproc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/shared/redact"
)

// StartFiltered: what a child prints on stdout and stderr reaches its log only through
// the filter (here livekit-sip's, redact.Numbers), the last line without a newline too,
// and Done comes after the last line is written.
func TestStartFilteredMasksTheChildsLines(t *testing.T) {
	log := filepath.Join(t.TempDir(), "child.log")
	p, err := StartFiltered("/bin/sh", []string{"-c",
		`echo '{"msg":"processing invite","fromUser":"+15559990011","toUser":"+15550170011"}'; echo 'To: <sip:15550170011@127.0.0.1>' >&2; printf 'bye +15559990011'`},
		nil, log, redact.Numbers)
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	if strings.Contains(got, "5559990011") || strings.Contains(got, "5550170011") {
		t.Errorf("log holds a full number:\n%s", got)
	}
	for _, want := range []string{`"fromUser":"***0011"`, "To: <sip:***0011@127.0.0.1>", "bye ***0011"} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
}
