// Package egress decides which network addresses Bridgeline may connect to on a
// customer's behalf (webhook deliveries and call.incoming posts). A webhook URL is the
// customer's text, so without this check it could reach the cloud metadata service,
// the VPC or the host's own ports, and the attempt log would show what answered.
//
// The check runs twice: on the URL when an endpoint is created or changed (a literal
// internal address is refused with 400 url_not_allowed), and on every connection after
// DNS resolution (net.Dialer.Control), so a name that resolves, or later re-resolves, to
// an internal address is refused before a packet is sent.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// ErrBlocked is what a refused connection returns (wrapped with the address).
var ErrBlocked = errors.New("blocked destination")

// ErrNotCanonical is CanonicalHost's refusal (wrapped with the reason).
var ErrNotCanonical = errors.New("host not written canonically")

// AllowLoopbackEnv names the environment variable that lets loopback through (read by
// shared/config into Webhooks.AllowLoopback).
const AllowLoopbackEnv = "WEBHOOK_ALLOW_LOOPBACK"

// Policy says which addresses are refused. The zero Policy refuses every internal form;
// AllowLoopback lets 127.0.0.0/8 and ::1 through for the local stack, whose receivers
// run on the developer's machine. Private, link-local and the other forms stay refused.
type Policy struct {
	AllowLoopback bool
}

// Ranges that are internal but which netip's predicates do not name.
var extraBlocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"; 0.0.0.0 reaches local listeners on Linux
	netip.MustParsePrefix("100.64.0.0/10"),   // CGNAT, shared address space (RFC 6598)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and 255.255.255.255 broadcast
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2002::/16"),       // 6to4: embeds an IPv4 address we cannot vet cheaply
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated), embeds IPv4
	netip.MustParsePrefix("::ffff:0:0:0/96"), // SIIT translated
}

// nat64 addresses reach the IPv4 address in their last 32 bits: Check vets that one.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Check returns ErrBlocked, wrapped with the reason, when ip may not be connected to.
func (p Policy) Check(ip netip.Addr) error {
	if !ip.IsValid() {
		return fmt.Errorf("%w: invalid address", ErrBlocked)
	}
	ip = ip.Unmap() // ::ffff:10.0.0.5 is 10.0.0.5
	if nat64.Contains(ip) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	reason := ""
	switch {
	case ip.IsLoopback():
		if p.AllowLoopback {
			return nil
		}
		reason = "loopback"
	case ip.IsUnspecified():
		reason = "unspecified"
	case ip.IsPrivate(): // 10/8, 172.16/12, 192.168/16, fc00::/7
		reason = "private"
	case ip.IsLinkLocalUnicast(): // 169.254/16 (cloud metadata), fe80::/10
		reason = "link-local"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		reason = "multicast"
	}
	if reason == "" {
		for _, pr := range extraBlocked {
			if pr.Contains(ip) {
				reason = "reserved " + pr.String()
				break
			}
		}
	}
	if reason != "" {
		return fmt.Errorf("%w: %s is %s", ErrBlocked, ip, reason)
	}
	return nil
}

// Control is a net.Dialer Control function: it runs after resolution, on the address
// about to be connected, and refuses it before the connect system call.
func (p Policy) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: unparsable address %q", ErrBlocked, address)
	}
	return p.Check(ap.Addr())
}

// Dialer is a dialer that applies the policy to every address it connects to. r is the
// resolver to use (nil: the system's); tests give one that answers with internal
// addresses.
func (p Policy) Dialer(r *net.Resolver) *net.Dialer {
	return &net.Dialer{Timeout: 5 * time.Second, Resolver: r, Control: p.Control}
}

// PlainHTTP reports whether an unencrypted (http) request may go to host: only to a
// loopback receiver (localhost, or a loopback address written as one) when the policy
// lets loopback through, as on the local stack. Everything else Bridgeline sends signed
// goes over https.
func (p Policy) PlainHTTP(host string) bool {
	if !p.AllowLoopback {
		return false
	}
	h := strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback() && CanonicalHost(host) == nil
}

