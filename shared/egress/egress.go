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
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"time"
)

// ErrBlocked is what a refused connection returns (wrapped with the address).
var ErrBlocked = errors.New("blocked destination")

// AllowLoopbackEnv names the environment variable that lets loopback through.
const AllowLoopbackEnv = "WEBHOOK_ALLOW_LOOPBACK"

// Policy says which addresses are refused. The zero Policy refuses every internal form;
// AllowLoopback lets 127.0.0.0/8 and ::1 through for the local stack, whose receivers
// run on the developer's machine. Private, link-local and the other forms stay refused.
type Policy struct {
	AllowLoopback bool
}

// PolicyFromEnv reads WEBHOOK_ALLOW_LOOPBACK (1 or true allows loopback).
func PolicyFromEnv() Policy {
	v := strings.ToLower(strings.TrimSpace(os.Getenv(AllowLoopbackEnv)))
	return Policy{AllowLoopback: v == "1" || v == "true"}
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

// CheckHost refuses a URL host that is a literal internal address (or "localhost"),
// so the customer learns at create time, not from failed deliveries. Other names are
// checked when dialled.
func (p Policy) CheckHost(host string) error {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
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
