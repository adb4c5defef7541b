package siptrunk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/platform/sip"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/secretbox"
	"github.com/bridgeline/bridgeline/shared/siptrunk"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// bridge is LiveKit's SIP trunk and dispatch-rule API held in memory, with a fault to
// inject: fail makes the named call (and every later one while it is set) fail, as a
// LiveKit that goes away half way through a Sync does. It keeps what LiveKit keeps
// (passwords in clear, ids it makes), so the tests read what a Sync left behind.
type bridge struct {
	mu    sync.Mutex
	next  int
	in    map[string]rtc.SIPInboundTrunk
	out   map[string]rtc.SIPOutboundTrunk
	rules map[string]rtc.SIPDispatchRule
	fail  string // a method name, or "*" for all
	calls []string
}

func newBridge() *bridge {
	return &bridge{in: map[string]rtc.SIPInboundTrunk{}, out: map[string]rtc.SIPOutboundTrunk{}, rules: map[string]rtc.SIPDispatchRule{}}
}

var errDown = errors.New("livekit: connection refused")

func (b *bridge) enter(method string) error {
	b.calls = append(b.calls, method)
	if b.fail == "*" || b.fail == method {
		return fmt.Errorf("%s: %w", method, errDown)
	}
	return nil
}

func (b *bridge) id(prefix string) string { b.next++; return fmt.Sprintf("%s_%04d", prefix, b.next) }

func (b *bridge) ListSIPInboundTrunks(context.Context) ([]rtc.SIPInboundTrunk, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.enter("ListSIPInboundTrunks"); err != nil {
		return nil, err
	}
	var all []rtc.SIPInboundTrunk
	for _, t := range b.in {
		all = append(all, t)
	}
	return all, nil
}

func (b *bridge) CreateSIPInboundTrunk(_ context.Context, t rtc.SIPInboundTrunk) (rtc.SIPInboundTrunk, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.enter("CreateSIPInboundTrunk"); err != nil {
		return rtc.SIPInboundTrunk{}, err
	}
	t.ID = b.id("ST")
	b.in[t.ID] = t
	return t, nil
}

func (b *bridge) UpdateSIPInboundTrunk(_ context.Context, t rtc.SIPInboundTrunk) (rtc.SIPInboundTrunk, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.enter("UpdateSIPInboundTrunk"); err != nil {
		return rtc.SIPInboundTrunk{}, err
	}
	if _, ok := b.in[t.ID]; !ok {
		return rtc.SIPInboundTrunk{}, fmt.Errorf("no inbound trunk %s", t.ID)
	}
	b.in[t.ID] = t
	return t, nil
}

func (b *bridge) ListSIPOutboundTrunks(context.Context) ([]rtc.SIPOutboundTrunk, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.enter("ListSIPOutboundTrunks"); err != nil {
		return nil, err
	}
	var all []rtc.SIPOutboundTrunk
	for _, t := range b.out {
		all = append(all, t)
	}
	return all, nil
}

func (b *bridge) CreateSIPOutboundTrunk(_ context.Context, t rtc.SIPOutboundTrunk) (rtc.SIPOutboundTrunk, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.enter("CreateSIPOutboundTrunk"); err != nil {
		return rtc.SIPOutboundTrunk{}, err
	}
	t.ID = b.id("ST")
	b.out[t.ID] = t
	return t, nil
}

func (b *bridge) UpdateSIPOutboundTrunk(_ context.Context, t rtc.SIPOutboundTrunk) (rtc.SIPOutboundTrunk, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.enter("UpdateSIPOutboundTrunk"); err != nil {
		return rtc.SIPOutboundTrunk{}, err
	}
	if _, ok := b.out[t.ID]; !ok {
		return rtc.SIPOutboundTrunk{}, fmt.Errorf("no outbound trunk %s", t.ID)
	}
	b.out[t.ID] = t
	return t, nil
}

func (b *bridge) DeleteSIPTrunk(_ context.Context, id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.enter("DeleteSIPTrunk"); err != nil {
		return err
	}
	delete(b.in, id)
	delete(b.out, id)
	return nil
}

func (b *bridge) ListSIPDispatchRules(context.Context) ([]rtc.SIPDispatchRule, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.enter("ListSIPDispatchRules"); err != nil {
		return nil, err
	}
	var all []rtc.SIPDispatchRule
	for _, r := range b.rules {
		all = append(all, r)
	}
	return all, nil
}

func (b *bridge) CreateSIPDispatchRule(_ context.Context, r rtc.SIPDispatchRule) (rtc.SIPDispatchRule, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.enter("CreateSIPDispatchRule"); err != nil {
		return rtc.SIPDispatchRule{}, err
	}
	r.ID = b.id("SDR")
	b.rules[r.ID] = r
	return r, nil
}

func (b *bridge) UpdateSIPDispatchRule(_ context.Context, r rtc.SIPDispatchRule) (rtc.SIPDispatchRule, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.enter("UpdateSIPDispatchRule"); err != nil {
		return rtc.SIPDispatchRule{}, err
	}
	b.rules[r.ID] = r
	return r, nil
}

func (b *bridge) DeleteSIPDispatchRule(_ context.Context, id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.enter("DeleteSIPDispatchRule"); err != nil {
		return err
	}
	delete(b.rules, id)
	return nil
}

func (b *bridge) setFail(method string) {
	b.mu.Lock()
	b.fail = method
	b.mu.Unlock()
}

// of is what the bridge holds for one Bridgeline trunk.
func (b *bridge) of(trunkID string) (in []rtc.SIPInboundTrunk, out []rtc.SIPOutboundTrunk, rules []rtc.SIPDispatchRule) {
	b.mu.Lock()
	defer b.mu.Unlock()
	owner := func(meta string) string {
		var tag struct {
			Trunk string `json:"bridgeline_trunk"`
		}
		json.Unmarshal([]byte(meta), &tag)
		return tag.Trunk
	}
	for _, t := range b.in {
		if owner(t.Metadata) == trunkID {
			in = append(in, t)
		}
	}
	for _, t := range b.out {
		if owner(t.Metadata) == trunkID {
			out = append(out, t)
		}
	}
	for _, r := range b.rules {
		if owner(r.Metadata) == trunkID {
			rules = append(rules, r)
		}
	}
	return in, out, rules
}

// checkInStep fails unless the bridge holds exactly what trunk t calls for: one
// outbound trunk when it has an outbound side, and, when it has an inbound side and
// lines, one inbound trunk for their numbers and one dispatch rule naming it.
func checkInStep(t *testing.T, b *bridge, tr siptrunk.Trunk, inbound, outbound bool, numbers ...string) {
	t.Helper()
	for _, p := range outOfStep(b, tr, inbound, outbound, numbers...) {
		t.Error(p)
	}
}

