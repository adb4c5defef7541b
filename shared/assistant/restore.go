package assistant

import (
	"context"
)

// Draft is the draft a version was published from: its content, without the name (the
// assistant's name is its own, edited by PATCH; a version keeps the name it had only as a
// record).
func (v Version) Draft() Draft {
	return Draft{SystemPrompt: v.SystemPrompt, Greeting: v.Greeting, AvatarID: v.AvatarID, Framing: v.Framing,
		Voice: v.Voice, Model: v.Model, Language: v.Language, TransferDestinations: v.TransferDestinations, CallSettings: v.CallSettings,
		Recording: v.Recording}
}

// RestoreDraft replaces the draft with the content of one of the assistant's versions, to
// edit it from there and publish it again. Versions, the active version and the name are
// unchanged. A voice the deployment stopped offering is restored as it was; publishing
// then names it (400 on voice), as it would for any draft.
//
// Errors: parameter_missing (version_id); resource_not_found for an unknown assistant or a
// version that is not this assistant's; assistant_archived.
func (s *Service) RestoreDraft(ctx context.Context, accountID, id, versionID string) (Assistant, error) {
	return s.withNamedVersion(ctx, accountID, id, versionID, func(a *Assistant, v Version) { a.Draft = v.Draft() })
}