// CheckURL is the create-time check of every URL a customer gives (webhook endpoints,
// and the tools' and SIP trunks' addresses as they come): its host, as written in raw,
// must pass CheckHost. Call it at create and at every update; the dial-time check
// (Control) still applies to what the name resolves to.
func (p Policy) CheckURL(raw string) error {
	host, err := urlHost(raw)
	if err != nil {
		return err
	}
	return p.CheckHost(host)
}

// CheckHost refuses a host that is not written canonically (CanonicalHost) or that is a
// literal internal address (or "localhost"), so the customer learns at create time, not
// from failed deliveries. Other names are checked when dialled. host is a bare host
// (a SIP trunk's address) or a URL's, with or without an IPv6 address's brackets.
func (p Policy) CheckHost(host string) error {
	if err := CanonicalHost(host); err != nil {
		return err
	}
	h := strings.ToLower(host)
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		if p.AllowLoopback {
			return nil
		}
		return fmt.Errorf("%w: %s is loopback", ErrBlocked, host)
	}
	ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"))
	if err != nil {
		return nil // a name: checked at dial time
	}
	return p.Check(ip.WithZone(""))
}

// internalRanges are the ranges Check refuses through netip's predicates, as prefixes,
// with the reason Check gives: CheckPrefix tests a block against them.
var internalRanges = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("fc00::/7"), "private"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
	{netip.MustParsePrefix("::ffff:0:0/96"), "IPv4-mapped (give the IPv4 form)"},
	{nat64, "NAT64 (give the IPv4 form)"},
}

// CheckPrefix is Check for a block of addresses (an inbound allow-list entry): it
// returns ErrBlocked, wrapped with the reason, when any address of pr is one Check
// refuses. An IPv4-mapped block (::ffff:a.b.c.d/96+n) is checked as its IPv4 block.
func (p Policy) CheckPrefix(pr netip.Prefix) error {
	if !pr.IsValid() {
		return fmt.Errorf("%w: invalid block", ErrBlocked)
	}
	pr = pr.Masked()
	if a := pr.Addr(); a.Is4In6() && pr.Bits() >= 96 {
		pr = netip.PrefixFrom(a.Unmap(), pr.Bits()-96)
	}
	for _, r := range internalRanges {
		if r.reason == "loopback" && p.AllowLoopback {
			if r.prefix.Bits() <= pr.Bits() && r.prefix.Contains(pr.Addr()) {
				return nil // a loopback block, on the local stack
			}
			continue
		}
		if pr.Overlaps(r.prefix) {
			return fmt.Errorf("%w: %s holds %s addresses (%s)", ErrBlocked, pr, r.reason, r.prefix)
		}
	}
	for _, r := range extraBlocked {
		if pr.Overlaps(r) {
			return fmt.Errorf("%w: %s holds reserved addresses (%s)", ErrBlocked, pr, r)
		}
	}
	return nil
}

// Resolver looks a name up (*net.Resolver does).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// ErrNoAddress is CheckName's answer for a name that has no address.
var ErrNoAddress = errors.New("name has no address")

// CheckName resolves host (a bare host, as CheckHost takes it) with r (nil: the
// system's resolver) and refuses it when any address it resolves to is refused by Check:
// for the destinations Bridgeline does not dial itself (a SIP trunk's provider, which
// LiveKit's SIP bridge dials), so the Control of a Dialer cannot apply. A literal address
// is CheckHost's. ErrNoAddress when the name does not exist; another error when the
// lookup failed.
func (p Policy) CheckName(ctx context.Context, r Resolver, host string) error {
	if err := p.CheckHost(host); err != nil {
		return err
	}
	h := strings.ToLower(host)
	if _, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")); err == nil {
		return nil // literal: CheckHost checked it
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return nil // allowed by CheckHost (loopback allowed)
	}
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", h)
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound || err == nil && len(addrs) == 0 {
		return fmt.Errorf("%w: %s", ErrNoAddress, host)
	}
	if err != nil {
		return fmt.Errorf("resolve %s: %w", host, err)
	}
	for _, a := range addrs {
		if err := p.Check(a.WithZone("")); err != nil {
			return fmt.Errorf("%s resolves to %s: %w", host, a, err)
		}
	}
	return nil
}