// outOfStep says how the bridge differs from what trunk tr calls for (nothing: in step).
func outOfStep(b *bridge, tr siptrunk.Trunk, inbound, outbound bool, numbers ...string) []string {
	var errs []string
	errorf := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	in, out, rules := b.of(tr.ID)
	numbers = slices.Sorted(slices.Values(numbers))
	wantIn := inbound && len(numbers) > 0
	switch {
	case !wantIn && (len(in) != 0 || len(rules) != 0):
		errorf("trunk %s: LiveKit holds %d inbound trunks and %d rules, want none", tr.ID, len(in), len(rules))
	case wantIn && (len(in) != 1 || len(rules) != 1):
		errorf("trunk %s: LiveKit holds %d inbound trunks and %d rules, want one of each", tr.ID, len(in), len(rules))
	case wantIn:
		got := slices.Sorted(slices.Values(in[0].Numbers))
		if !slices.Equal(got, numbers) {
			errorf("trunk %s: inbound numbers %v, want %v", tr.ID, got, numbers)
		}
		if !slices.Equal(rules[0].TrunkIDs, []string{in[0].ID}) || rules[0].RoomPrefix != sip.RoomPrefix+tr.ID {
			errorf("trunk %s: rule %+v does not name inbound trunk %s with room prefix %s", tr.ID, rules[0], in[0].ID, sip.RoomPrefix+tr.ID)
		}
	}
	switch {
	case !outbound && len(out) != 0:
		errorf("trunk %s: LiveKit holds %d outbound trunks, want none", tr.ID, len(out))
	case outbound && len(out) != 1:
		errorf("trunk %s: LiveKit holds %d outbound trunks, want one", tr.ID, len(out))
	case outbound:
		got := slices.Sorted(slices.Values(out[0].Numbers))
		if !slices.Equal(got, numbers) {
			errorf("trunk %s: outbound numbers %v, want %v", tr.ID, got, numbers)
		}
		if tr.Outbound != nil && (out[0].Address != tr.Outbound.Address || out[0].Transport != rtc.SIPTransport(tr.Outbound.Transport)) {
			errorf("trunk %s: LiveKit's outbound trunk goes to %s over %s, want %s over %s", tr.ID, out[0].Address, out[0].Transport,
				tr.Outbound.Address, tr.Outbound.Transport)
		}
	}
	return errs
}

type rig struct {
	svc  *siptrunk.Service
	lk   *bridge
	db   *sqlite.Store
	dns  *zone
	acct string
}

// zone is DNS held in memory (egress.Resolver): the names the tests' trunks use, some
// pointing inside a deployment. A name it does not hold does not exist; down makes every
// lookup fail as a resolver that does not answer does.
type zone struct {
	mu    sync.Mutex
	names map[string][]string
	down  bool
}

func newZone() *zone {
	return &zone{names: map[string][]string{
		"acme.pstn.twilio.com":      {"54.172.60.10"},
		"acme2.pstn.twilio.com":     {"54.172.60.11", "2600:1f18::11"},
		"acme.sip.telnyx.com":       {"192.76.120.10"},
		"sip.telnyx.com":            {"192.76.120.11"},
		"pbx.example.test":          {"198.51.100.40"},
		"169.254.169.254.nip.io":    {"169.254.169.254"},
		"pbx.corp.example":          {"10.20.0.5"},
		"mixed.example":             {"54.172.60.12", "172.16.3.4"},
		"v6-internal.example":       {"fd00::5"},
		"localhost.nip.io":          {"127.0.0.1"},
		"acme-rebound.pstn.example": {"54.172.60.13"},
	}}
}

func (z *zone) set(name string, addrs ...string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.names[name] = addrs
}

