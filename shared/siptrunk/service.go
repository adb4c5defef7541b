package siptrunk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/sip"
	"github.com/bridgeline/bridgeline/shared/retry"
)

// Sealer seals passwords for storage and opens them for LiveKit (secretbox: a key file
// locally, KMS on AWS).
type Sealer interface {
	Seal(ctx context.Context, plain string) (string, error)
	Open(ctx context.Context, sealed string) (string, error)
}

// LineStore is what the SIP line rules write: a line and its trunk together.
//
// CreateLineOnTrunk inserts l (its platform and handle free) with the assignment change
// (as line.Store.UpdateLine counts it) and saves t conditional on t.Revision, in one
// transaction; DeleteLineFromTrunk removes l (conditional on l.Revision) and its handle,
// takes l off its assistant's count, and saves t, in one. Either returns
// apierr.ErrConflict when any condition fails.
type LineStore interface {
	GetLine(ctx context.Context, id string) (line.Line, error)
	LineByHandle(ctx context.Context, platform, handle string) (line.Line, error)
	CreateLineOnTrunk(ctx context.Context, l line.Line, change *line.AssistantChange, t Trunk) error
	DeleteLineFromTrunk(ctx context.Context, l line.Line, t Trunk) error
}

// Calls lists a line's calls (call.Store), to refuse deleting a line in a call.
type Calls interface {
	ListCalls(ctx context.Context, accountID string, q call.ListQuery) ([]call.Call, error)
}

// Service applies the trunk and SIP line rules, and keeps LiveKit in step (Sync).
type Service struct {
	Store Store
	Lines LineStore
	// LineRules prepares a new line's settings as PATCH /v1/lines/{id} checks them.
	LineRules *line.Service
	Calls     Calls
	// Secrets seals passwords at rest; nil stores them in clear (unit tests only).
	Secrets Sealer
	// LiveKit is the SIP bridge's API; nil leaves LiveKit alone (a process that only
	// reads trunks).
	LiveKit LiveKit
	// Origination is where providers send calls (shown on every trunk); VideoOrigination
	// is the SIP video bridge's address, where calls that carry video go (no Host: none).
	Origination      Origination
	VideoOrigination Origination
	// Destinations are the egress rules a trunk's addresses must pass: an outbound
	// address's host, resolved, at create, update, Sync and each dial (egress.CheckName),
	// and each inbound allowed block (egress.CheckPrefix): no loopback, private,
	// link-local or other internal address, as for webhook and tool URLs. The zero
	// Policy refuses them all; the local stack's (WEBHOOK_ALLOW_LOOPBACK) lets loopback
	// through.
	Destinations egress.Policy
	// Resolver looks outbound host names up; nil is the system's.
	Resolver egress.Resolver
	Log      *slog.Logger
	Now      func() time.Time
}

// Origination is the deployment's SIP address: what a provider's origination URI names.
type Origination struct {
	Host string
	Port int
}

// URI is the origination URI, sip:host:port.
func (o Origination) URI() string {
	if o.Host == "" {
		return ""
	}
	return fmt.Sprintf("sip:%s:%d", o.Host, o.Port)
}

