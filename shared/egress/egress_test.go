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
		{"sub.localhost", "api.localhost.", true, false},
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
