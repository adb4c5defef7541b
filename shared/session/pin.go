package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/line"
)

// lineVersion is the version an inbound call on the line runs: the line's pinned
// version_id, or else its assistant's active version. A pinned version is checked
// against the assistant as it is now (still the account's, not archived), like the
// active one.
func (s *Service) lineVersion(ctx context.Context, l line.Line) (assistant.Version, error) {
	if l.VersionID == "" {
		return s.activeVersion(ctx, l.AccountID, l.AssistantID, "assistant_id")
	}
	found, err := s.assistants.GetAssistant(ctx, l.AssistantID)
	a, err := apierr.Owned(found, found.AccountID, err, l.AccountID,
		apierr.Param(apierr.CodeResourceNotFound, "assistant_id", fmt.Sprintf("no such assistant: %q", l.AssistantID)))
	if err != nil {
		return assistant.Version{}, err
	}
	if a.Status == assistant.StatusArchived {
		return assistant.Version{}, apierr.Param(apierr.CodeAssistantArchived, "assistant_id", fmt.Sprintf("assistant %s is archived", a.ID))
	}
	v, err := s.assistants.GetVersion(ctx, l.VersionID)
	if errors.Is(err, apierr.ErrNotFound) || err == nil && v.AssistantID != "" && v.AssistantID != a.ID {
		return assistant.Version{}, apierr.Param(apierr.CodeResourceNotFound, "version_id",
			fmt.Sprintf("line %s pins version %s, which assistant %s does not have", l.ID, l.VersionID, a.ID))
	}
	if err != nil {
		return assistant.Version{}, fmt.Errorf("get version %s: %w", l.VersionID, err)
	}
	if v.AssistantID == "" {
		v.AssistantID = a.ID
	}
	return v, nil
}
