package session

import (
	"context"

	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/line"
)

// lineVersion is the version an inbound call on the line runs: the line's pinned
// version_id, or else its assistant's active version, the assistant checked as it is now
// (assistant.CallVersion).
func (s *Service) lineVersion(ctx context.Context, l line.Line) (assistant.Version, error) {
	return assistant.CallVersion(ctx, s.assistants, l.AccountID, l.AssistantID, l.VersionID)
}
