package session

// Per-account limits on sessions, and the checks of a create request that depend on the
// line it calls from (its platform's handle forms, and which keys may use it).
//
// Concurrent sessions. Every session takes one of its account's slots when it is
// created, in the same store transaction as its first write (Store.CreateSession), so
// concurrent creates never exceed the limit; the write that ends the session gives the
// slot back, in the same transaction too. Outbound sessions (POST /v1/sessions) and
// inbound calls that get a session (an assistant line's, a customer_decides line's) take
// slots alike: each holds a room and a party on the calling platform. An inbound call
// over the limit is declined with end_reason concurrent_session_limit.
//
// A crash cannot leak a slot: the slot and the session's record change in one
// transaction, so a session holds a slot exactly while its record says so, and every
// record that holds one is a ringing or active session the sweeper ends at the latest
// when its ring timeout (ringing) or the maximum session length (active) is over.

import (
	"context"
	"errors"
	"fmt"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/platform"
)

// DefaultMaxConcurrentSessions is an account's limit of live sessions when neither the
// deployment (MAX_CONCURRENT_SESSIONS) nor the account sets one.
const DefaultMaxConcurrentSessions = 20

// ErrConcurrentLimit is Store.CreateSession's refusal: the account's live sessions are
// as many as its limit. Nothing was written.
var ErrConcurrentLimit = apierr.New(apierr.CodeConcurrentSessionLimit,
	"the account has as many live sessions as its limit allows; a new one can start once one of them ends")

// saveNew writes a new session and its call, taking one of the account's slots.
func (s *Service) saveNew(ctx context.Context, ses *Session, c call.Call) error {
	ses.Slot = true
	ses.SweepAt = s.sweepAt(*ses)
	return s.records.CreateSession(ctx, *ses, c, nil, s.set.MaxConcurrentSessions)
}

// declineOverLimit declines an inbound call whose session was refused a slot: the call
// is recorded without a session.
func (s *Service) declineOverLimit(ctx context.Context, plat platform.Platform, c call.Call) error {
	c.SessionID, c.HandledBy, c.AssistantID, c.VersionID = "", call.HandledByNone, "", ""
	c.Record(false)
	s.log().Warn("inbound call declined: concurrent session limit", "account_id", c.AccountID, "call_id", c.ID)
	return s.decline(ctx, plat, c, call.ReasonConcurrentSessionLimit)
}

// admit checks what of a create request depends on the line it calls from: the
// handle's form on the line's platform, and that a test key (live false) calls only
// through a platform that takes test keys (the sim).
func admit(live bool, req CreateRequest, l line.Line, plat platform.Kind) error {
	if err := plat.CheckHandle(req.PlatformHandle); err != nil {
		return apierr.Invalid("platform_handle", fmt.Sprintf("platform_handle on the %s platform must be %v", plat.Name(), err))
	}
	return req.keyAdmitted(live, plat, "line "+l.ID)
}

// keyAdmitted checks that the caller's key may place a call through plat: the request's
// KeyRule when it has one (the API's), else that a test key (live false) calls only
// through a platform that takes test keys. what names where the call would go.
func (req CreateRequest) keyAdmitted(live bool, plat platform.Kind, what string) error {
	if req.KeyRule != nil {
		return req.KeyRule(plat, what)
	}
	if !plat.TestKeys() && !live {
		return apierr.New(apierr.CodeLiveKeyRequired, fmt.Sprintf(
			"sk_test_ keys place calls only through the sim platform; %s is on %q: use an sk_live_ key", what, plat.Name()))
	}
	return nil
}

// isOverLimit reports whether err is the store's refusal of a slot.
func isOverLimit(err error) bool { return errors.Is(err, ErrConcurrentLimit) }