// Create records a trunk and makes it in LiveKit. Its passwords are sealed; the returned
// trunk carries them sealed too (the API never shows them).
func (s *Service) Create(ctx context.Context, accountID string, in Input) (Trunk, error) {
	if in.ClearInbound || in.ClearOutbound {
		return Trunk{}, apierr.Invalid("inbound", "inbound and outbound cannot be null on a new trunk: leave one out")
	}
	if in.Inbound == nil && in.Outbound == nil {
		return Trunk{}, apierr.Param(apierr.CodeParameterMissing, "inbound",
			"a trunk needs inbound (how the provider's calls reach you), outbound (where your calls go), or both")
	}
	if err := in.validate(); err != nil {
		return Trunk{}, err
	}
	if err := s.allowedAddresses(ctx, in); err != nil {
		return Trunk{}, err
	}
	if in.MediaEncryption == nil {
		enc := DefaultEncryption(in.Outbound)
		in.MediaEncryption = &enc
	}
	// An inbound side's credentials left out are generated (apply).
	for side, p := range map[string]*string{"outbound": outboundPassword(in.Outbound)} {
		if p == nil && userOf(side, in) != "" {
			return Trunk{}, apierr.Param(apierr.CodeParameterMissing, side+".password", side+".username needs "+side+".password")
		}
	}
	now := s.now()
	t := Trunk{ID: ident.New(IDPrefix), AccountID: accountID, Revision: 1, CreatedAt: now, UpdatedAt: now}
	if err := s.apply(ctx, &t, in); err != nil {
		return Trunk{}, err
	}
	if err := s.Store.CreateTrunk(ctx, t); err != nil {
		return Trunk{}, fmt.Errorf("create trunk: %w", err)
	}
	s.syncAfterWrite(ctx, t.ID)
	return t, nil
}

// allowedAddresses refuses, with 400 url_not_allowed, an outbound address whose host is,
// or resolves to, an internal address (checkOutbound), and an inbound allowed block that
// holds one (egress.Policy.CheckPrefix): the SIP bridge would dial, or take calls from,
// inside the deployment.
func (s *Service) allowedAddresses(ctx context.Context, in Input) error {
	if in.Inbound != nil {
		for i, a := range in.Inbound.AllowedAddresses {
			p, err := netip.ParsePrefix(a) // validate stored the masked CIDR
			if err != nil {
				return apierr.Invalid("inbound.allowed_addresses", fmt.Sprintf("inbound.allowed_addresses[%d] %q is not a CIDR block", i, a))
			}
			if err := s.Destinations.CheckPrefix(p); err != nil {
				return apierr.Param(apierr.CodeURLNotAllowed, "inbound.allowed_addresses", fmt.Sprintf(
					"inbound.allowed_addresses[%d] %q holds loopback, private, link-local or other internal addresses (%s): give the provider's public addresses",
					i, a, reason(err)))
			}
		}
	}
	if in.Outbound == nil {
		return nil
	}
	return s.checkOutbound(ctx, "outbound.address", in.Outbound.Address)
}

// checkOutbound resolves an outbound address's host and checks every address it names
// with the egress rules (egress.Policy.CheckName): 400 url_not_allowed when one is
// internal, 400 parameter_invalid when the name does not exist, 502
// upstream_unavailable when the lookup failed. param names the field in the error.
func (s *Service) checkOutbound(ctx context.Context, param, address string) error {
	host := address
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	err := s.Destinations.CheckName(ctx, s.Resolver, host)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, egress.ErrBlocked), errors.Is(err, egress.ErrNotCanonical):
		return apierr.Param(apierr.CodeURLNotAllowed, param, fmt.Sprintf(
			"outbound.address %q must not be, or resolve to, a loopback, private, link-local or other internal address (%s)", address, reason(err)))
	case errors.Is(err, egress.ErrNoAddress):
		return apierr.Invalid(param, fmt.Sprintf("outbound.address %q: the host name does not resolve: give the provider's SIP host", address))
	default:
		s.log().Warn("SIP trunk host lookup failed", "host", host, "err", err)
		return apierr.New(apierr.CodeUpstreamUnavailable, fmt.Sprintf("outbound.address %q could not be resolved just now: try again", address))
	}
}

// reason is an egress refusal without its sentinel's words.
func reason(err error) string {
	r := err.Error()
	for _, sentinel := range []error{egress.ErrBlocked, egress.ErrNotCanonical} {
		r = strings.ReplaceAll(r, sentinel.Error()+": ", "")
	}
	return r
}

func outboundPassword(out *OutboundInput) *string {
	if out == nil {
		return nil
	}
	return out.Password
}

