package assistant

import (
	"context"
	"errors"
	"fmt"

	"github.com/bridgeline/bridgeline/shared/apierr"
)

// Runnable reads the account's assistant and checks it can run a call: it is the
// account's, it is not archived, and it has a published version active. It owns that
// rule: a line's assignment and every call a session starts ask it (or CallVersion).
// Errors, on assistant_id: resource_not_found, assistant_archived,
// assistant_not_published.
func Runnable(ctx context.Context, st Store, accountID, id string) (Assistant, error) {
	a, err := callable(ctx, st.GetAssistant, accountID, id)
	if err != nil {
		return a, err
	}
	if a.ActiveVersionID == "" {
		return a, notPublished(id)
	}
	return a, nil
}

// CallVersion is the version a call of the account's assistant runs: the pinned one when
// pinned is set (a line's version_id), else the active one. The assistant is checked as
// Runnable checks it; a pinned version must be one of the assistant's
// (resource_not_found on version_id), and needs no active one beside it. The version's
// AssistantID is always set.
//
// It reads the assistant without its versions and the one version it runs, so a call
// costs the same reads whether the assistant was published once or a thousand times.
func CallVersion(ctx context.Context, st Store, accountID, id, pinned string) (Version, error) {
	a, err := callable(ctx, st.GetAssistantHead, accountID, id)
	if err != nil {
		return Version{}, err
	}
	if pinned == "" {
		if a.ActiveVersionID == "" {
			return Version{}, notPublished(id)
		}
		v, err := st.GetVersion(ctx, a.ActiveVersionID)
		if errors.Is(err, apierr.ErrNotFound) {
			// Just published: a store whose version lookup lags its writes (DynamoDB's
			// index) has it in the assistant's own, consistent, read.
			full, ferr := st.GetAssistant(ctx, id)
			if ferr != nil {
				return Version{}, fmt.Errorf("get assistant %s: %w", id, ferr)
			}
			var ok bool
			if v, ok = full.ActiveVersion(); ok {
				err = nil
			}
		}
		if errors.Is(err, apierr.ErrNotFound) || err == nil && v.AssistantID != "" && v.AssistantID != a.ID {
			return Version{}, notPublished(id)
		}
		if err != nil {
			return Version{}, fmt.Errorf("get version %s: %w", a.ActiveVersionID, err)
		}
		if v.AssistantID == "" {
			v.AssistantID = a.ID
		}
		return v, nil
	}
	v, err := st.GetVersion(ctx, pinned)
	if errors.Is(err, apierr.ErrNotFound) || err == nil && v.AssistantID != "" && v.AssistantID != a.ID {
		return Version{}, apierr.Param(apierr.CodeResourceNotFound, "version_id",
			fmt.Sprintf("the pinned version %s is not a version of assistant %s", pinned, a.ID))
	}
	if err != nil {
		return Version{}, fmt.Errorf("get version %s: %w", pinned, err)
	}
	if v.AssistantID == "" {
		v.AssistantID = a.ID
	}
	return v, nil
}

// callable reads the account's assistant with get and checks it is not archived.
func callable(ctx context.Context, get func(context.Context, string) (Assistant, error), accountID, id string) (Assistant, error) {
	found, err := get(ctx, id)
	a, err := apierr.Owned(found, found.AccountID, err, accountID,
		apierr.Param(apierr.CodeResourceNotFound, "assistant_id", fmt.Sprintf("no such assistant: %q", id)))
	if err != nil {
		return a, err
	}
	if a.Status == StatusArchived {
		return a, apierr.Param(apierr.CodeAssistantArchived, "assistant_id", fmt.Sprintf("assistant %s is archived", id))
	}
	return a, nil
}

func notPublished(id string) error {
	return apierr.Param(apierr.CodeAssistantNotPublished, "assistant_id",
		fmt.Sprintf("assistant %s has no published version; publish it first", id))
}
