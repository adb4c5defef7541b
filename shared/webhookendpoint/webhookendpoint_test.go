package webhookendpoint

import (
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
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
	if got := some.SigningSecrets(now); len(got) != 2 || got[0] != "new" || got[1] != "old" {
		t.Errorf("SigningSecrets during the overlap = %v, want [new old]", got)
	}
	if got := some.SigningSecrets(now.Add(2 * time.Hour)); len(got) != 1 || got[0] != "new" {
		t.Errorf("SigningSecrets after the overlap = %v, want [new]", got)
	}
}