func userOf(side string, in Input) string {
	if side == "inbound" && in.Inbound != nil {
		return in.Inbound.Username
	}
	if side == "outbound" && in.Outbound != nil {
		return in.Outbound.Username
	}
	return ""
}

// Get returns the account's trunk, or not-found for any other id.
func (s *Service) Get(ctx context.Context, accountID, id string) (Trunk, error) {
	t, err := s.Store.GetTrunk(ctx, id)
	return apierr.Owned(t, t.AccountID, err, accountID, apierr.NotFound("sip_trunk", id))
}

// List returns a page of the account's trunks, newest first.
func (s *Service) List(ctx context.Context, accountID string, q listing.Query) ([]Trunk, error) {
	return s.Store.ListTrunks(ctx, accountID, q)
}

// Update applies a PATCH, conditionally, reading again when another write got there
// first, then brings LiveKit in step.
func (s *Service) Update(ctx context.Context, accountID, id string, in Input) (Trunk, error) {
	if err := in.validate(); err != nil {
		return Trunk{}, err
	}
	if err := s.allowedAddresses(ctx, in); err != nil {
		return Trunk{}, err
	}
	var out Trunk
	err := retry.OnConflict(func() error {
		t, err := s.Get(ctx, accountID, id)
		if err != nil {
			return err
		}
		if err := s.apply(ctx, &t, in); err != nil {
			return err
		}
		if t.Inbound == nil && t.Outbound == nil {
			return apierr.Invalid("inbound", "a trunk keeps inbound, outbound or both: it cannot lose both")
		}
		t.UpdatedAt = s.now()
		if err := s.Store.UpdateTrunk(ctx, t); err != nil {
			return fmt.Errorf("update trunk %s: %w", id, err)
		}
		t.Revision++
		out = t
		return nil
	})
	if err != nil {
		return Trunk{}, err
	}
	s.syncAfterWrite(ctx, id)
	return out, nil
}

// Delete removes a trunk no line uses (trunk_in_use otherwise), then what LiveKit holds
// for it. Deleting it again is not found.
func (s *Service) Delete(ctx context.Context, accountID, id string) (Trunk, error) {
	var out Trunk
	err := retry.OnConflict(func() error {
		t, err := s.Get(ctx, accountID, id)
		if err != nil {
			return err
		}
		if n := len(t.Numbers); n > 0 {
			return apierr.New(apierr.CodeTrunkInUse, fmt.Sprintf("sip trunk %s carries %d line(s) (%s...): delete them first", id, n, t.Numbers[0]))
		}
		if err := s.Store.DeleteTrunk(ctx, t); err != nil {
			return fmt.Errorf("delete trunk %s: %w", id, err)
		}
		out = t
		return nil
	})
	if err != nil {
		return Trunk{}, err
	}
	s.syncAfterWrite(ctx, id)
	return out, nil
}

// apply lays an input on t, sealing the passwords it brings and keeping the stored ones
// it leaves out (with their username unchanged).
func (s *Service) apply(ctx context.Context, t *Trunk, in Input) error {
	if in.Name != nil {
		t.Name = *in.Name
	}
	if in.MediaEncryption != nil {
		t.MediaEncryption = *in.MediaEncryption
	}
	if in.ClearInbound {
		t.Inbound = nil
	}
	if in.ClearOutbound {
		t.Outbound = nil
	}
	if in.Inbound != nil {
		next := &Inbound{AllowedAddresses: slices.Clone(in.Inbound.AllowedAddresses), Username: in.Inbound.Username}
		if err := s.inboundCredentials(ctx, next, in.Inbound.Password, t.Inbound); err != nil {
			return err
		}
		t.Inbound = next
	}
	if in.Outbound != nil {
		next := &Outbound{Address: in.Outbound.Address, Transport: in.Outbound.Transport, Username: in.Outbound.Username}
		var oldUser, oldPass string
		if t.Outbound != nil {
			oldUser, oldPass = t.Outbound.Username, t.Outbound.Password
			// The stored password goes only where it was given for: sending it to
			// another host or over another transport needs it again.
			moved := !strings.EqualFold(t.Outbound.Address, in.Outbound.Address) || t.Outbound.Transport != in.Outbound.Transport
			if moved && oldPass != "" && in.Outbound.Username != "" && in.Outbound.Password == nil {
				return apierr.Param(apierr.CodeOutboundPassword, "outbound.password", fmt.Sprintf(
					"changing outbound.address or outbound.transport (from %s over %s to %s over %s) needs outbound.password in the same request: the stored password is only sent where it was given for",
					t.Outbound.Address, t.Outbound.Transport, in.Outbound.Address, in.Outbound.Transport))
			}
		}
		pass, err := s.password(ctx, "outbound", in.Outbound.Username, in.Outbound.Password, oldUser, oldPass)
		if err != nil {
			return err
		}
		next.Password = pass
		t.Outbound = next
	}
	return nil
}

