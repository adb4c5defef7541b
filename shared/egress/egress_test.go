package egress_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/bridgeline/bridgeline/shared/egress"
)

func TestCheckRefusesEveryInternalForm(t *testing.T) {
	for _, tc := range egress.Refused {
		t.Run(tc.Form, func(t *testing.T) {
			ip := netip.MustParseAddr(tc.Addr)
			if err := (egress.Policy{}).Check(ip); !errors.Is(err, egress.ErrBlocked) {
				t.Errorf("Policy{}.Check(%s) = %v, want ErrBlocked", ip, err)
			}
			err := egress.Policy{AllowLoopback: true}.Check(ip)
			if tc.Loopback && err != nil {
				t.Errorf("Policy{AllowLoopback}.Check(%s) = %v, want nil", ip, err)
			}
			if !tc.Loopback && !errors.Is(err, egress.ErrBlocked) {
				t.Errorf("Policy{AllowLoopback}.Check(%s) = %v, want ErrBlocked: only loopback is let through", ip, err)
			}
		})
	}
}

func TestCheckAllowsPublicAddresses(t *testing.T) {
	for _, addr := range []string{"93.184.215.14", "8.8.8.8", "100.128.0.1", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"} {
		if err := (egress.Policy{}).Check(netip.MustParseAddr(addr)); err != nil {
			t.Errorf("Check(%s) = %v, want nil", addr, err)
		}
	}
}

func TestCheckHost(t *testing.T) {
	tests := []struct {
		name, host    string
		strict, local bool // refused without / with AllowLoopback
	}{
		{"name", "hooks.example.com", false, false},
		{"public literal", "8.8.8.8", false, false},
		{"localhost", "localhost", true, false},
		{"sub.localhost", "api.localhost", true, false},
		{"sub.localhost with trailing dot", "api.localhost.", true, true},
		{"bracketed v6 loopback literal", "[::1]", true, false},
		{"decimal metadata", "2852039166", true, true},
		{"loopback literal", "127.0.0.1", true, false},
		{"v6 loopback literal", "::1", true, false},
		{"metadata", "169.254.169.254", true, true},
		{"mapped private", "::ffff:10.0.0.5", true, true},
		{"zoned link-local", "fe80::1%eth0", true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := (egress.Policy{}).CheckHost(tc.host) != nil; got != tc.strict {
				t.Errorf("Policy{}.CheckHost(%q) refused = %v, want %v", tc.host, got, tc.strict)
			}
			if got := (egress.Policy{AllowLoopback: true}).CheckHost(tc.host) != nil; got != tc.local {
				t.Errorf("Policy{AllowLoopback}.CheckHost(%q) refused = %v, want %v", tc.host, got, tc.local)
			}
		})
	}
}

// TestCanonicalHost: every form of NonCanonical is refused, by CanonicalHost and by
// CheckHost and CheckURL under either policy, and the usual spellings pass.
func TestCanonicalHost(t *testing.T) {
	for _, tc := range egress.NonCanonical {
		t.Run(tc.Form, func(t *testing.T) {
			if err := egress.CanonicalHost(tc.Addr); !errors.Is(err, egress.ErrNotCanonical) {
				t.Errorf("CanonicalHost(%q) = %v, want ErrNotCanonical", tc.Addr, err)
			}
			for _, p := range []egress.Policy{{}, {AllowLoopback: true}} {
				if err := p.CheckHost(tc.Addr); err == nil {
					t.Errorf("%+v.CheckHost(%q) = nil, want a refusal", p, tc.Addr)
				}
				u := "https://" + tc.Addr + ":8443/hook"
				if err := p.CheckURL(u); err == nil {
					t.Errorf("%+v.CheckURL(%q) = nil, want a refusal", p, u)
				}
			}
		})
	}
	for _, h := range []string{"hooks.example.com", "Hooks.Example.COM", "a", "xn--bcher-kva.example", "1.example.com",
		"example.0x1z", "93.184.215.14", "8.8.8.8", "2606:4700::1111", "[2606:4700::1111]", "::ffff:8.8.8.8",
		"a-b.c-d.example"} {
		if err := egress.CanonicalHost(h); err != nil {
			t.Errorf("CanonicalHost(%q) = %v, want nil", h, err)
		}
	}
}

