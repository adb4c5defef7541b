package assistant

import "github.com/bridgeline/bridgeline/shared/apierr"

// Recording modes of a version (and of a session, which overrides its version's).
const (
	RecordingOff   = "off"
	RecordingAudio = "audio"
)

// RecordingOrOff is a stored recording mode as the contract shows it: records written
// before the setting existed record nothing.
func RecordingOrOff(mode string) string {
	if mode == "" {
		return RecordingOff
	}
	return mode
}

// ValidRecording checks a recording mode given on field.
func ValidRecording(field, mode string) error {
	if mode != RecordingOff && mode != RecordingAudio {
		return apierr.Invalid(field, field+" must be off or audio")
	}
	return nil
}