func (z *zone) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.down {
		return nil, &net.DNSError{Err: "i/o timeout", Name: host, IsTimeout: true}
	}
	addrs, ok := z.names[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, a := range addrs {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

func newRig(t *testing.T) *rig {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "bridgeline.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	key, err := secretbox.OpenKeyFile(filepath.Join(dir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	lk := newBridge()
	lines := &line.Service{Store: db, Assistants: db, Now: time.Now}
	dns := newZone()
	svc := &siptrunk.Service{Store: db, Lines: db, LineRules: lines, Calls: db, Secrets: key, LiveKit: lk,
		Origination: siptrunk.Origination{Host: "sip.example.test", Port: 5060}, Resolver: dns, Now: time.Now}
	return &rig{svc: svc, lk: lk, db: db, dns: dns, acct: ident.New("acct")}
}

func ptr[T any](v T) *T { return &v }

// full is a trunk with both sides and credentials on both.
func full() siptrunk.Input {
	return siptrunk.Input{Name: ptr("Acme on Twilio"),
		Inbound: &siptrunk.InboundInput{AllowedAddresses: []string{"54.172.60.0/30", "54.244.51.7"}, Username: "acme-in", Password: ptr("inbound-secret-1-of-24-chars")},
		Outbound: &siptrunk.OutboundInput{Address: "acme.pstn.twilio.com", Transport: "tls", Username: "acme-out",
			Password: ptr("outbound-secret-1")}}
}

// TestTrunkValidation: every rule of a trunk's fields is a 400 with its code and the
// field it names, on create and on update, and nothing is stored or made in LiveKit.
func TestTrunkValidation(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	kept, err := r.svc.Create(ctx, r.acct, full())
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a", siptrunk.MaxNameLen+1)
	many := make([]string, siptrunk.MaxAllowedAddresses+1)
	for i := range many {
		many[i] = fmt.Sprintf("203.0.113.%d", i+1)
	}
	in := func(addrs []string, user string, pass *string) *siptrunk.InboundInput {
		return &siptrunk.InboundInput{AllowedAddresses: addrs, Username: user, Password: pass}
	}
	out := func(addr, transport, user string, pass *string) *siptrunk.OutboundInput {
		return &siptrunk.OutboundInput{Address: addr, Transport: transport, Username: user, Password: pass}
	}
	addrs := []string{"203.0.113.7"}
	for _, tc := range []struct {
		name  string
		in    siptrunk.Input
		code  string
		param string
		// update: the case is an update's rule too (a create's required fields are not).
		update bool
	}{
		{"neither side", siptrunk.Input{Name: ptr("x")}, apierr.CodeParameterMissing, "inbound", false},
		{"null side on create", siptrunk.Input{Inbound: in(addrs, "", nil), ClearOutbound: true}, apierr.CodeParameterInvalid, "inbound", false},
		{"name too long", siptrunk.Input{Name: &long, Inbound: in(addrs, "", nil)}, apierr.CodeParameterInvalid, "name", true},
		{"name on two lines", siptrunk.Input{Name: ptr("a\nb"), Inbound: in(addrs, "", nil)}, apierr.CodeParameterInvalid, "name", true},
		{"inbound address not an address", siptrunk.Input{Inbound: in([]string{"acme.example"}, "", nil)}, apierr.CodeParameterInvalid, "inbound.allowed_addresses", true},
		{"inbound address with a zone", siptrunk.Input{Inbound: in([]string{"fe80::1%eth0"}, "", nil)}, apierr.CodeParameterInvalid, "inbound.allowed_addresses", true},
		{"inbound allows everyone", siptrunk.Input{Inbound: in([]string{"0.0.0.0/0"}, "", nil)}, apierr.CodeParameterInvalid, "inbound.allowed_addresses", true},
		{"inbound allows everyone (v6)", siptrunk.Input{Inbound: in([]string{"::/0"}, "", nil)}, apierr.CodeParameterInvalid, "inbound.allowed_addresses", true},
		{"too many addresses", siptrunk.Input{Inbound: in(many, "", nil)}, apierr.CodeParameterInvalid, "inbound.allowed_addresses", true},
		{"inbound username with @", siptrunk.Input{Inbound: in(nil, "acme@example", ptr("long-enough-1"))}, apierr.CodeParameterInvalid, "inbound.username", true},
		{"inbound password too short", siptrunk.Input{Inbound: in(nil, "acme", ptr("short"))}, apierr.CodeParameterInvalid, "inbound.password", true},
		{"inbound password of 23 characters", siptrunk.Input{Inbound: in(nil, "acme", ptr(strings.Repeat("p", siptrunk.MinInboundPasswordLen-1)))}, apierr.CodeParameterInvalid, "inbound.password", true},
		{"inbound password on two lines", siptrunk.Input{Inbound: in(nil, "acme", ptr("long-enough\r\n1"))}, apierr.CodeParameterInvalid, "inbound.password", true},
		{"outbound without address", siptrunk.Input{Outbound: out("", "udp", "", nil)}, apierr.CodeParameterMissing, "outbound.address", true},
		{"outbound address with a scheme", siptrunk.Input{Outbound: out("sip:acme.pstn.twilio.com", "udp", "", nil)}, apierr.CodeParameterInvalid, "outbound.address", true},
		{"outbound address a URL", siptrunk.Input{Outbound: out("https://acme.example", "udp", "", nil)}, apierr.CodeParameterInvalid, "outbound.address", true},
		{"outbound port out of range", siptrunk.Input{Outbound: out("sip.telnyx.com:70000", "udp", "", nil)}, apierr.CodeParameterInvalid, "outbound.address", true},
		{"outbound port not a number", siptrunk.Input{Outbound: out("sip.telnyx.com:sip", "udp", "", nil)}, apierr.CodeParameterInvalid, "outbound.address", true},
		{"outbound host with a space", siptrunk.Input{Outbound: out("sip telnyx.com", "udp", "", nil)}, apierr.CodeParameterInvalid, "outbound.address", true},
		{"outbound transport", siptrunk.Input{Outbound: out("sip.telnyx.com", "ws", "", nil)}, apierr.CodeParameterInvalid, "outbound.transport", true},
		{"outbound loopback", siptrunk.Input{Outbound: out("127.0.0.1:5060", "udp", "", nil)}, apierr.CodeURLNotAllowed, "outbound.address", true},
		{"outbound private", siptrunk.Input{Outbound: out("10.1.2.3", "udp", "", nil)}, apierr.CodeURLNotAllowed, "outbound.address", true},
		{"outbound metadata address", siptrunk.Input{Outbound: out("169.254.169.254:5060", "tcp", "", nil)}, apierr.CodeURLNotAllowed, "outbound.address", true},
		{"outbound v6 loopback", siptrunk.Input{Outbound: out("[::1]:5060", "udp", "", nil)}, apierr.CodeURLNotAllowed, "outbound.address", true},
		{"outbound name resolving to the metadata address", siptrunk.Input{Outbound: out("169.254.169.254.nip.io:80", "udp", "", nil)}, apierr.CodeURLNotAllowed, "outbound.address", true},
		{"outbound name resolving to a private address", siptrunk.Input{Outbound: out("pbx.corp.example", "tcp", "", nil)}, apierr.CodeURLNotAllowed, "outbound.address", true},
		{"outbound name with one private address among public ones", siptrunk.Input{Outbound: out("mixed.example:5060", "udp", "", nil)}, apierr.CodeURLNotAllowed, "outbound.address", true},
		{"outbound name resolving to a unique-local v6 address", siptrunk.Input{Outbound: out("v6-internal.example", "udp", "", nil)}, apierr.CodeURLNotAllowed, "outbound.address", true},
		{"outbound name resolving to loopback", siptrunk.Input{Outbound: out("localhost.nip.io", "udp", "", nil)}, apierr.CodeURLNotAllowed, "outbound.address", true},
		{"outbound localhost", siptrunk.Input{Outbound: out("localhost:5060", "udp", "", nil)}, apierr.CodeURLNotAllowed, "outbound.address", true},
		{"outbound hex address", siptrunk.Input{Outbound: out("0xa9fea9fe", "udp", "", nil)}, apierr.CodeURLNotAllowed, "outbound.address", true},
		{"outbound name that does not resolve", siptrunk.Input{Outbound: out("no-such-host.example", "udp", "", nil)}, apierr.CodeParameterInvalid, "outbound.address", true},
		{"inbound loopback", siptrunk.Input{Inbound: in([]string{"127.0.0.1"}, "", nil)}, apierr.CodeURLNotAllowed, "inbound.allowed_addresses", true},
		{"inbound v6 loopback", siptrunk.Input{Inbound: in([]string{"::1"}, "", nil)}, apierr.CodeURLNotAllowed, "inbound.allowed_addresses", true},
		{"inbound private", siptrunk.Input{Inbound: in([]string{"54.172.60.0/30", "10.0.0.0/16"}, "", nil)}, apierr.CodeURLNotAllowed, "inbound.allowed_addresses", true},
		{"inbound private 172.16/12", siptrunk.Input{Inbound: in([]string{"172.20.1.1"}, "", nil)}, apierr.CodeURLNotAllowed, "inbound.allowed_addresses", true},
		{"inbound link-local", siptrunk.Input{Inbound: in([]string{"169.254.0.0/16"}, "", nil)}, apierr.CodeURLNotAllowed, "inbound.allowed_addresses", true},
		{"inbound block holding a private range", siptrunk.Input{Inbound: in([]string{"172.0.0.0/8"}, "", nil)}, apierr.CodeURLNotAllowed, "inbound.allowed_addresses", true},
		{"inbound unique-local v6", siptrunk.Input{Inbound: in([]string{"fd00::/64"}, "", nil)}, apierr.CodeURLNotAllowed, "inbound.allowed_addresses", true},
		{"inbound mapped private", siptrunk.Input{Inbound: in([]string{"::ffff:10.0.0.5"}, "", nil)}, apierr.CodeURLNotAllowed, "inbound.allowed_addresses", true},
		{"inbound two halves of the Internet", siptrunk.Input{Inbound: in([]string{"0.0.0.0/1", "128.0.0.0/1"}, "", nil)}, apierr.CodeParameterInvalid, "inbound.allowed_addresses", true},
		{"inbound wider than a /8", siptrunk.Input{Inbound: in([]string{"54.0.0.0/7"}, "", nil)}, apierr.CodeParameterInvalid, "inbound.allowed_addresses", true},
		{"inbound union wider than a /8", siptrunk.Input{Inbound: in([]string{"54.0.0.0/9", "54.128.0.0/9", "52.0.0.0/9"}, "", nil)}, apierr.CodeParameterInvalid, "inbound.allowed_addresses", true},
		{"inbound v6 wider than a /32", siptrunk.Input{Inbound: in([]string{"2600::/16"}, "", nil)}, apierr.CodeParameterInvalid, "inbound.allowed_addresses", true},
		{"inbound v6 union wider than a /32", siptrunk.Input{Inbound: in([]string{"2600:1f18::/32", "2600:1f19::/32"}, "", nil)}, apierr.CodeParameterInvalid, "inbound.allowed_addresses", true},
		{"media encryption unknown", siptrunk.Input{MediaEncryption: ptr("srtp"), Inbound: in(addrs, "", nil)}, apierr.CodeParameterInvalid, "media_encryption", true},
		{"outbound username without password", siptrunk.Input{Outbound: out("sip.telnyx.com", "udp", "acme", nil)}, apierr.CodeParameterMissing, "outbound.password", false},
		{"outbound password too long", siptrunk.Input{Outbound: out("sip.telnyx.com", "udp", "acme", ptr(strings.Repeat("p", siptrunk.MaxPasswordLen+1)))}, apierr.CodeParameterInvalid, "outbound.password", true},
		{"update drops both sides", siptrunk.Input{ClearInbound: true, ClearOutbound: true}, apierr.CodeParameterInvalid, "inbound", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.lk.calls = nil
			if !strings.HasPrefix(tc.name, "update ") {
				_, err := r.svc.Create(ctx, r.acct, tc.in)
				checkParamErr(t, "Create", err, tc.code, tc.param)
			}
			if tc.update {
				_, err := r.svc.Update(ctx, r.acct, kept.ID, tc.in)
				checkParamErr(t, "Update", err, tc.code, tc.param)
			}
			if len(r.lk.calls) != 0 {
				t.Errorf("a refused write reached LiveKit: %v", r.lk.calls)
			}
		})
	}
	all, err := r.svc.List(ctx, r.acct, listingAll)
	if err != nil || len(all) != 1 {
		t.Fatalf("after the refusals the account has %d trunks (%v), want the one made first", len(all), err)
	}
	if got, _ := r.svc.Get(ctx, r.acct, kept.ID); got.Revision != kept.Revision || got.Name != kept.Name {
		t.Errorf("a refused update changed the trunk: revision %d name %q, want %d %q", got.Revision, got.Name, kept.Revision, kept.Name)
	}
}

func checkParamErr(t *testing.T, op string, err error, code, param string) {
	t.Helper()
	var e *apierr.Error
	if !errors.As(err, &e) || e.Code != code || e.Param != param {
		t.Errorf("%s = %v, want %s on %s", op, err, code, param)
	}
}

// TestTrunkNormalises: what is accepted is stored in one form: an address as a masked
// CIDR, the transport udp when left out, IPv6 hosts in brackets.
func TestTrunkNormalises(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	tr, err := r.svc.Create(ctx, r.acct, siptrunk.Input{
		Inbound:  &siptrunk.InboundInput{AllowedAddresses: []string{"54.172.60.3/30", "2600:1f18::7", "198.51.100.9", "54.0.0.0/9", "54.0.0.0/10"}},
		Outbound: &siptrunk.OutboundInput{Address: "[2600:1f18::1]:5061"}})
	if err != nil {
		t.Fatal(err)
	}
	// A /9 and a block inside it are half a /8 together: accepted.
	if want := []string{"54.172.60.0/30", "2600:1f18::7/128", "198.51.100.9/32", "54.0.0.0/9", "54.0.0.0/10"}; !slices.Equal(tr.Inbound.AllowedAddresses, want) {
		t.Errorf("allowed addresses %v, want %v", tr.Inbound.AllowedAddresses, want)
	}
	if tr.Outbound.Transport != "udp" {
		t.Errorf("transport %q, want udp when left out", tr.Outbound.Transport)
	}
	if !strings.HasPrefix(tr.ID, siptrunk.IDPrefix+"_") {
		t.Errorf("id %q, want a %s_ id", tr.ID, siptrunk.IDPrefix)
	}
	if got := r.svc.Origination.URI(); got != "sip:sip.example.test:5060" {
		t.Errorf("origination URI %q", got)
	}
}

// TestPasswordsSealedAndKept: passwords are stored sealed (never the clear text, in the
// returned trunk or the store), LiveKit gets them in clear, an update that keeps the
// username and leaves the password out keeps it, and a new username needs a new password.
func TestPasswordsSealedAndKept(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	tr, err := r.svc.Create(ctx, r.acct, full())
	if err != nil {
		t.Fatal(err)
	}
	stored, err := r.db.GetTrunk(ctx, tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range []siptrunk.Trunk{tr, stored} {
		for side, p := range map[string]string{"inbound": got.Inbound.Password, "outbound": got.Outbound.Password} {
			if !secretbox.Sealed(p) || strings.Contains(p, "secret-1") {
				t.Errorf("%s password %q is not sealed", side, p)
			}
		}
	}
	var raw string
	if err := r.db.DB().QueryRowContext(ctx, `SELECT CAST(doc AS TEXT) FROM sip_trunks WHERE id = ?`, tr.ID).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(raw, "secret-1") || !strings.Contains(raw, "acme-out") {
		t.Errorf("the stored trunk holds a password in clear, or is not the trunk: %s", raw)
	}
	in, out, _ := r.lk.of(tr.ID)
	if len(out) != 1 || out[0].AuthPassword != "" || out[0].AuthUsername != "" {
		t.Fatalf("LiveKit's outbound trunk %+v, want no credentials: each dial carries them", out)
	}
	if len(in) != 0 {
		t.Errorf("a trunk with no lines has %d inbound trunks in LiveKit, want none", len(in))
	}
	// A dial gets the credentials in clear, for that call alone.
	l := mustLine(t, r, tr, "+15550100061")
	dial := func(pass string) {
		t.Helper()
		c, err := r.svc.OutboundConfig(ctx, l.Handle)
		if err != nil || c.AuthUsername != "acme-out" || c.AuthPassword != pass || c.Address != "acme.pstn.twilio.com" ||
			c.Transport != rtc.SIPTransportTLS || c.MediaEncryption != rtc.SIPEncryptAllow {
			t.Errorf("OutboundConfig = %+v, %v; want acme-out / %s to acme.pstn.twilio.com over tls, SRTP allowed", c, err, pass)
		}
		if _, out, _ := r.lk.of(tr.ID); len(out) != 1 || out[0].AuthPassword != "" {
			t.Errorf("LiveKit's outbound trunk %+v holds a password", out)
		}
	}
	dial("outbound-secret-1")

	// Keep the passwords: the same usernames, no password, the outbound side still going
	// where it went (a move needs the password: TestOutboundMoveNeedsPassword).
	keep := full()
	keep.Inbound.Password, keep.Outbound.Password = nil, nil
	keep.Inbound.AllowedAddresses = []string{"54.172.60.0/30"}
	up, err := r.svc.Update(ctx, r.acct, tr.ID, keep)
	if err != nil {
		t.Fatal(err)
	}
	if up.Inbound.Password != stored.Inbound.Password || up.Outbound.Password != stored.Outbound.Password {
		t.Error("an update leaving the passwords out did not keep the stored ones")
	}
	dial("outbound-secret-1")
	// A new username without a password is refused: the old password is not the new user's.
	other := full()
	other.Outbound.Username, other.Outbound.Password = "someone-else", nil
	_, err = r.svc.Update(ctx, r.acct, tr.ID, other)
	checkParamErr(t, "Update with a new username and no password", err, apierr.CodeParameterMissing, "outbound.password")
	// A new password is sealed anew and reaches LiveKit.
	change := full()
	change.Outbound.Password = ptr("outbound-secret-2")
	up2, err := r.svc.Update(ctx, r.acct, tr.ID, change)
	if err != nil {
		t.Fatal(err)
	}
	if up2.Outbound.Password == up.Outbound.Password || !secretbox.Sealed(up2.Outbound.Password) {
		t.Error("a new outbound password was not sealed anew")
	}
	dial("outbound-secret-2")
	// Dropping the outbound side removes it, here and in LiveKit; a dial is refused.
	up3, err := r.svc.Update(ctx, r.acct, tr.ID, siptrunk.Input{ClearOutbound: true})
	if err != nil || up3.Outbound != nil {
		t.Fatalf("Update(outbound null) = %+v, %v", up3.Outbound, err)
	}
	checkInStep(t, r.lk, up3, true, false, l.Handle)
	_, err = r.svc.OutboundConfig(ctx, l.Handle)
	checkParamErr(t, "OutboundConfig without an outbound side", err, apierr.CodeTrunkNoOutbound, "line_id")
}

// TestLineRules: a SIP line is checked (platform, E.164 handle, the account's own trunk),
// a number is one line in the deployment, a trunk carrying lines is not deleted, a line
// in a call is not deleted, and LiveKit follows every change.
func TestLineRules(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	tr, err := r.svc.Create(ctx, r.acct, full())
	if err != nil {
		t.Fatal(err)
	}
	otherAcct := ident.New("acct")
	theirs, err := r.svc.Create(ctx, otherAcct, full())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		in    siptrunk.LineInput
		code  string
		param string
	}{
		{"no platform", siptrunk.LineInput{Handle: "+15550100001", TrunkID: tr.ID}, apierr.CodeParameterMissing, "platform"},
		{"sim platform", siptrunk.LineInput{Platform: "sim", Handle: "+15550100001", TrunkID: tr.ID}, apierr.CodeParameterInvalid, "platform"},
		{"no handle", siptrunk.LineInput{Platform: sip.Name, TrunkID: tr.ID}, apierr.CodeParameterMissing, "handle"},
		{"handle not E.164", siptrunk.LineInput{Platform: sip.Name, Handle: "5550100001", TrunkID: tr.ID}, apierr.CodeParameterInvalid, "handle"},
		{"handle too short", siptrunk.LineInput{Platform: sip.Name, Handle: "+1555", TrunkID: tr.ID}, apierr.CodeParameterInvalid, "handle"},
		{"handle a URI", siptrunk.LineInput{Platform: sip.Name, Handle: "sip:+15550100001@acme", TrunkID: tr.ID}, apierr.CodeParameterInvalid, "handle"},
		{"no trunk", siptrunk.LineInput{Platform: sip.Name, Handle: "+15550100001"}, apierr.CodeParameterMissing, "sip_trunk_id"},
		{"trunk id of another kind", siptrunk.LineInput{Platform: sip.Name, Handle: "+15550100001", TrunkID: "line_123"}, apierr.CodeParameterInvalid, "sip_trunk_id"},
		{"unknown trunk", siptrunk.LineInput{Platform: sip.Name, Handle: "+15550100001", TrunkID: ident.New(siptrunk.IDPrefix)}, apierr.CodeResourceNotFound, "sip_trunk_id"},
		{"another account's trunk", siptrunk.LineInput{Platform: sip.Name, Handle: "+15550100001", TrunkID: theirs.ID}, apierr.CodeResourceNotFound, "sip_trunk_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.svc.CreateLine(ctx, r.acct, tc.in)
			checkParamErr(t, "CreateLine", err, tc.code, tc.param)
		})
	}
	checkInStep(t, r.lk, tr, true, true)

	a, err := r.svc.CreateLine(ctx, r.acct, siptrunk.LineInput{Platform: sip.Name, Handle: "+15550100001", TrunkID: tr.ID})
	if err != nil {
		t.Fatal(err)
	}
	if a.Platform != sip.Name || a.SIPTrunkID != tr.ID || a.InboundMode != line.ModeAssistant {
		t.Errorf("line %+v", a)
	}
	b, err := r.svc.CreateLine(ctx, r.acct, siptrunk.LineInput{Platform: sip.Name, Handle: "+15550100002", TrunkID: tr.ID})
	if err != nil {
		t.Fatal(err)
	}
	checkInStep(t, r.lk, tr, true, true, a.Handle, b.Handle)
	if in, _, _ := r.lk.of(tr.ID); len(in) == 1 && (in[0].AuthPassword != "inbound-secret-1-of-24-chars" || !slices.Equal(in[0].AllowedAddresses, []string{"54.172.60.0/30", "54.244.51.7/32"})) {
		t.Errorf("LiveKit's inbound trunk %+v: want the credentials in clear and the addresses", in[0])
	}

	// A number is one line: on the same trunk, and on another account's.
	for _, trunkID := range []string{tr.ID, theirs.ID} {
		acct := r.acct
		if trunkID == theirs.ID {
			acct = otherAcct
		}
		_, err := r.svc.CreateLine(ctx, acct, siptrunk.LineInput{Platform: sip.Name, Handle: a.Handle, TrunkID: trunkID})
		checkParamErr(t, "CreateLine of a taken number", err, apierr.CodeHandleTaken, "handle")
	}
	checkInStep(t, r.lk, theirs, true, true)

	// A trunk with lines is not deleted.
	if _, err := r.svc.Delete(ctx, r.acct, tr.ID); !apierr.Is(err, apierr.CodeTrunkInUse) {
		t.Errorf("Delete of a trunk with lines = %v, want %s", err, apierr.CodeTrunkInUse)
	}
	// Another account sees neither the trunk nor the line.
	if _, err := r.svc.Get(ctx, otherAcct, tr.ID); !apierr.Is(err, apierr.CodeResourceNotFound) {
		t.Errorf("another account's Get = %v, want not found", err)
	}
	if _, err := r.svc.DeleteLine(ctx, otherAcct, a.ID); !apierr.Is(err, apierr.CodeResourceNotFound) {
		t.Errorf("another account's DeleteLine = %v, want not found", err)
	}

	// A line with a call ringing is not deleted.
	now := time.Now().UTC()
	ringing := call.Call{ID: ident.New("call"), AccountID: r.acct, LineID: a.ID, Platform: sip.Name, PlatformCallID: ident.New("SCL"),
		Direction: call.Inbound, From: "+15550109999", To: a.Handle, Status: call.StatusRinging, StartedAt: now}
	if err := r.db.SaveCall(ctx, ringing, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.svc.DeleteLine(ctx, r.acct, a.ID); !apierr.Is(err, apierr.CodeLineInCall) {
		t.Errorf("DeleteLine with a call ringing = %v, want %s", err, apierr.CodeLineInCall)
	}

	// The other line goes; LiveKit stops taking its calls.
	if _, err := r.svc.DeleteLine(ctx, r.acct, b.ID); err != nil {
		t.Fatal(err)
	}
	checkInStep(t, r.lk, tr, true, true, a.Handle)
	if _, err := r.svc.DeleteLine(ctx, r.acct, b.ID); !apierr.Is(err, apierr.CodeResourceNotFound) {
		t.Errorf("DeleteLine again = %v, want not found", err)
	}
	// Its number is free again.
	again, err := r.svc.CreateLine(ctx, r.acct, siptrunk.LineInput{Platform: sip.Name, Handle: b.Handle, TrunkID: tr.ID})
	if err != nil {
		t.Fatalf("CreateLine of a freed number: %v", err)
	}
	checkInStep(t, r.lk, tr, true, true, a.Handle, again.Handle)

	// A sim line is the operator's.
	simLine, err := (&line.Service{Store: r.db, Assistants: r.db, Now: time.Now}).Provision(ctx, r.acct, "sim", "+15550100077", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.svc.DeleteLine(ctx, r.acct, simLine.ID); !apierr.Is(err, apierr.CodeLineNotDeletable) {
		t.Errorf("DeleteLine of a sim line = %v, want %s", err, apierr.CodeLineNotDeletable)
	}
}

var listingAll = listing.Query{Limit: 100}

// writes are the calls that change LiveKit.
func (b *bridge) writes() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var w []string
	for _, c := range b.calls {
		if !strings.HasPrefix(c, "List") {
			w = append(w, c)
		}
	}
	return w
}

// TestReconcileAfterAFailureHalfWay: each write's Sync fails at one step (LiveKit down
// at that call and after it); the API write still answers (Bridgeline owns the truth),
// LiveKit is left half way, and the sweeper's Reconcile brings it in step: what is
// missing is made, what differs updated, what a gone trunk left behind removed, each
// once (a second Reconcile changes nothing), and objects that are not Bridgeline's are
// left alone.
func TestReconcileAfterAFailureHalfWay(t *testing.T) {
	type state struct {
		trunk             siptrunk.Trunk
		inbound, outbound bool
		numbers           []string
		gone              bool
	}
	for _, tc := range []struct {
		name string
		// fail is the LiveKit call that fails (with every later one) during do.
		fail string
		// do makes the write whose Sync fails, and says what LiveKit should hold after.
		do func(t *testing.T, r *rig, tr siptrunk.Trunk) state
	}{
		{"create with LiveKit down", "*", func(t *testing.T, r *rig, _ siptrunk.Trunk) state {
			tr, err := r.svc.Create(context.Background(), r.acct, full())
			if err != nil {
				t.Fatal(err)
			}
			return state{trunk: tr, inbound: true, outbound: true}
		}},
		{"first line: inbound trunk made, dispatch rule not", "CreateSIPDispatchRule", func(t *testing.T, r *rig, tr siptrunk.Trunk) state {
			l := mustLine(t, r, tr, "+15550100011")
			return state{trunk: tr, inbound: true, outbound: true, numbers: []string{l.Handle}}
		}},
		{"first line: outbound numbers updated, inbound trunk not made", "CreateSIPInboundTrunk", func(t *testing.T, r *rig, tr siptrunk.Trunk) state {
			l := mustLine(t, r, tr, "+15550100012")
			return state{trunk: tr, inbound: true, outbound: true, numbers: []string{l.Handle}}
		}},
		{"outbound address changed, LiveKit's not updated", "UpdateSIPOutboundTrunk", func(t *testing.T, r *rig, tr siptrunk.Trunk) state {
			in := full()
			in.Outbound.Address = "acme.sip.telnyx.com:5080"
			up, err := r.svc.Update(context.Background(), r.acct, tr.ID, in)
			if err != nil {
				t.Fatal(err)
			}
			return state{trunk: up, inbound: true, outbound: true}
		}},
		{"outbound side dropped, LiveKit's kept", "DeleteSIPTrunk", func(t *testing.T, r *rig, tr siptrunk.Trunk) state {
			up, err := r.svc.Update(context.Background(), r.acct, tr.ID, siptrunk.Input{ClearOutbound: true})
			if err != nil {
				t.Fatal(err)
			}
			return state{trunk: up, inbound: true}
		}},
		{"trunk deleted, LiveKit's kept", "DeleteSIPTrunk", func(t *testing.T, r *rig, tr siptrunk.Trunk) state {
			if _, err := r.svc.Delete(context.Background(), r.acct, tr.ID); err != nil {
				t.Fatal(err)
			}
			return state{trunk: tr, gone: true}
		}},
		{"last line deleted, rule removed, inbound trunk kept", "DeleteSIPTrunk", func(t *testing.T, r *rig, tr siptrunk.Trunk) state {
			r.lk.setFail("")
			l := mustLine(t, r, tr, "+15550100013")
			r.lk.setFail("DeleteSIPTrunk")
			if _, err := r.svc.DeleteLine(context.Background(), r.acct, l.ID); err != nil {
				t.Fatal(err)
			}
			return state{trunk: tr, inbound: true, outbound: true}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			ctx := context.Background()
			// Not Bridgeline's: made by the operator by hand, left alone throughout.
			foreign, _ := r.lk.CreateSIPOutboundTrunk(ctx, rtc.SIPOutboundTrunk{Name: "operator's", Address: "pbx.example.test"})
			foreignRule, _ := r.lk.CreateSIPDispatchRule(ctx, rtc.SIPDispatchRule{Name: "operator's", Metadata: `{"team":"ops"}`, Room: "ops"})
			// A trunk in step beside, untouched by the fault.
			bystander, err := r.svc.Create(ctx, r.acct, full())
			if err != nil {
				t.Fatal(err)
			}
			mustLine(t, r, bystander, "+15550100099")
			tr, err := r.svc.Create(ctx, r.acct, full())
			if err != nil {
				t.Fatal(err)
			}
			r.lk.setFail(tc.fail)
			want := tc.do(t, r, tr)
			r.lk.setFail("")

			stored := want.trunk
			if !want.gone {
				if stored, err = r.svc.Get(ctx, r.acct, want.trunk.ID); err != nil {
					t.Fatal(err)
				}
			}
			// The write answered, and left LiveKit half way.
			if len(outOfStep(r.lk, stored, want.inbound && !want.gone, want.outbound && !want.gone, want.numbers...)) == 0 {
				t.Fatal("the fault left LiveKit in step: the case tests nothing")
			}
			if err := r.svc.Reconcile(ctx); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			checkInStep(t, r.lk, stored, want.inbound && !want.gone, want.outbound && !want.gone, want.numbers...)
			checkInStep(t, r.lk, bystander, true, true, "+15550100099")
			if _, ok := r.lk.out[foreign.ID]; !ok {
				t.Error("Reconcile removed an outbound trunk that is not Bridgeline's")
			}
			if _, ok := r.lk.rules[foreignRule.ID]; !ok {
				t.Error("Reconcile removed a dispatch rule that is not Bridgeline's")
			}
			// Once in step, a Reconcile changes nothing.
			r.lk.calls = nil
			if err := r.svc.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			if w := r.lk.writes(); len(w) != 0 {
				t.Errorf("a second Reconcile wrote %v, want nothing", w)
			}
		})
	}
}

// TestReconcileRemovesDuplicates: a create whose answer was lost and was made again (two
// objects tagged with one trunk) leaves one of each after Reconcile, the rule naming the
// inbound trunk kept; and a Reconcile while LiveKit is down fails without changing it.
func TestReconcileRemovesDuplicates(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	tr, err := r.svc.Create(ctx, r.acct, full())
	if err != nil {
		t.Fatal(err)
	}
	l := mustLine(t, r, tr, "+15550100021")
	in, out, rules := r.lk.of(tr.ID)
	if len(in) != 1 || len(out) != 1 || len(rules) != 1 {
		t.Fatalf("in step: %d %d %d", len(in), len(out), len(rules))
	}
	dupIn, out2, rule2 := in[0], out[0], rules[0]
	r.lk.CreateSIPInboundTrunk(ctx, dupIn)
	r.lk.CreateSIPOutboundTrunk(ctx, out2)
	r.lk.CreateSIPDispatchRule(ctx, rule2)

	r.lk.setFail("*")
	if err := r.svc.Reconcile(ctx); !errors.Is(err, errDown) {
		t.Errorf("Reconcile with LiveKit down = %v, want its error", err)
	}
	r.lk.setFail("")
	if in, out, rules := r.lk.of(tr.ID); len(in) != 2 || len(out) != 2 || len(rules) != 2 {
		t.Errorf("a failed Reconcile changed LiveKit: %d %d %d", len(in), len(out), len(rules))
	}
	if err := r.svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	checkInStep(t, r.lk, tr, true, true, l.Handle)
	if in, _, _ := r.lk.of(tr.ID); len(in) == 1 && in[0].ID != dupIn.ID {
		t.Errorf("kept inbound trunk %s, want the oldest %s", in[0].ID, dupIn.ID)
	}
	// The line dials through the one outbound trunk left.
	id, err := r.svc.OutboundTrunk(ctx, l.Handle)
	if _, out, _ := r.lk.of(tr.ID); err != nil || len(out) != 1 || id != out[0].ID {
		t.Errorf("OutboundTrunk(%s) = %q, %v; want %v", l.Handle, id, err, out)
	}
}

// TestOutboundTrunkSyncsWhenMissing: a dial from a line whose outbound trunk LiveKit lost
// makes it first.
func TestOutboundTrunkSyncsWhenMissing(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	tr, err := r.svc.Create(ctx, r.acct, full())
	if err != nil {
		t.Fatal(err)
	}
	l := mustLine(t, r, tr, "+15550100031")
	_, out, _ := r.lk.of(tr.ID)
	r.lk.DeleteSIPTrunk(ctx, out[0].ID)
	id, err := r.svc.OutboundTrunk(ctx, l.Handle)
	if err != nil {
		t.Fatal(err)
	}
	if _, out, _ := r.lk.of(tr.ID); len(out) != 1 || out[0].ID != id || !slices.Contains(out[0].Numbers, l.Handle) {
		t.Errorf("OutboundTrunk = %q; LiveKit holds %+v", id, out)
	}
	if _, err := r.svc.OutboundTrunk(ctx, "+15550100032"); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("OutboundTrunk of a number that is no line = %v, want not found", err)
	}
}

