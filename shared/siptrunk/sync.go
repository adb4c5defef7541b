package siptrunk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/platform/sip"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

// LiveKit is the SIP bridge's trunk and dispatch-rule API (shared/rtc/lkhttp's Client).
type LiveKit interface {
	ListSIPInboundTrunks(ctx context.Context) ([]rtc.SIPInboundTrunk, error)
	CreateSIPInboundTrunk(ctx context.Context, t rtc.SIPInboundTrunk) (rtc.SIPInboundTrunk, error)
	UpdateSIPInboundTrunk(ctx context.Context, t rtc.SIPInboundTrunk) (rtc.SIPInboundTrunk, error)
	ListSIPOutboundTrunks(ctx context.Context) ([]rtc.SIPOutboundTrunk, error)
	CreateSIPOutboundTrunk(ctx context.Context, t rtc.SIPOutboundTrunk) (rtc.SIPOutboundTrunk, error)
	UpdateSIPOutboundTrunk(ctx context.Context, t rtc.SIPOutboundTrunk) (rtc.SIPOutboundTrunk, error)
	DeleteSIPTrunk(ctx context.Context, id string) error
	ListSIPDispatchRules(ctx context.Context) ([]rtc.SIPDispatchRule, error)
	CreateSIPDispatchRule(ctx context.Context, r rtc.SIPDispatchRule) (rtc.SIPDispatchRule, error)
	UpdateSIPDispatchRule(ctx context.Context, r rtc.SIPDispatchRule) (rtc.SIPDispatchRule, error)
	DeleteSIPDispatchRule(ctx context.Context, id string) error
}

// SyncTimeout bounds the Sync a write does before it answers; what it could not finish
// Reconcile finishes.
const SyncTimeout = 5 * time.Second

// tag is the metadata of everything Bridgeline keeps in LiveKit for a trunk: how its
// objects are told from others', and whose they are.
type tag struct {
	Trunk string `json:"bridgeline_trunk"`
}

func tagOf(trunkID string) string {
	b, _ := json.Marshal(tag{Trunk: trunkID})
	return string(b)
}

// trunkOf is the trunk id a LiveKit object's metadata names, "" when it is not ours.
func trunkOf(metadata string) string {
	var t tag
	if json.Unmarshal([]byte(metadata), &t) != nil {
		return ""
	}
	return t.Trunk
}

// held is what LiveKit holds for one trunk.
type held struct {
	in    []rtc.SIPInboundTrunk
	out   []rtc.SIPOutboundTrunk
	rules []rtc.SIPDispatchRule
}

// snapshot is what LiveKit holds for Bridgeline's trunks, by trunk id.
func (s *Service) snapshot(ctx context.Context) (map[string]*held, error) {
	ins, err := s.LiveKit.ListSIPInboundTrunks(ctx)
	if err != nil {
		return nil, err
	}
	outs, err := s.LiveKit.ListSIPOutboundTrunks(ctx)
	if err != nil {
		return nil, err
	}
	rules, err := s.LiveKit.ListSIPDispatchRules(ctx)
	if err != nil {
		return nil, err
	}
	m := map[string]*held{}
	get := func(id string) *held {
		if m[id] == nil {
			m[id] = &held{}
		}
		return m[id]
	}
	for _, t := range ins {
		if id := trunkOf(t.Metadata); id != "" {
			get(id).in = append(get(id).in, t)
		}
	}
	for _, t := range outs {
		if id := trunkOf(t.Metadata); id != "" {
			get(id).out = append(get(id).out, t)
		}
	}
	for _, r := range rules {
		if id := trunkOf(r.Metadata); id != "" {
			get(id).rules = append(get(id).rules, r)
		}
	}
	for _, h := range m { // the oldest first: kept when there are duplicates
		sort.Slice(h.in, func(i, j int) bool { return h.in[i].ID < h.in[j].ID })
		sort.Slice(h.out, func(i, j int) bool { return h.out[i].ID < h.out[j].ID })
		sort.Slice(h.rules, func(i, j int) bool { return h.rules[i].ID < h.rules[j].ID })
	}
	return m, nil
}