// Example is one address of a refused form.
type Example struct {
	Form string
	Addr string
}

// Refused is one address of each form the policy refuses with AllowLoopback off; the
// tests of every layer that applies the policy (endpoint create, delivery dial) run
// through all of them. Loopback is true for the forms AllowLoopback lets through.
var Refused = []struct {
	Example
	Loopback bool
}{
	{Example{"loopback", "127.0.0.1"}, true},
	{Example{"loopback other", "127.1.2.3"}, true},
	{Example{"loopback v6", "::1"}, true},
	{Example{"mapped loopback", "::ffff:127.0.0.1"}, true},
	{Example{"private 10/8", "10.0.0.5"}, false},
	{Example{"private 172.16/12", "172.16.0.1"}, false},
	{Example{"private 192.168/16", "192.168.1.1"}, false},
	{Example{"link-local metadata", "169.254.169.254"}, false},
	{Example{"link-local v6", "fe80::1"}, false},
	{Example{"CGNAT", "100.64.0.1"}, false},
	{Example{"unique-local fc00", "fc00::1"}, false},
	{Example{"unique-local fd00", "fd12:3456::1"}, false},
	{Example{"multicast", "224.0.0.1"}, false},
	{Example{"multicast v6", "ff02::1"}, false},
	{Example{"unspecified", "0.0.0.0"}, false},
	{Example{"unspecified v6", "::"}, false},
	{Example{"broadcast", "255.255.255.255"}, false},
	{Example{"mapped private", "::ffff:10.0.0.5"}, false},
	{Example{"mapped metadata", "::ffff:169.254.169.254"}, false},
	{Example{"mapped CGNAT", "::ffff:100.64.0.1"}, false},
	{Example{"NAT64 private", "64:ff9b::a00:5"}, false},
}

// CanonicalHost refuses a host that clients could read as different addresses. Go's
// dialer takes 0xa9fea9fe, 2852039166, 0251.0376.0251.0376 or 169.254.43518 for names
// (and fails at DNS), while browsers, curl, other HTTP libraries and proxies read each as
// 169.254.169.254; a host accepted here means the same to all of them. It allows:
//
//   - a DNS name in ASCII: labels of letters, digits and hyphens (1-63 characters, no
//     hyphen first or last; an internationalised name in its xn-- form), at most 253
//     characters, no trailing dot, and a last label that is not a number (all digits,
//     or 0x and hex digits: the form URL parsers take for an IPv4 address);
//   - an IPv4 address as four decimal numbers 0-255 without leading zeros;
//   - an IPv6 address (in brackets or not), without a zone.
//
// Percent-encoding and any other character are refused. It says nothing of where the
// host points: CheckHost does that.
func CanonicalHost(host string) error {
	bad := func(why string) error { return fmt.Errorf("%w: %q: %s", ErrNotCanonical, host, why) }
	h := host
	if strings.HasPrefix(h, "[") {
		if !strings.HasSuffix(h, "]") {
			return bad("unclosed bracket")
		}
		h = h[1 : len(h)-1]
		if !strings.Contains(h, ":") {
			return bad("brackets hold an IPv6 address only")
		}
	}
	switch {
	case h == "":
		return bad("empty")
	case strings.ContainsRune(h, '%'):
		return bad("percent-encoding or an IPv6 zone")
	case strings.Contains(h, ":"):
		if ip, err := netip.ParseAddr(h); err != nil || !ip.Is6() {
			return bad("not an IPv6 address")
		}
		return nil
	case strings.Trim(h, "0123456789.") == "":
		if ip, err := netip.ParseAddr(h); err != nil || !ip.Is4() {
			return bad("an IPv4 address is four decimal numbers 0-255 without leading zeros")
		}
		return nil
	}
	if len(h) > 253 {
		return bad("longer than 253 characters")
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" {
			return bad("empty label (or a trailing dot)")
		}
		if len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return bad("a label is 1-63 characters and neither starts nor ends with a hyphen")
		}
		for i := 0; i < len(l); i++ {
			c := l[i] | 0x20 // lower case for letters
			if !(c >= 'a' && c <= 'z') && !(l[i] >= '0' && l[i] <= '9') && l[i] != '-' {
				return bad("a name holds ASCII letters, digits and hyphens only (xn-- for other scripts)")
			}
		}
	}
	if numericLabel(labels[len(labels)-1]) {
		return bad("its last part is a number, which URL parsers read as an IPv4 address")
	}
	return nil
}

