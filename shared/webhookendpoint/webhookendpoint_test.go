package webhookendpoint

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/egress"
)

func TestValidURL(t *testing.T) {
	for _, tc := range []struct {
		url  string
		code string
	}{
		{"https://example.test/hooks", ""},
		{"http://127.0.0.1:9000/hooks?x=1", ""},
		{"", apierr.CodeParameterMissing},
		{"ftp://example.test/", apierr.CodeParameterInvalid},
		{"/hooks", apierr.CodeParameterInvalid},
		{"https://", apierr.CodeParameterInvalid},
		{"https://user:pass@example.test/", apierr.CodeParameterInvalid},
		{"https://example.test/" + string(make([]byte, 2100)), apierr.CodeParameterInvalid},
	} {
		err := ValidURL(tc.url)
		if (tc.code == "" && err != nil) || (tc.code != "" && !apierr.Is(err, tc.code)) {
			t.Errorf("ValidURL(%.40q) = %v, want %q", tc.url, err, tc.code)
		}
	}
}

func TestSubscribedAndSigningSecrets(t *testing.T) {
	now := time.Date(2026, 11, 22, 7, 0, 0, 0, time.UTC)
	all := Endpoint{Secret: "new"}
	some := Endpoint{Events: []string{"call.ended"}, Secret: "new", PreviousSecret: "old", PreviousSecretExpiresAt: now.Add(time.Hour)}
	if !all.Subscribed("call.incoming") || !some.Subscribed("call.ended") || some.Subscribed("call.incoming") {
		t.Error("Subscribed: an empty filter takes every type, a list only its own")
	}
	if (Endpoint{Status: StatusEnabled}).Target().Enabled != true || (Endpoint{Status: StatusDisabled}).Target().Enabled {
		t.Error("Target().Enabled is Status == enabled")
	}
	if got := some.Target().SigningSecrets(now); len(got) != 2 || got[0] != "new" || got[1] != "old" {
		t.Errorf("SigningSecrets during the overlap = %v, want [new old]", got)
	}
	if got := some.Target().SigningSecrets(now.Add(2 * time.Hour)); len(got) != 1 || got[0] != "new" {
		t.Errorf("SigningSecrets after the overlap = %v, want [new]", got)
	}
}

// TestInternalURLsRefusedAtCreate: a URL whose host is a literal internal address is
// refused on create and on update, before anything is stored (the Service has no store:
// reaching it would panic).
func TestInternalURLsRefusedAtCreate(t *testing.T) {
	strict := &Service{}
	local := &Service{Destinations: egress.Policy{AllowLoopback: true}}
	for _, tc := range egress.Refused {
		t.Run(tc.Form, func(t *testing.T) {
			host := tc.Addr
			if strings.Contains(host, ":") {
				host = "[" + host + "]"
			}
			u := "http://" + host + ":8080/hooks"
			if _, err := strict.Create(context.Background(), "acct_1", Input{URL: &u}); !apierr.Is(err, apierr.CodeURLNotAllowed) {
				t.Errorf("Create(%s) = %v, want %s", u, err, apierr.CodeURLNotAllowed)
			}
			if _, err := strict.Update(context.Background(), "acct_1", "whep_1", Input{URL: &u}); !apierr.Is(err, apierr.CodeURLNotAllowed) {
				t.Errorf("Update(%s) = %v, want %s", u, err, apierr.CodeURLNotAllowed)
			}
			if !tc.Loopback {
				if _, err := local.Create(context.Background(), "acct_1", Input{URL: &u}); !apierr.Is(err, apierr.CodeURLNotAllowed) {
					t.Errorf("with loopback allowed, Create(%s) = %v, want %s", u, err, apierr.CodeURLNotAllowed)
				}
			}
		})
	}
}

// TestNonCanonicalHostsRefusedAtCreate: a URL whose host some client would read as an
// address other than what Go's dialer reads (http://0xa9fea9fe/hook and
// http://2852039166/hook are 169.254.169.254 to a browser, curl or a proxy, and names to
// Go) is refused on create and on update, with either key mode and loopback allowed or
// not, before anything is stored (the Service has no store: reaching it would panic).
func TestNonCanonicalHostsRefusedAtCreate(t *testing.T) {
	for _, tc := range egress.NonCanonical {
		t.Run(tc.Form, func(t *testing.T) {
			for _, svc := range []*Service{{}, {Destinations: egress.Policy{AllowLoopback: true}}} {
				for _, scheme := range []string{"http", "https"} {
					u := scheme + "://" + tc.Addr + "/hook"
					_, err := svc.Create(context.Background(), "acct_1", Input{URL: &u})
					if e, ok := apierr.As(err); !ok || e.Status() != 400 || e.Param != "url" {
						t.Errorf("Create(%s) = %v, want 400 on url", u, err)
					}
					_, err = svc.Update(context.Background(), "acct_1", "whep_1", Input{URL: &u})
					if e, ok := apierr.As(err); !ok || e.Status() != 400 || e.Param != "url" {
						t.Errorf("Update(%s) = %v, want 400 on url", u, err)
					}
				}
			}
		})
	}
	for _, u := range []string{"http://0xa9fea9fe/hook", "http://2852039166/hook"} {
		if _, err := (&Service{}).Create(context.Background(), "acct_1", Input{URL: &u}); !apierr.Is(err, apierr.CodeURLNotAllowed) {
			t.Errorf("Create(%s) = %v, want %s", u, err, apierr.CodeURLNotAllowed)
		}
	}
}

// TestAllowedURL: every endpoint is https whatever the key's mode (events have no
// mode: each endpoint receives the account's live calls' events), except a loopback
// receiver where the policy lets loopback through (the local stack).
func TestAllowedURL(t *testing.T) {
	local := egress.Policy{AllowLoopback: true}
	tests := []struct {
		name, url string
		dest      egress.Policy
		wantCode  string // "" for allowed
	}{
		{"public https", "https://hooks.example.com/x", egress.Policy{}, ""},
		{"public https locally", "https://hooks.example.com/x", local, ""},
		{"public http", "http://hooks.example.com/x", egress.Policy{}, apierr.CodeURLNotAllowed},
		{"public http locally", "http://hooks.example.com/x", local, apierr.CodeURLNotAllowed},
		{"localhost strict", "http://localhost:9000/x", egress.Policy{}, apierr.CodeURLNotAllowed},
		{"localhost allowed locally", "http://localhost:9000/x", local, ""},
		{"loopback allowed locally", "http://127.0.0.1:9000/x", local, ""},
		{"v6 loopback allowed locally", "http://[::1]:9000/x", local, ""},
		{"loopback https locally", "https://127.0.0.1:9000/x", local, ""},
		{"a name of loopback over http", "http://loopback.hooks.example/x", local, apierr.CodeURLNotAllowed},
		{"metadata even locally", "http://169.254.169.254/latest/meta-data", local, apierr.CodeURLNotAllowed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := AllowedURL(tc.dest, tc.url)
			switch {
			case tc.wantCode == "" && err != nil:
				t.Errorf("AllowedURL(%q) = %v, want nil", tc.url, err)
			case tc.wantCode != "" && !apierr.Is(err, tc.wantCode):
				t.Errorf("AllowedURL(%q) = %v, want %s", tc.url, err, tc.wantCode)
			}
		})
	}
}
