package avatars

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
)

// Avatar is an account's own avatar: what the store keeps (the files are in Assets).
type Avatar struct {
	ID        string    `json:"id"`
	AccountID string    `json:"account_id"`
	Name      string    `json:"name"`
	Face      Rect      `json:"face"`
	Parts     []Part    `json:"parts"`
	CreatedAt time.Time `json:"created_at"`
}

// Part returns the named part.
func (a Avatar) Part(name string) (Part, bool) {
	for _, p := range a.Parts {
		if p.Name == name {
			return p, true
		}
	}
	return Part{}, false
}

var idPattern = regexp.MustCompile(`^ava_[0-9a-z]{26}$`)

// IsCustomID tells an id New made from a built-in's (ava_iris): the built-ins' ids are
// words, never 26 characters of base32.
func IsCustomID(id string) bool { return idPattern.MatchString(id) }

// Store keeps avatars. CreateAvatar returns apierr.ErrConflict when the id exists;
// GetAvatar apierr.ErrNotFound when it does not; ListAvatars returns the account's
// avatars newest first (at most MaxPerAccount exist); DeleteAvatar of an absent id is
// no error.
type Store interface {
	CreateAvatar(ctx context.Context, a Avatar) error
	GetAvatar(ctx context.Context, id string) (Avatar, error)
	ListAvatars(ctx context.Context, accountID string) ([]Avatar, error)
	DeleteAvatar(ctx context.Context, id string) error
}

// Service creates, reads and deletes avatars.
type Service struct {
	Store  Store
	Assets Assets
	// Assistants finds the published versions that use an avatar (DELETE refuses then).
	Assistants assistant.Store
	Now        func() time.Time
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Create stores a validated sheet as a new avatar of the account: the files first, then
// the record, so that a record never names files that are not there.
func (s *Service) Create(ctx context.Context, accountID string, sh Sheet) (Avatar, error) {
	own, err := s.Store.ListAvatars(ctx, accountID)
	if err != nil {
		return Avatar{}, err
	}
	if len(own) >= MaxPerAccount {
		return Avatar{}, apierr.New(apierr.CodeAvatarLimit, fmt.Sprintf(
			"the account has %d avatars, as many as it may; delete one it no longer uses", MaxPerAccount))
	}
	a := Avatar{ID: ident.New("ava"), AccountID: accountID, Name: sh.Name, Face: sh.Face, Parts: sh.Parts,
		CreatedAt: s.now().UTC().Truncate(time.Millisecond)}
	for _, p := range a.Parts {
		if err := s.Assets.Put(ctx, Key(accountID, a.ID, p), sh.Files[p.Name], ContentType(p.Format)); err != nil {
			s.removeFiles(ctx, a)
			return Avatar{}, err
		}
	}
	if err := s.Store.CreateAvatar(ctx, a); err != nil {
		s.removeFiles(ctx, a)
		return Avatar{}, err
	}
	return a, nil
}

func (s *Service) removeFiles(ctx context.Context, a Avatar) error {
	var errs []error
	for _, p := range a.Parts {
		errs = append(errs, s.Assets.Delete(ctx, Key(a.AccountID, a.ID, p)))
	}
	return errors.Join(errs...)
}

// Get reads one of the account's avatars.
func (s *Service) Get(ctx context.Context, accountID, id string) (Avatar, error) {
	if !IsCustomID(id) {
		return Avatar{}, apierr.NotFound("avatar", id)
	}
	a, err := s.Store.GetAvatar(ctx, id)
	return apierr.Owned(a, a.AccountID, err, accountID, apierr.NotFound("avatar", id))
}

// List lists the account's avatars, newest first.
func (s *Service) List(ctx context.Context, accountID string) ([]Avatar, error) {
	return s.Store.ListAvatars(ctx, accountID)
}

// Exists reports whether id is an avatar of the account (the assistants' check).
func (s *Service) Exists(ctx context.Context, accountID, id string) (bool, error) {
	_, err := s.Get(ctx, accountID, id)
	if apierr.Is(err, apierr.CodeResourceNotFound) {
		return false, nil
	}
	return err == nil, err
}

// PreviewURLs are short-lived GET URLs of each part, by part name.
func (s *Service) PreviewURLs(ctx context.Context, a Avatar) (map[string]string, time.Time, error) {
	out := make(map[string]string, len(a.Parts))
	var exp time.Time
	for _, p := range a.Parts {
		u, e, err := s.Assets.URL(ctx, Key(a.AccountID, a.ID, p), URLTTL)
		if err != nil {
			return nil, time.Time{}, err
		}
		out[p.Name], exp = u, e
	}
	return out, exp, nil
}

// UsedBy lists the published versions (by id) of the account's assistants that use the
// avatar.
func (s *Service) UsedBy(ctx context.Context, accountID, id string) ([]string, error) {
	var out []string
	q := assistant.ListQuery{Query: listing.Query{Limit: 100}, Status: "all"}
	for {
		page, err := s.Assistants.ListAssistants(ctx, accountID, q)
		if err != nil {
			return nil, err
		}
		more := len(page) > q.Limit
		if more {
			page = page[:q.Limit]
		}
		for _, a := range page {
			for _, v := range a.Versions {
				if v.AvatarID == id {
					out = append(out, v.ID)
				}
			}
		}
		if !more || len(page) == 0 {
			return out, nil
		}
		q.StartingAfter = page[len(page)-1].ID
	}
}

// Delete removes an avatar that no published version uses: its record, then its files.
func (s *Service) Delete(ctx context.Context, accountID, id string) error {
	a, err := s.Get(ctx, accountID, id)
	if err != nil {
		return err
	}
	used, err := s.UsedBy(ctx, accountID, id)
	if err != nil {
		return err
	}
	if len(used) > 0 {
		return apierr.New(apierr.CodeAvatarInUse, fmt.Sprintf(
			"avatar %s is used by %d published assistant version(s), the first %s: a version keeps the face it was published with, so the avatar stays while one names it",
			id, len(used), used[0]))
	}
	if err := s.Store.DeleteAvatar(ctx, id); err != nil {
		return err
	}
	return s.removeFiles(ctx, a)
}