// numericLabel reports whether l is what the URL standard's "ends in a number" check
// takes for a number: all decimal digits, or 0x followed by hex digits (or nothing).
func numericLabel(l string) bool {
	l = strings.ToLower(l)
	digits := "0123456789"
	if strings.HasPrefix(l, "0x") {
		l, digits = l[2:], "0123456789abcdef"
		if l == "" {
			return true
		}
	}
	return strings.Trim(l, digits) == ""
}

// CanonicalURL is CanonicalHost on the host of raw as written there (an absolute URL),
// before any decoding: for the places that hold a URL given earlier, such as a
// delivery about to be sent.
func CanonicalURL(raw string) error {
	host, err := urlHost(raw)
	if err != nil {
		return err
	}
	return CanonicalHost(host)
}

// urlHost is the host of an absolute URL exactly as raw writes it: net/url decodes
// percent-encoding in a host, and this check is of what other clients read.
func urlHost(raw string) (string, error) {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return "", fmt.Errorf("%w: %q is not an absolute URL", ErrNotCanonical, raw)
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	if strings.HasPrefix(rest, "[") {
		if i := strings.Index(rest, "]"); i >= 0 {
			return rest[:i+1], nil
		}
		return rest, nil
	}
	if i := strings.LastIndex(rest, ":"); i >= 0 {
		rest = rest[:i]
	}
	return rest, nil
}

// NonCanonical is one host of each form CanonicalHost refuses; the tests of every layer
// that takes a customer's URL run through all of them. Most are 169.254.169.254, the
// metadata service, as some client would read them.
var NonCanonical = []Example{
	{"hex", "0xa9fea9fe"},
	{"decimal", "2852039166"},
	{"octal", "0251.0376.0251.0376"},
	{"dotted hex", "0xa9.0xfe.0xa9.0xfe"},
	{"mixed bases", "0xa9.254.0251.254"},
	{"three parts", "169.254.43518"},
	{"two parts", "169.16689662"},
	{"leading zero", "169.254.169.0254"},
	{"out of range part", "169.254.169.256"},
	{"hex last label of a name", "metadata.0xfe"},
	{"decimal last label of a name", "hooks.example.254"},
	{"bare 0x", "hooks.0x"},
	{"trailing dot", "2852039166."},
	{"name with trailing dot", "hooks.example.com."},
	{"percent-encoded", "%31%36%39.254.169.254"},
	{"full-width digits", "\uff11\uff16\uff19.\uff12\uff15\uff14.\uff11\uff16\uff19.\uff12\uff15\uff14"},
	{"non-ASCII name", "b\u00fccher.example"},
	{"IPv6 zone", "[fe80::1%25eth0]"},
	{"IPv6 zone unescaped", "[fe80::1%eth0]"},
	{"IPv4 in brackets", "[169.254.169.254]"},
	{"empty label", "hooks..example.com"},
	{"underscore", "hooks_1.example.com"},
	{"hyphen first", "-hooks.example.com"},
}
