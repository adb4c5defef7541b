package session

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

// CustomerIdentityPrefix begins the LiveKit identity of every customer client in a session
// room. Each minted token has its own identity (the prefix and 16 random characters), so
// a second holder joins beside the first instead of replacing it: LiveKit disconnects an
// earlier connection of the same identity (DUPLICATE_IDENTITY), which with one shared
// identity let any later token silently take over the customer's place. A client that
// reconnects with its own token keeps its identity and does replace its old connection.
const CustomerIdentityPrefix = "customer-"

// legacyCustomerIdentity is the one identity every token had before identities were per
// token. Tokens live at most rtc.MaxTokenTTL, so it is only still seen for that long
// after an upgrade; it counts as a customer's until then.
const legacyCustomerIdentity = "customer"

// DefaultParticipantName is the display name of a customer token minted without one.
const DefaultParticipantName = "customer"

// MaxParticipantNameLen bounds a token's display name, in characters.
const MaxParticipantNameLen = 128

// IsCustomerIdentity reports whether a LiveKit identity is a customer client's.
func IsCustomerIdentity(identity string) bool {
	return strings.HasPrefix(identity, CustomerIdentityPrefix) || identity == legacyCustomerIdentity
}

// NewCustomerIdentity returns a fresh customer identity: the prefix and 16 characters of
// Crockford base32 (80 random bits), which nobody can guess or collide with.
func NewCustomerIdentity() string {
	const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("session: crypto/rand failed: " + err.Error())
	}
	for i := range b {
		b[i] = alphabet[b[i]&31]
	}
	return CustomerIdentityPrefix + string(b[:])
}

// TokenRequest is the options of POST /v1/sessions/{id}/tokens.
type TokenRequest struct {
	// Name is the participant's display name (LiveKit's name); empty means
	// DefaultParticipantName.
	Name string
	// WatchOnly mints a subscribe-only token: it can neither publish tracks nor send data.
	// Nil: watch-only in an assistant session, publishing in a human one.
	WatchOnly *bool
}

// Validate checks the request's values.
func (r TokenRequest) Validate() error {
	if r.Name == "" {
		return nil
	}
	switch {
	case !utf8.ValidString(r.Name) || strings.IndexFunc(r.Name, unicode.IsControl) >= 0:
		return apierr.Invalid("name", "name must be valid UTF-8 without control characters")
	case utf8.RuneCountInString(r.Name) > MaxParticipantNameLen:
		return apierr.Invalid("name", fmt.Sprintf("name must be at most %d characters", MaxParticipantNameLen))
	case strings.TrimSpace(r.Name) == "":
		return apierr.Invalid("name", "name must not be blank")
	}
	return nil
}

// Token is a minted customer token with what it allows.
type Token struct {
	rtc.Token
	// Name is the participant's display name.
	Name string
	// WatchOnly: the token can only subscribe.
	WatchOnly bool
}

// Token mints a fresh participant token for a live session, with its own identity.
//
// Tokens of an assistant session are watch-only: the assistant talks with the caller,
// and a customer client there only watches (a watch_only of false is refused, 400).
//
// Errors: parameter errors; resource_not_found; session_ended once the session is over.
func (s *Service) Token(ctx context.Context, accountID, id string, req TokenRequest) (Token, error) {
	if err := req.Validate(); err != nil {
		return Token{}, err
	}
	ses, err := s.Get(ctx, accountID, id)
	if err != nil {
		return Token{}, err
	}
	if ses.Over() {
		return Token{}, apierr.New(apierr.CodeSessionEnded, fmt.Sprintf("session %s has ended", id))
	}
	if ses.Mode == ModeAssistant && req.WatchOnly != nil && !*req.WatchOnly {
		return Token{}, apierr.Invalid("watch_only",
			"an assistant session's tokens are watch-only: the assistant talks with the caller; omit watch_only or set it true")
	}
	return s.customerToken(ses.ID, ses.Mode, req)
}

// ReplayToken mints the token of an idempotent replay of an answer that carried one
// (the idempotency record keeps no token): a fresh token for the session as Token mints
// it, also once the session has ended, because the replayed answer had one. A token for
// an ended session joins nothing: its room is gone and LiveKit creates no room.
func (s *Service) ReplayToken(ctx context.Context, accountID, id string, req TokenRequest) (Token, error) {
	ses, err := s.Get(ctx, accountID, id)
	if err != nil {
		return Token{}, err
	}
	return s.customerToken(ses.ID, ses.Mode, req)
}

// customerToken mints a customer client's token for a session room of the given mode.
func (s *Service) customerToken(room, mode string, req TokenRequest) (Token, error) {
	watch := mode == ModeAssistant
	if req.WatchOnly != nil {
		watch = watch || *req.WatchOnly
	}
	name := req.Name
	if name == "" {
		name = DefaultParticipantName
	}
	tok, err := s.rooms.ParticipantToken(rtc.Grant{Room: room, Identity: NewCustomerIdentity(), Name: name, SubscribeOnly: watch})
	if err != nil {
		return Token{}, err
	}
	return Token{Token: tok, Name: name, WatchOnly: watch}, nil
}

// otherCustomerPresent reports whether a customer client other than leaving is still in
// the room, asking LiveKit (which sends participant_left once the participant is gone
// from the room, so the last of two leaving together finds neither).
func (s *Service) otherCustomerPresent(ctx context.Context, room, leaving string) (bool, error) {
	ps, err := s.rooms.Participants(ctx, room)
	if err != nil {
		return false, err
	}
	for _, p := range ps {
		if p.Identity != leaving && IsCustomerIdentity(p.Identity) && p.Kind != rtc.KindAgent && p.Kind != rtc.KindSIP {
			return true, nil
		}
	}
	return false, nil
}

// watchOnly makes every customer client in the room that may publish subscribe-only: an
// assistant session's clients only watch. Tokens minted for one are watch-only already;
// this reaches the clients that joined with a publishing token before the call went to
// the assistant (a customer_decides call handed over at its decision timeout, whose
// call.incoming token was minted for a customer who would answer).
//
// The clients are changed concurrently: the whole takes about two LiveKit calls, however
// many clients there are.
func (s *Service) watchOnly(ctx context.Context, room string) error {
	ps, err := s.rooms.Participants(ctx, room)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, len(ps))
	for i, p := range ps {
		if IsCustomerIdentity(p.Identity) && p.Kind == rtc.KindStandard && p.CanPublish {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.rooms.SubscribeOnly(ctx, room, p.Identity)
			}()
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// WatchOnlyTimeout bounds watchOnly at a handover: the list and the permission changes.
const WatchOnlyTimeout = 3 * time.Second
