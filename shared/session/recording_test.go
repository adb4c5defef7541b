package session

import (
	"testing"

	"github.com/bridgeline/bridgeline/shared/assistant"
)

// A session's own recording overrides its version's; neither set is off.
func TestRecordingOf(t *testing.T) {
	for _, c := range []struct{ session, version, want string }{
		{"", "", assistant.RecordingOff},
		{"", assistant.RecordingAudio, assistant.RecordingAudio},
		{assistant.RecordingOff, assistant.RecordingAudio, assistant.RecordingOff},
		{assistant.RecordingAudio, "", assistant.RecordingAudio},
		{assistant.RecordingAudio, assistant.RecordingOff, assistant.RecordingAudio},
	} {
		got := Session{Recording: c.session}.RecordingOf(assistant.Version{Recording: c.version})
		if got != c.want {
			t.Errorf("session %q, version %q: %q, want %q", c.session, c.version, got, c.want)
		}
	}
}