// TestCheckURLReadsTheHostAsWritten: the host is taken from the URL's text, before the
// decoding net/url does, past credentials and up to the port, path, query or fragment.
func TestCheckURLReadsTheHostAsWritten(t *testing.T) {
	for _, tc := range []struct {
		url     string
		refused bool
	}{
		{"https://hooks.example.com/x", false},
		{"https://hooks.example.com:8443?x=1", false},
		{"https://hooks.example.com#frag", false},
		{"https://[2606:4700::1111]:443/x", false},
		{"https://user:pw@hooks.example.com/x", false}, // credentials are the endpoint rules' matter
		{"http://%31%36%39.254.169.254/latest", true},
		{"http://0xa9fea9fe/hook", true},
		{"http://2852039166/hook", true},
		{"http://169.254.169.254/hook", true},
		{"http://[fe80::1%25eth0]:80/hook", true},
		{"http://user@0xa9fea9fe/hook", true},
		{"hooks.example.com/x", true},
	} {
		if err := (egress.Policy{}).CheckURL(tc.url); (err != nil) != tc.refused {
			t.Errorf("CheckURL(%q) = %v, want refused %v", tc.url, err, tc.refused)
		}
	}
}

// TestCheckPrefix: a block is refused when it holds any address Check refuses: each
// refused form as a single address and inside a wider block; loopback blocks pass with
// AllowLoopback only; public blocks pass.
func TestCheckPrefix(t *testing.T) {
	for _, tc := range egress.Refused {
		ip := netip.MustParseAddr(tc.Addr)
		single := netip.PrefixFrom(ip, ip.BitLen())
		wider, _ := ip.Prefix(ip.BitLen() - 4)
		for _, p := range []netip.Prefix{single, wider} {
			if err := (egress.Policy{}).CheckPrefix(p); !errors.Is(err, egress.ErrBlocked) {
				t.Errorf("%s: Policy{}.CheckPrefix(%s) = %v, want ErrBlocked", tc.Form, p, err)
			}
		}
		err := egress.Policy{AllowLoopback: true}.CheckPrefix(single)
		if tc.Loopback != (err == nil) {
			t.Errorf("%s: Policy{AllowLoopback}.CheckPrefix(%s) = %v, want refused %v", tc.Form, single, err, !tc.Loopback)
		}
	}
	for _, b := range []string{"172.0.0.0/8", "168.0.0.0/6", "2000::/4", "fc00::/6"} { // hold an internal range
		if err := (egress.Policy{AllowLoopback: true}).CheckPrefix(netip.MustParsePrefix(b)); !errors.Is(err, egress.ErrBlocked) {
			t.Errorf("CheckPrefix(%s) = %v, want ErrBlocked", b, err)
		}
	}
	for _, b := range []string{"54.172.60.0/30", "8.8.8.8/32", "172.32.0.0/11", "2600:1f18::/32", "::ffff:54.172.60.0/126"} {
		if err := (egress.Policy{}).CheckPrefix(netip.MustParsePrefix(b)); err != nil {
			t.Errorf("CheckPrefix(%s) = %v, want nil", b, err)
		}
	}
}

type names map[string][]string

func (n names) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	addrs, ok := n[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, a := range addrs {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

// TestCheckName: a name is refused when any address it resolves to is refused; one that
// does not exist is ErrNoAddress; literals are CheckHost's.
func TestCheckName(t *testing.T) {
	ctx := context.Background()
	r := names{"169.254.169.254.nip.io": {"169.254.169.254"}, "sip.example.org": {"54.172.60.1", "2600:1f18::1"},
		"half.example.org": {"54.172.60.1", "10.0.0.1"}, "local.example.org": {"127.0.0.1"}}
	for _, tc := range []struct {
		host        string
		strict, dev error // want, without and with AllowLoopback
	}{
		{"sip.example.org", nil, nil},
		{"54.172.60.1", nil, nil},
		{"169.254.169.254.nip.io", egress.ErrBlocked, egress.ErrBlocked},
		{"half.example.org", egress.ErrBlocked, egress.ErrBlocked},
		{"local.example.org", egress.ErrBlocked, nil},
		{"127.0.0.1", egress.ErrBlocked, nil},
		{"localhost", egress.ErrBlocked, nil},
		{"10.1.2.3", egress.ErrBlocked, egress.ErrBlocked},
		{"0xa9fea9fe", egress.ErrNotCanonical, egress.ErrNotCanonical},
		{"nowhere.example.org", egress.ErrNoAddress, egress.ErrNoAddress},
	} {
		for _, p := range []struct {
			policy egress.Policy
			want   error
		}{{egress.Policy{}, tc.strict}, {egress.Policy{AllowLoopback: true}, tc.dev}} {
			err := p.policy.CheckName(ctx, r, tc.host)
			if (p.want == nil) != (err == nil) || p.want != nil && !errors.Is(err, p.want) {
				t.Errorf("%+v.CheckName(%s) = %v, want %v", p.policy, tc.host, err, p.want)
			}
		}
	}
}