func (in *Inbound) user() string {
	if in == nil {
		return ""
	}
	return in.Username
}

func (in *Inbound) pass() string {
	if in == nil {
		return ""
	}
	return in.Password
}

// inboundCredentials gives next (an inbound side being written over old) its digest
// credentials: a username left out is old's, or a generated one; a password left out is
// old's when the username is old's, or else a generated one, which next.NewPassword
// carries in clear for the answer to show once. Every inbound side has credentials: the
// bridge challenges each INVITE for them, so only the provider given them reaches the
// trunk's lines (docs/security.md, "Whose number it is").
func (s *Service) inboundCredentials(ctx context.Context, next *Inbound, given *string, old *Inbound) error {
	if next.Username == "" {
		next.Username = old.user()
	}
	if next.Username == "" {
		u, err := generate(GeneratedUsernameLen, lowerAlnum)
		if err != nil {
			return err
		}
		next.Username = "bl" + u
	}
	if given == nil && next.Username == old.user() && old.pass() != "" {
		next.Password = old.pass()
		return nil
	}
	plain := ""
	if given != nil {
		plain = *given
	} else {
		p, err := generate(GeneratedPasswordLen, alnum)
		if err != nil {
			return err
		}
		plain, next.NewPassword = p, p
	}
	if s.Secrets == nil {
		next.Password = plain
		return nil
	}
	sealed, err := s.Secrets.Seal(ctx, plain)
	if err != nil {
		return fmt.Errorf("seal inbound password: %w", err)
	}
	next.Password = sealed
	return nil
}

// password is the sealed password of a side: the new one sealed, or the stored one when
// none is given and the username is the stored one's.
func (s *Service) password(ctx context.Context, side, user string, given *string, oldUser, oldSealed string) (string, error) {
	if user == "" {
		return "", nil
	}
	if given == nil {
		if user != oldUser || oldSealed == "" {
			return "", apierr.Param(apierr.CodeParameterMissing, side+".password", side+".username needs "+side+".password")
		}
		return oldSealed, nil
	}
	if s.Secrets == nil {
		return *given, nil
	}
	sealed, err := s.Secrets.Seal(ctx, *given)
	if err != nil {
		return "", fmt.Errorf("seal %s password: %w", side, err)
	}
	return sealed, nil
}

// open returns a sealed password in clear, for LiveKit.
func (s *Service) open(ctx context.Context, sealed string) (string, error) {
	if s.Secrets == nil || sealed == "" {
		return sealed, nil
	}
	return s.Secrets.Open(ctx, sealed)
}

// LineInput is POST /v1/lines for a SIP line: its number, its trunk, and what PATCH
// /v1/lines/{id} takes.
type LineInput struct {
	Platform string
	Handle   string
	TrunkID  string
	Settings line.Update
}

