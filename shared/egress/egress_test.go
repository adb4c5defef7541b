package egress_test

import (
	"errors"
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

func TestPolicyFromEnv(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "1": true, "true": true, "yes": false} {
		t.Setenv(egress.AllowLoopbackEnv, v)
		if got := egress.PolicyFromEnv().AllowLoopback; got != want {
			t.Errorf("%s=%q: AllowLoopback = %v, want %v", egress.AllowLoopbackEnv, v, got, want)
		}
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
