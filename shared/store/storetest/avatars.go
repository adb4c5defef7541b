package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/avatars"
	"github.com/bridgeline/bridgeline/shared/ident"
)

// AvatarStore is what a store keeps for accounts' own avatars.
type AvatarStore interface {
	avatars.Store
}

// RunAvatars runs the avatar cases, each against a fresh store from newStore.
func RunAvatars(t *testing.T, newStore func(t *testing.T) AvatarStore) {
	for name, c := range avatarCases {
		t.Run(name, func(t *testing.T) { c(t, newStore(t)) })
	}
}

var avatarCases = map[string]func(*testing.T, AvatarStore){
	"create get list round trip, by account, newest first": avatarRoundTrip,
	"an id is created once":                                avatarConflict,
	"a deleted avatar is gone; deleting twice is fine":     avatarDelete,
}

func newAvatar(accountID string) avatars.Avatar {
	return avatars.Avatar{ID: ident.New("ava"), AccountID: accountID, Name: "Mascot",
		Face: avatars.Rect{X: 10, Y: 20, Width: 200, Height: 220},
		Parts: []avatars.Part{
			{Name: avatars.PartBase, Format: avatars.FormatPNG, Width: 640, Height: 360, Bytes: 1000},
			{Name: avatars.PartMouthOpen, Format: avatars.FormatWebP, Width: 80, Height: 40, Anchor: avatars.Point{X: 60, Y: 150}, Bytes: 99},
		},
		CreatedAt: time.Now().UTC().Truncate(time.Millisecond)}
}

func avatarRoundTrip(t *testing.T, s AvatarStore) {
	acct, other := ident.New("acct"), ident.New("acct")
	first, second := newAvatar(acct), newAvatar(acct)
	for _, a := range []avatars.Avatar{first, second, newAvatar(other)} {
		if err := s.CreateAvatar(ctx(t), a); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.GetAvatar(ctx(t), second.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != second.Name || got.AccountID != acct || !got.CreatedAt.Equal(second.CreatedAt) || got.Face != second.Face ||
		len(got.Parts) != 2 || got.Parts[1] != second.Parts[1] {
		t.Errorf("GetAvatar = %+v, want %+v", got, second)
	}
	list, err := s.ListAvatars(ctx(t), acct)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != second.ID || list[1].ID != first.ID {
		t.Errorf("ListAvatars has %d, want the account's 2 newest first", len(list))
	}
	if _, err := s.GetAvatar(ctx(t), ident.New("ava")); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("GetAvatar of an absent id: %v, want ErrNotFound", err)
	}
	if list, err := s.ListAvatars(ctx(t), ident.New("acct")); err != nil || len(list) != 0 {
		t.Errorf("an account without avatars lists %d, %v", len(list), err)
	}
}

func avatarConflict(t *testing.T, s AvatarStore) {
	a := newAvatar(ident.New("acct"))
	if err := s.CreateAvatar(ctx(t), a); err != nil {
		t.Fatal(err)
	}
	b := a
	b.Name = "Other"
	if err := s.CreateAvatar(ctx(t), b); !errors.Is(err, apierr.ErrConflict) {
		t.Errorf("second create with the same id: %v, want ErrConflict", err)
	}
	if got, _ := s.GetAvatar(ctx(t), a.ID); got.Name != a.Name {
		t.Errorf("the second create overwrote the first: name %q", got.Name)
	}
}

func avatarDelete(t *testing.T, s AvatarStore) {
	a := newAvatar(ident.New("acct"))
	if err := s.CreateAvatar(ctx(t), a); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.DeleteAvatar(ctx(t), a.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.GetAvatar(ctx(t), a.ID); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("GetAvatar after delete: %v, want ErrNotFound", err)
	}
	if list, _ := s.ListAvatars(ctx(t), a.AccountID); len(list) != 0 {
		t.Errorf("ListAvatars after delete has %d", len(list))
	}
}
