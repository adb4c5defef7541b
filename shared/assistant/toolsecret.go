package assistant

import (
	"context"
	"fmt"
	"time"

	"github.com/bridgeline/bridgeline/events/webhook"
	"github.com/bridgeline/bridgeline/shared/apierr"
)

// ToolSecret is the key that signs the requests Bridgeline makes to an assistant's tools,
// per Standard Webhooks, so the customer's server checks them with the same
// webhook.Verify as its events. Each assistant has its own, made when the assistant is
// created and shown once then, and again only when rotated; a webhook endpoint's secret
// is not used, so a receiver of events (perhaps a third party's) cannot forge a tool call.
// It is stored sealed (secretbox); only the control plane, which makes the requests,
// opens it: the persona worker never holds it.
type ToolSecret struct {
	// Secret is the current secret, sealed; "" for assistants created before tools
	// existed (RotateToolSecret gives them one).
	Secret string `json:"tool_secret,omitempty"`
	// Previous keeps signing beside Secret until PreviousExpiresAt after a rotation.
	Previous          string     `json:"previous_tool_secret,omitempty"`
	PreviousExpiresAt *time.Time `json:"previous_tool_secret_expires_at,omitempty"`
}

// ToolSecretOverlap is how long a rotated-out tool secret keeps signing beside the new
// one, as for webhook endpoints.
const ToolSecretOverlap = 24 * time.Hour

// Sealer seals secrets for storage and opens them to sign (*secretbox.LocalKey locally,
// *secretbox.KMS on AWS): the same one as webhook endpoints'.
type Sealer interface {
	Seal(ctx context.Context, plain string) (string, error)
	Open(ctx context.Context, sealed string) (string, error)
}

// newToolSecret makes a secret and its sealed form.
func (s *Service) newToolSecret(ctx context.Context) (plain, sealed string, err error) {
	plain, err = webhook.NewSecret()
	if err != nil {
		return "", "", err
	}
	if s.Secrets == nil {
		return plain, plain, nil
	}
	if sealed, err = s.Secrets.Seal(ctx, plain); err != nil {
		return "", "", fmt.Errorf("seal tool secret: %w", err)
	}
	return plain, sealed, nil
}

// RotateToolSecret gives the assistant a new tool secret, returned in clear in the
// assistant's ToolSecret.Secret (once: the record keeps it sealed); the current one keeps
// signing for ToolSecretOverlap. An assistant without one (created before tools) gets
// its first.
func (s *Service) RotateToolSecret(ctx context.Context, accountID, id string) (Assistant, error) {
	plain, sealed, err := s.newToolSecret(ctx)
	if err != nil {
		return Assistant{}, err
	}
	a, err := s.mutate(ctx, accountID, id, func(a *Assistant) error {
		if a.Status == StatusArchived {
			return archived(id)
		}
		prev, until := a.ToolSecret.Secret, s.now().Add(ToolSecretOverlap)
		a.ToolSecret = ToolSecret{Secret: sealed}
		if prev != "" {
			a.ToolSecret.Previous, a.ToolSecret.PreviousExpiresAt = prev, &until
		}
		return nil
	})
	if err != nil {
		return Assistant{}, err
	}
	a.ToolSecret.Secret = plain
	return a, nil
}

// ToolSigningSecrets are the secrets a request to the assistant's tools is signed with,
// in clear: the current one, and the previous one while its overlap lasts. Errors:
// resource_not_found; draft_incomplete (tool_secret) when the assistant has none. It reads
// the assistant's head only (every tool call of a call asks), never its versions.
func (s *Service) ToolSigningSecrets(ctx context.Context, accountID, id string) ([]string, error) {
	a, err := s.Store.GetAssistantHead(ctx, id)
	if a, err = apierr.Owned(a, a.AccountID, err, accountID, apierr.NotFound("assistant", id)); err != nil {
		return nil, err
	}
	if a.ToolSecret.Secret == "" {
		return nil, noToolSecret(id)
	}
	sealed := []string{a.ToolSecret.Secret}
	if p := a.ToolSecret; p.Previous != "" && p.PreviousExpiresAt != nil && s.now().Before(*p.PreviousExpiresAt) {
		sealed = append(sealed, p.Previous)
	}
	out := make([]string, 0, len(sealed))
	for _, v := range sealed {
		if s.Secrets != nil {
			if v, err = s.Secrets.Open(ctx, v); err != nil {
				return nil, fmt.Errorf("open tool secret of %s: %w", id, err)
			}
		}
		out = append(out, v)
	}
	return out, nil
}

func noToolSecret(id string) error {
	return apierr.Param(apierr.CodeDraftIncomplete, "tool_secret", fmt.Sprintf(
		"assistant %s has no tool secret (it was created before tools existed): POST /v1/assistants/%s/rotate_tool_secret makes one", id, id))
}