// Sync brings what LiveKit holds for one trunk in step with the trunk as stored: its
// outbound trunk, and once it has lines, an inbound trunk for their numbers and the
// dispatch rule that gives each call a room of its own named by sip.RoomPrefix. A trunk
// that is gone leaves nothing in LiveKit.
func (s *Service) Sync(ctx context.Context, trunkID string) error {
	if s.LiveKit == nil {
		return nil
	}
	t, err := s.Store.GetTrunk(ctx, trunkID)
	var want *Trunk
	switch {
	case err == nil:
		want = &t
	case !isNotFound(err):
		return err
	}
	have, err := s.snapshot(ctx)
	if err != nil {
		return fmt.Errorf("list LiveKit's SIP objects: %w", err)
	}
	h := have[trunkID]
	if h == nil {
		h = &held{}
	}
	return s.converge(ctx, trunkID, want, h)
}

// syncAfterWrite is Sync after an API write, bounded; a failure is left to Reconcile.
func (s *Service) syncAfterWrite(ctx context.Context, trunkID string) {
	if s.LiveKit == nil || trunkID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), SyncTimeout)
	defer cancel()
	if err := s.Sync(ctx, trunkID); err != nil {
		s.log().Error("SIP trunk not in step with LiveKit; the sweeper's reconcile repairs it", "trunk_id", trunkID, "err", err)
	}
}