func mustLine(t *testing.T, r *rig, tr siptrunk.Trunk, handle string) line.Line {
	t.Helper()
	l, err := r.svc.CreateLine(context.Background(), r.acct, siptrunk.LineInput{Platform: sip.Name, Handle: handle, TrunkID: tr.ID})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestOutboundMoveNeedsPassword: an update that sends the outbound side to another
// address or over another transport must give the password again
// (outbound_password_required); nothing is stored and LiveKit is not touched. The same
// address and transport keep the stored password, and a move with the password works.
func TestOutboundMoveNeedsPassword(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	tr, err := r.svc.Create(ctx, r.acct, full())
	if err != nil {
		t.Fatal(err)
	}
	move := func(addr, transport string, pass *string) siptrunk.Input {
		return siptrunk.Input{Outbound: &siptrunk.OutboundInput{Address: addr, Transport: transport, Username: "acme-out", Password: pass}}
	}
	for _, tc := range []struct {
		name string
		in   siptrunk.Input
	}{
		{"another host", move("acme2.pstn.twilio.com", "tls", nil)},
		{"another port", move("acme.pstn.twilio.com:5080", "tls", nil)},
		{"another transport", move("acme.pstn.twilio.com", "udp", nil)},
		{"transport left out (udp)", move("acme.pstn.twilio.com", "", nil)},
	} {
		r.lk.calls = nil
		_, err := r.svc.Update(ctx, r.acct, tr.ID, tc.in)
		checkParamErr(t, "Update to "+tc.name+" without the password", err, apierr.CodeOutboundPassword, "outbound.password")
		if len(r.lk.calls) != 0 {
			t.Errorf("%s: a refused update reached LiveKit: %v", tc.name, r.lk.calls)
		}
	}
	if got, _ := r.svc.Get(ctx, r.acct, tr.ID); got.Revision != tr.Revision || got.Outbound.Address != "acme.pstn.twilio.com" || got.Outbound.Transport != "tls" {
		t.Errorf("a refused move changed the trunk: %+v", got.Outbound)
	}
	if _, out, _ := r.lk.of(tr.ID); len(out) != 1 || out[0].Address != "acme.pstn.twilio.com" {
		t.Errorf("LiveKit's outbound trunk after refused moves: %+v", out)
	}
	// The same address (other case) and transport keep the password.
	if _, err := r.svc.Update(ctx, r.acct, tr.ID, move("ACME.pstn.twilio.com", "tls", nil)); err != nil {
		t.Errorf("Update keeping address and transport without the password = %v", err)
	}
	// A move with the password goes through, and LiveKit dials the new host with it.
	up, err := r.svc.Update(ctx, r.acct, tr.ID, move("acme2.pstn.twilio.com", "udp", ptr("outbound-secret-9")))
	if err != nil {
		t.Fatal(err)
	}
	l := mustLine(t, r, up, "+15550100071")
	if c, err := r.svc.OutboundConfig(ctx, l.Handle); err != nil || c.Address != "acme2.pstn.twilio.com" || c.AuthPassword != "outbound-secret-9" {
		t.Errorf("a dial after the move goes to %+v, %v", c, err)
	}
	if _, out, _ := r.lk.of(tr.ID); len(out) != 1 || out[0].Address != "acme2.pstn.twilio.com" {
		t.Errorf("LiveKit's outbound trunk after the move: %+v", out)
	}
	// Without credentials there is no password to carry: a move needs none.
	if _, err := r.svc.Update(ctx, r.acct, up.ID, siptrunk.Input{Outbound: &siptrunk.OutboundInput{Address: "acme2.pstn.twilio.com", Transport: "udp"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.svc.Update(ctx, r.acct, up.ID, siptrunk.Input{Outbound: &siptrunk.OutboundInput{Address: "acme.sip.telnyx.com", Transport: "tcp"}}); err != nil {
		t.Errorf("a move of an outbound side without credentials = %v", err)
	}
}

// TestOutboundHostCheckedAtSyncAndDial: a name that passed at create and later resolves
// inside the deployment loses its LiveKit outbound trunk at the next Sync (Reconcile),
// and a dial through it (CheckDial, OutboundTrunk) is refused with url_not_allowed; a
// lookup that fails leaves LiveKit's trunk alone. Pointing the name back outside
// restores it.
func TestOutboundHostCheckedAtSyncAndDial(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	in := full()
	in.Outbound.Address = "acme-rebound.pstn.example:5060"
	tr, err := r.svc.Create(ctx, r.acct, in)
	if err != nil {
		t.Fatal(err)
	}
	l := mustLine(t, r, tr, "+15550100041")
	if _, out, _ := r.lk.of(tr.ID); len(out) != 1 {
		t.Fatalf("LiveKit holds %d outbound trunks, want 1", len(out))
	}
	if err := r.svc.CheckDial(ctx, l.ID); err != nil {
		t.Fatalf("CheckDial = %v", err)
	}

	r.dns.set("acme-rebound.pstn.example", "169.254.169.254")
	if err := r.svc.Reconcile(ctx); err != nil {
		t.Fatalf("Reconcile = %v", err)
	}
	if in, out, rules := r.lk.of(tr.ID); len(out) != 0 || len(in) != 1 || len(rules) != 1 {
		t.Errorf("after the name moved inside: LiveKit holds %d outbound, %d inbound, %d rules; want 0, 1, 1", len(out), len(in), len(rules))
	}
	checkParamErr(t, "CheckDial", r.svc.CheckDial(ctx, l.ID), apierr.CodeURLNotAllowed, "line_id")
	_, err = r.svc.OutboundTrunk(ctx, l.Handle)
	checkParamErr(t, "OutboundTrunk", err, apierr.CodeURLNotAllowed, "line_id")
	_, err = r.svc.OutboundConfig(ctx, l.Handle)
	checkParamErr(t, "OutboundConfig", err, apierr.CodeURLNotAllowed, "line_id")
	if _, out, _ := r.lk.of(tr.ID); len(out) != 0 {
		t.Errorf("a refused dial made the outbound trunk again: %+v", out)
	}

	r.dns.set("acme-rebound.pstn.example", "54.172.60.13")
	id, err := r.svc.OutboundTrunk(ctx, l.Handle)
	if err != nil || id == "" {
		t.Fatalf("OutboundTrunk after the name came back = %q, %v", id, err)
	}
	// A resolver that does not answer: Sync reports it and keeps LiveKit's trunk.
	r.dns.mu.Lock()
	r.dns.down = true
	r.dns.mu.Unlock()
	if err := r.svc.Sync(ctx, tr.ID); err == nil {
		t.Error("Sync with DNS down = nil, want the lookup's error")
	}
	if _, out, _ := r.lk.of(tr.ID); len(out) != 1 || out[0].ID != id {
		t.Errorf("with DNS down LiveKit's outbound trunk changed: %+v, want %s kept", out, id)
	}
	_, err = r.svc.Update(ctx, r.acct, tr.ID, siptrunk.Input{Name: ptr("renamed"), Outbound: in.Outbound})
	var e *apierr.Error
	if !errors.As(err, &e) || e.Code != apierr.CodeUpstreamUnavailable {
		t.Errorf("Update with DNS down = %v, want upstream_unavailable", err)
	}
}

// TestLocalStackAllowsLoopback: with the local stack's policy (WEBHOOK_ALLOW_LOOPBACK)
// a trunk on 127.0.0.1 both ways is accepted, as e2e/sip's are; private addresses stay
// refused.
func TestLocalStackAllowsLoopback(t *testing.T) {
	r := newRig(t)
	r.svc.Destinations = egress.Policy{AllowLoopback: true}
	ctx := context.Background()
	tr, err := r.svc.Create(ctx, r.acct, siptrunk.Input{
		Inbound:  &siptrunk.InboundInput{AllowedAddresses: []string{"127.0.0.1/32"}},
		Outbound: &siptrunk.OutboundInput{Address: "127.0.0.1:5062", Transport: "udp"}})
	if err != nil {
		t.Fatalf("a loopback trunk on the local stack: %v", err)
	}
	if _, err := r.svc.Update(ctx, r.acct, tr.ID, siptrunk.Input{Outbound: &siptrunk.OutboundInput{Address: "localhost.nip.io:5062"}}); err != nil {
		t.Errorf("a name resolving to loopback on the local stack: %v", err)
	}
	for _, bad := range []siptrunk.Input{
		{Inbound: &siptrunk.InboundInput{AllowedAddresses: []string{"192.168.1.0/24"}}},
		{Outbound: &siptrunk.OutboundInput{Address: "pbx.corp.example"}},
		{Outbound: &siptrunk.OutboundInput{Address: "169.254.169.254.nip.io"}},
	} {
		_, err := r.svc.Create(ctx, r.acct, bad)
		var e *apierr.Error
		if !errors.As(err, &e) || e.Code != apierr.CodeURLNotAllowed {
			t.Errorf("Create(%+v) on the local stack = %v, want url_not_allowed", bad, err)
		}
	}
}

// TestMediaEncryption: a trunk's media_encryption reaches LiveKit's inbound and outbound
// trunks; left out, it is allow over TLS and disable otherwise; an update changes it and
// LiveKit follows; a trunk stored before the setting reads as disable.
func TestMediaEncryption(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	tls, err := r.svc.Create(ctx, r.acct, full()) // outbound over tls
	if err != nil {
		t.Fatal(err)
	}
	udpIn := full()
	udpIn.Outbound.Transport = "udp"
	udp, err := r.svc.Create(ctx, r.acct, udpIn)
	if err != nil {
		t.Fatal(err)
	}
	inboundOnly, err := r.svc.Create(ctx, r.acct, siptrunk.Input{Inbound: &siptrunk.InboundInput{AllowedAddresses: []string{"54.172.60.0/30"}}})
	if err != nil {
		t.Fatal(err)
	}
	explicit := full()
	explicit.MediaEncryption = ptr(siptrunk.EncryptRequire)
	req, err := r.svc.Create(ctx, r.acct, explicit)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tr   siptrunk.Trunk
		want string
	}{{tls, "allow"}, {udp, "disable"}, {inboundOnly, "disable"}, {req, "require"}} {
		if tc.tr.Encryption() != tc.want {
			t.Errorf("trunk %s: media encryption %q, want %q", tc.tr.Name, tc.tr.Encryption(), tc.want)
		}
	}
	mustLine(t, r, req, "+15550100051")
	in, out, _ := r.lk.of(req.ID)
	if len(in) != 1 || len(out) != 1 || in[0].MediaEncryption != rtc.SIPEncryptRequire || out[0].MediaEncryption != rtc.SIPEncryptRequire {
		t.Fatalf("LiveKit's trunks of a require trunk: in %+v out %+v", in, out)
	}
	if _, err := r.svc.Update(ctx, r.acct, req.ID, siptrunk.Input{MediaEncryption: ptr(siptrunk.EncryptAllow)}); err != nil {
		t.Fatal(err)
	}
	if in, out, _ := r.lk.of(req.ID); in[0].MediaEncryption != rtc.SIPEncryptAllow || out[0].MediaEncryption != rtc.SIPEncryptAllow {
		t.Errorf("after the update LiveKit's trunks encrypt %q and %q, want allow", in[0].MediaEncryption, out[0].MediaEncryption)
	}
	if (siptrunk.Trunk{}).Encryption() != siptrunk.EncryptDisable {
		t.Error("a trunk stored without the setting does not read as disable")
	}
}
