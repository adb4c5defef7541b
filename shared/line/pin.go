package line

import (
	"context"
	"errors"
	"fmt"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
)

// pinVersion applies an update's version pin to l, whose AssistantID is already the one
// the update leaves on the line; a is that assistant as read for this update (nil when
// the update did not read it).
//
// The rules: version_id given pins that version, which must be a version of the line's
// assistant (404 for an id the account does not have, 400 for a version of another
// assistant or a line without an assistant); version_id null unpins; setting
// assistant_id without version_id unpins too, since a pin names a version of one
// assistant and the caller asked for the new assistant as it is (its active version).
func (s *Service) pinVersion(ctx context.Context, accountID string, l *Line, u Update, a *assistant.Assistant) error {
	switch {
	case u.UnpinVersion:
		l.VersionID = ""
		return nil
	case u.VersionID == nil:
		if u.AssistantID != nil || u.UnassignAssistant {
			l.VersionID = ""
		}
		return nil
	}
	versionID := *u.VersionID
	if l.AssistantID == "" {
		return apierr.Invalid("version_id", "the line has no assistant to pin a version of; give assistant_id too")
	}
	if a == nil {
		found, err := s.Assistants.GetAssistant(ctx, l.AssistantID)
		got, err := apierr.Owned(found, found.AccountID, err, accountID, apierr.NotFound("assistant", l.AssistantID))
		if err != nil {
			return err
		}
		a = &got
	}
	for _, v := range a.Versions {
		if v.ID == versionID {
			l.VersionID = v.ID
			return nil
		}
	}
	notFound := apierr.Param(apierr.CodeResourceNotFound, "version_id", fmt.Sprintf("no such version: %q", versionID))
	v, err := s.Assistants.GetVersion(ctx, versionID)
	if errors.Is(err, apierr.ErrNotFound) {
		return notFound
	}
	if err != nil {
		return fmt.Errorf("get version %s: %w", versionID, err)
	}
	// A version of another assistant: the same account's gets a precise 400, another
	// account's is not found, like every id of another account.
	other, err := s.Assistants.GetAssistant(ctx, v.AssistantID)
	if err != nil || other.AccountID != accountID {
		return notFound
	}
	return apierr.Invalid("version_id", fmt.Sprintf("version %s belongs to assistant %s, not to the line's assistant %s",
		versionID, v.AssistantID, l.AssistantID))
}