// CreateLine adds one of the account's numbers as a SIP line on one of its trunks, and
// has LiveKit take its calls. A number is one line in the whole deployment.
func (s *Service) CreateLine(ctx context.Context, accountID string, in LineInput) (line.Line, error) {
	switch {
	case in.Platform == "":
		return line.Line{}, apierr.Missing("platform")
	case in.Platform != sip.Name:
		return line.Line{}, apierr.Invalid("platform", fmt.Sprintf("platform must be sip: %s lines are provisioned by the operator", in.Platform))
	case in.Handle == "":
		return line.Line{}, apierr.Missing("handle")
	case !platform.IsE164(in.Handle):
		return line.Line{}, apierr.Invalid("handle", "handle must be the line's number in E.164: + and 8-15 digits, e.g. +15550100002")
	case in.TrunkID == "":
		return line.Line{}, apierr.Missing("sip_trunk_id")
	case !ident.Valid(IDPrefix, in.TrunkID):
		return line.Line{}, apierr.Invalid("sip_trunk_id", "sip_trunk_id must be a trunk_ id")
	}
	var out line.Line
	err := retry.OnConflict(func() error {
		t, err := s.Store.GetTrunk(ctx, in.TrunkID)
		if _, err := apierr.Owned(t, t.AccountID, err, accountID,
			apierr.Param(apierr.CodeResourceNotFound, "sip_trunk_id", fmt.Sprintf("no such sip trunk: %q", in.TrunkID))); err != nil {
			return err
		}
		if len(t.Numbers) >= MaxLines {
			return apierr.New(apierr.CodeTrunkLineLimit, fmt.Sprintf("sip trunk %s carries %d lines, the most one trunk may", t.ID, MaxLines))
		}
		l, change, err := s.LineRules.New(ctx, accountID, sip.Name, in.Handle, in.Settings)
		if err != nil {
			return err
		}
		l.SIPTrunkID = t.ID
		t.Numbers = append(t.Numbers, l.Handle)
		t.UpdatedAt = l.CreatedAt
		err = s.Lines.CreateLineOnTrunk(ctx, l, change, t)
		if errors.Is(err, apierr.ErrConflict) {
			if held, herr := s.Lines.LineByHandle(ctx, sip.Name, in.Handle); herr == nil {
				if held.AccountID == accountID {
					return apierr.Param(apierr.CodeHandleTaken, "handle", fmt.Sprintf("%s is a line already: %s", in.Handle, held.ID))
				}
				// Another account's line: a number routes to one trunk (LiveKit's rule). If
				// the number is this account's, the operator releases it (ReleaseNumber).
				return apierr.Param(apierr.CodeHandleTaken, "handle", fmt.Sprintf(
					"%s is a line of another account: if the number is yours, ask the operator to release it "+
						"(bridgeline admin line release), then claim it again", in.Handle))
			}
		}
		if err != nil {
			return fmt.Errorf("create line %s: %w", in.Handle, err)
		}
		out = l
		return nil
	})
	if err != nil {
		return line.Line{}, err
	}
	s.syncAfterWrite(ctx, in.TrunkID)
	return out, nil
}

// DeleteLine removes one of the account's SIP lines, unless a call on it is ringing or
// in progress (line_in_call), and has LiveKit stop taking its calls. Sim lines are the
// operator's (line_not_deletable).
func (s *Service) DeleteLine(ctx context.Context, accountID, id string) (line.Line, error) {
	var out line.Line
	var trunkID string
	err := retry.OnConflict(func() error {
		l, err := s.Lines.GetLine(ctx, id)
		if l, err = apierr.Owned(l, l.AccountID, err, accountID, apierr.NotFound("line", id)); err != nil {
			return err
		}
		if l.Platform != sip.Name || l.SIPTrunkID == "" {
			return apierr.New(apierr.CodeLineNotDeletable, fmt.Sprintf("line %s is a %s line the operator provisioned: ask the operator to remove it", id, l.Platform))
		}
		if err := s.checkNoCall(ctx, l); err != nil {
			return err
		}
		t, err := s.Store.GetTrunk(ctx, l.SIPTrunkID)
		if err != nil && !errors.Is(err, apierr.ErrNotFound) {
			return err
		}
		t.Numbers = slices.DeleteFunc(slices.Clone(t.Numbers), func(n string) bool { return n == l.Handle })
		t.UpdatedAt = s.now()
		if err := s.Lines.DeleteLineFromTrunk(ctx, l, t); err != nil {
			return fmt.Errorf("delete line %s: %w", id, err)
		}
		out, trunkID = l, t.ID
		return nil
	})
	if err != nil {
		return line.Line{}, err
	}
	s.syncAfterWrite(ctx, trunkID)
	return out, nil
}