// Reconcile brings LiveKit in step with every trunk: what is missing is made, what
// differs is updated, and what LiveKit holds for a trunk that is gone (a delete whose
// LiveKit step failed) is removed, as are duplicates. The sweeper runs it.
func (s *Service) Reconcile(ctx context.Context) error {
	if s.LiveKit == nil {
		return nil
	}
	have, err := s.snapshot(ctx)
	if err != nil {
		return fmt.Errorf("list LiveKit's SIP objects: %w", err)
	}
	var errs []error
	after := ""
	for {
		page, err := s.Store.AllTrunks(ctx, after, 100)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		for _, t := range page {
			h := have[t.ID]
			delete(have, t.ID)
			if h == nil {
				h = &held{}
			}
			if err := s.converge(ctx, t.ID, &t, h); err != nil {
				errs = append(errs, fmt.Errorf("trunk %s: %w", t.ID, err))
			}
		}
		if len(page) < 100 {
			break
		}
		after = page[len(page)-1].ID
	}
	for id, h := range have { // trunks that are gone
		if err := s.converge(ctx, id, nil, h); err != nil {
			errs = append(errs, fmt.Errorf("trunk %s (gone): %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// converge makes LiveKit's objects of trunk id (h) what want says (nil: none).
func (s *Service) converge(ctx context.Context, id string, want *Trunk, h *held) error {
	wantIn, wantOut, err := s.desired(ctx, id, want)
	if err != nil {
		return err
	}
	var errs []error
	if wantOut != nil {
		// The provider's host is resolved and checked again: a name that now points
		// inside the deployment loses its LiveKit trunk (no call can go there); a lookup
		// that failed leaves LiveKit's as it is, for the next Sync.
		if err := s.checkOutbound(ctx, "outbound.address", wantOut.Address); err != nil {
			if e, ok := apierr.As(err); ok && e.Code == apierr.CodeURLNotAllowed {
				s.log().Error("SIP trunk's outbound host is internal: its LiveKit outbound trunk is removed", "trunk_id", id, "err", err)
				wantOut = nil
			} else {
				errs = append(errs, fmt.Errorf("outbound host of trunk %s: %w", id, err))
				h = &held{in: h.in, rules: h.rules} // keep LiveKit's outbound trunk as it is
				wantOut = nil
			}
		}
	}
	// Outbound trunk.
	keepOut := ""
	for i, have := range h.out {
		if wantOut == nil || i > 0 {
			errs = append(errs, s.LiveKit.DeleteSIPTrunk(ctx, have.ID))
			continue
		}
		keepOut = have.ID
		if !sameOutbound(have, *wantOut) {
			wantOut.ID = have.ID
			_, err := s.LiveKit.UpdateSIPOutboundTrunk(ctx, *wantOut)
			errs = append(errs, err)
		}
	}
	if wantOut != nil && keepOut == "" {
		_, err := s.LiveKit.CreateSIPOutboundTrunk(ctx, *wantOut)
		errs = append(errs, err)
	}
	// Inbound trunk, then the rule that names it.
	inID := ""
	for i, have := range h.in {
		if wantIn == nil || i > 0 {
			errs = append(errs, s.LiveKit.DeleteSIPTrunk(ctx, have.ID))
			continue
		}
		inID = have.ID
		if !sameInbound(have, *wantIn) {
			wantIn.ID = have.ID
			_, err := s.LiveKit.UpdateSIPInboundTrunk(ctx, *wantIn)
			errs = append(errs, err)
		}
	}
	if wantIn != nil && inID == "" {
		made, err := s.LiveKit.CreateSIPInboundTrunk(ctx, *wantIn)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		inID = made.ID
	}
	var wantRule *rtc.SIPDispatchRule
	if wantIn != nil {
		wantRule = &rtc.SIPDispatchRule{Name: "bridgeline " + id, Metadata: tagOf(id), TrunkIDs: []string{inID},
			RoomPrefix: sip.RoomPrefix + id}
	}
	keptRule := false
	for i, have := range h.rules {
		if wantRule == nil || i > 0 {
			errs = append(errs, s.LiveKit.DeleteSIPDispatchRule(ctx, have.ID))
			continue
		}
		keptRule = true
		if !slices.Equal(have.TrunkIDs, wantRule.TrunkIDs) || have.RoomPrefix != wantRule.RoomPrefix || have.Room != "" {
			wantRule.ID = have.ID
			_, err := s.LiveKit.UpdateSIPDispatchRule(ctx, *wantRule)
			errs = append(errs, err)
		}
	}
	if wantRule != nil && !keptRule {
		_, err := s.LiveKit.CreateSIPDispatchRule(ctx, *wantRule)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// desired is what LiveKit should hold for trunk id (want nil: nothing), passwords open.
func (s *Service) desired(ctx context.Context, id string, want *Trunk) (*rtc.SIPInboundTrunk, *rtc.SIPOutboundTrunk, error) {
	if want == nil {
		return nil, nil, nil
	}
	numbers := slices.Clone(want.Numbers)
	slices.Sort(numbers)
	var in *rtc.SIPInboundTrunk
	// An inbound side without credentials (stored before they were required) gets no
	// inbound trunk: its numbers take no calls rather than calls anyone in its allowed
	// addresses could place.
	if want.Inbound != nil && len(numbers) > 0 && want.Inbound.Username != "" && want.Inbound.Password != "" {
		pass, err := s.open(ctx, want.Inbound.Password)
		if err != nil {
			return nil, nil, fmt.Errorf("open inbound password: %w", err)
		}
		addrs := slices.Clone(want.Inbound.AllowedAddresses)
		slices.Sort(addrs)
		// The numbers make the trunk specific to the lines on it: a call to another
		// number from the same provider matches another customer's trunk, or none. The
		// bridge picks the trunk by the called number (and source address) first, then
		// challenges the INVITE for that trunk's credentials: a call reaches these
		// numbers only when it authenticates as this trunk.
		in = &rtc.SIPInboundTrunk{Name: "bridgeline " + id, Metadata: tagOf(id), Numbers: numbers,
			AllowedAddresses: addrs, AuthUsername: want.Inbound.Username, AuthPassword: pass,
			MediaEncryption: rtc.SIPMediaEncryption(want.Encryption())}
	}
	var out *rtc.SIPOutboundTrunk
	if want.Outbound != nil {
		// No credentials: a dial carries them (OutboundConfig), so LiveKit, and whoever
		// holds its API secret, never has the outbound password.
		out = &rtc.SIPOutboundTrunk{Name: "bridgeline " + id, Metadata: tagOf(id), Address: want.Outbound.Address,
			Transport: rtc.SIPTransport(want.Outbound.Transport), Numbers: numbers,
			MediaEncryption: rtc.SIPMediaEncryption(want.Encryption())}
	}
	return in, out, nil
}

func sameInbound(a, b rtc.SIPInboundTrunk) bool {
	return sameSet(a.Numbers, b.Numbers) && sameSet(a.AllowedAddresses, b.AllowedAddresses) &&
		a.AuthUsername == b.AuthUsername && a.AuthPassword == b.AuthPassword && a.Name == b.Name && len(a.AllowedNumbers) == 0 &&
		encryption(a.MediaEncryption) == encryption(b.MediaEncryption)
}

func sameOutbound(a, b rtc.SIPOutboundTrunk) bool {
	return sameSet(a.Numbers, b.Numbers) && strings.EqualFold(a.Address, b.Address) && a.Transport == b.Transport &&
		a.AuthUsername == b.AuthUsername && a.AuthPassword == b.AuthPassword && a.Name == b.Name &&
		encryption(a.MediaEncryption) == encryption(b.MediaEncryption)
}

// encryption reads LiveKit's unset media encryption as what it is, disable.
func encryption(e rtc.SIPMediaEncryption) rtc.SIPMediaEncryption {
	if e == "" {
		return rtc.SIPEncryptDisable
	}
	return e
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// OutboundTrunk is the LiveKit outbound trunk a SIP line dials through (sip.Adapter's
// Outbound): the one Bridgeline keeps for the line's trunk, synced first when missing.
func (s *Service) OutboundTrunk(ctx context.Context, from string) (string, error) {
	l, err := s.Lines.LineByHandle(ctx, sip.Name, from)
	if err != nil {
		return "", fmt.Errorf("line %s: %w", from, err)
	}
	if err := s.checkDestination(ctx, l.SIPTrunkID); err != nil {
		return "", err
	}
	for attempt := 0; attempt < 2; attempt++ {
		outs, err := s.LiveKit.ListSIPOutboundTrunks(ctx)
		if err != nil {
			return "", err
		}
		for _, t := range outs {
			if trunkOf(t.Metadata) == l.SIPTrunkID && slices.Contains(t.Numbers, from) {
				return t.ID, nil
			}
		}
		if err := s.Sync(ctx, l.SIPTrunkID); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("LiveKit has no outbound trunk for %s (trunk %s)", from, l.SIPTrunkID)
}

// OutboundConfig is the trunk a call from the SIP line whose number is from dials
// through, its password open (sip.Adapter's OutboundConfig): given to LiveKit with that
// call alone, so the outbound trunk LiveKit stores holds no password. The host is
// checked again first (checkOutbound).
func (s *Service) OutboundConfig(ctx context.Context, from string) (rtc.SIPOutboundConfig, error) {
	l, err := s.Lines.LineByHandle(ctx, sip.Name, from)
	if err != nil {
		return rtc.SIPOutboundConfig{}, fmt.Errorf("line %s: %w", from, err)
	}
	t, err := s.Store.GetTrunk(ctx, l.SIPTrunkID)
	if err != nil {
		return rtc.SIPOutboundConfig{}, fmt.Errorf("trunk of line %s: %w", l.ID, err)
	}
	if t.Outbound == nil {
		return rtc.SIPOutboundConfig{}, apierr.Param(apierr.CodeTrunkNoOutbound, "line_id",
			fmt.Sprintf("line %s is on sip trunk %s, which has no outbound side", l.ID, t.ID))
	}
	if err := s.checkOutbound(ctx, "line_id", t.Outbound.Address); err != nil {
		return rtc.SIPOutboundConfig{}, err
	}
	pass, err := s.open(ctx, t.Outbound.Password)
	if err != nil {
		return rtc.SIPOutboundConfig{}, fmt.Errorf("open outbound password of trunk %s: %w", t.ID, err)
	}
	return rtc.SIPOutboundConfig{Address: t.Outbound.Address, Transport: rtc.SIPTransport(t.Outbound.Transport),
		AuthUsername: t.Outbound.Username, AuthPassword: pass, MediaEncryption: rtc.SIPMediaEncryption(t.Encryption())}, nil
}

// checkDestination checks, at dial time, that the trunk's outbound host still resolves
// to addresses the egress rules allow (checkOutbound): DNS may have changed since the
// trunk was written.
func (s *Service) checkDestination(ctx context.Context, trunkID string) error {
	t, err := s.Store.GetTrunk(ctx, trunkID)
	if err != nil {
		return fmt.Errorf("trunk %s: %w", trunkID, err)
	}
	if t.Outbound == nil {
		return nil // CheckDial refuses it
	}
	return s.checkOutbound(ctx, "line_id", t.Outbound.Address)
}

func isNotFound(err error) bool { return errors.Is(err, apierr.ErrNotFound) }