// ReleaseNumber is the operator's remedy for a squatted number (docs/security.md, "Whose
// number it is"): it deletes the SIP line that holds the number, whichever account's it
// is, as DELETE /v1/lines/{id} would (refused while a call on it rings or is in
// progress: line_in_call), so that the number's owner can claim it. LiveKit stops
// routing the number to the old trunk at once when s has LiveKit, else at the
// sweeper's next reconcile. resource_not_found when no SIP line holds the number.
func (s *Service) ReleaseNumber(ctx context.Context, handle string) (line.Line, error) {
	if !platform.IsE164(handle) {
		return line.Line{}, apierr.Invalid("handle", "handle must be a number in E.164: + and 8-15 digits")
	}
	l, err := s.Lines.LineByHandle(ctx, sip.Name, handle)
	if errors.Is(err, apierr.ErrNotFound) {
		return line.Line{}, apierr.Param(apierr.CodeResourceNotFound, "handle", fmt.Sprintf("no SIP line holds %s", handle))
	}
	if err != nil {
		return line.Line{}, err
	}
	out, err := s.DeleteLine(ctx, l.AccountID, l.ID)
	if err == nil {
		s.log().Info("number released by the operator", "line_id", out.ID, "account_id", out.AccountID, "sip_trunk_id", out.SIPTrunkID)
	}
	return out, err
}

// checkNoCall refuses when a call on the line rings or is in progress.
func (s *Service) checkNoCall(ctx context.Context, l line.Line) error {
	for _, status := range []string{call.StatusRinging, call.StatusActive} {
		calls, err := s.Calls.ListCalls(ctx, l.AccountID, call.ListQuery{Query: listing.Query{Limit: 1}, LineID: l.ID, Status: status})
		if err != nil {
			return fmt.Errorf("calls of line %s: %w", l.ID, err)
		}
		if len(calls) > 0 {
			return apierr.New(apierr.CodeLineInCall, fmt.Sprintf("line %s has a call %s (%s): delete the line once it has ended", l.ID, status, calls[0].ID))
		}
	}
	return nil
}

// CheckDial refuses a call from a line whose trunk cannot dial (trunk_has_no_outbound).
func (s *Service) CheckDial(ctx context.Context, lineID string) error {
	l, err := s.Lines.GetLine(ctx, lineID)
	if err != nil {
		return fmt.Errorf("line %s: %w", lineID, err)
	}
	t, err := s.Store.GetTrunk(ctx, l.SIPTrunkID)
	if err != nil {
		return fmt.Errorf("trunk of line %s: %w", l.ID, err)
	}
	if t.Outbound == nil {
		return apierr.Param(apierr.CodeTrunkNoOutbound, "line_id", fmt.Sprintf("line %s is on sip trunk %s, which has no outbound side: add one (PATCH /v1/sip_trunks/%s) to place calls", l.ID, t.ID, t.ID))
	}
	return s.checkOutbound(ctx, "line_id", t.Outbound.Address)
}

func (s *Service) now() time.Time { return s.Now().UTC().Truncate(time.Millisecond) }

func (s *Service) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}
