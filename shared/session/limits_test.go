package session

import (
	"context"
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/line"
)

func TestValidateHandle(t *testing.T) {
	for _, tc := range []struct {
		name, platform, handle string
		ok                     bool
	}{
		{"e164 on the sim", "sim", "+15550100002", true},
		{"shortest e164", "pstn", "+12345678", true},
		{"longest e164", "pstn", "+123456789012345", true},
		{"sim name", "sim", "sim:alice", true},
		{"sim scripted outcome", "sim", "sim:no_answer", true},
		{"sim name with dot and dash", "sim", "sim:long-talker.2", true},
		{"sim name of 64", "sim", "sim:" + strings.Repeat("a", 64), true},
		{"sim name of 65", "sim", "sim:" + strings.Repeat("a", 65), false},
		{"sim name empty", "sim", "sim:", false},
		{"sim name with a space", "sim", "sim:bad name", false},
		{"sim name starting with a dash", "sim", "sim:-x", false},
		{"bare name on the sim", "sim", "alice", false},
		{"sim name on a phone platform", "pstn", "sim:alice", false},
		{"too few digits", "pstn", "+1555", false},
		{"too many digits", "pstn", "+1234567890123456", false},
		{"no plus", "pstn", "15550100002", false},
		{"leading zero country code", "pstn", "+05550100002", false},
		{"spaces", "pstn", "+1 555 010 0002", false},
		{"dashes", "sim", "+1-555-010-0002", false},
	} {
		err := ValidateHandle(tc.platform, tc.handle)
		if (err == nil) != tc.ok {
			t.Errorf("%s: ValidateHandle(%q, %q) = %v, want ok %v", tc.name, tc.platform, tc.handle, err, tc.ok)
			continue
		}
		if err == nil {
			continue
		}
		e, isAPI := apierr.As(err)
		if !isAPI || e.Code != apierr.CodeParameterInvalid || e.Param != "platform_handle" || !strings.Contains(e.Message, "E.164") {
			t.Errorf("%s: ValidateHandle(%q, %q) = %v, want parameter_invalid on platform_handle naming E.164", tc.name, tc.platform, tc.handle, err)
		}
		if wantSim := tc.platform == "sim"; strings.Contains(e.Message, "sim:<name>") != wantSim {
			t.Errorf("%s: message %q names the sim form: %v, want %v", tc.name, e.Message, !wantSim, wantSim)
		}
	}
}

func TestAdmitTestKeys(t *testing.T) {
	s := &Service{}
	test, live := WithTestKey(context.Background()), context.Background()
	sim := line.Line{ID: "line_1", Platform: "sim"}
	pstn := line.Line{ID: "line_2", Platform: "pstn"}
	req := CreateRequest{PlatformHandle: "+15550100002"}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		l    line.Line
		code string
	}{
		{"test key on the sim", test, sim, ""},
		{"live key on the sim", live, sim, ""},
		{"live key on a phone platform", live, pstn, ""},
		{"test key on a phone platform", test, pstn, apierr.CodeLiveKeyRequired},
	} {
		err := s.admit(tc.ctx, req, tc.l)
		if got := limitErrCode(err); got != tc.code {
			t.Errorf("%s: admit = %v, want code %q", tc.name, err, tc.code)
		}
	}
	if e, _ := apierr.As(s.admit(test, req, pstn)); e == nil || e.Status() != 403 || !strings.Contains(e.Message, "sk_live_") {
		t.Errorf("test key on a phone platform = %v, want 403 telling to use an sk_live_ key", e)
	}
	// The handle's form is checked first: it is the same answer for either key.
	if got := limitErrCode(s.admit(test, CreateRequest{PlatformHandle: "sim:alice"}, pstn)); got != apierr.CodeParameterInvalid {
		t.Errorf("test key, sim handle on a phone line = %q, want parameter_invalid", got)
	}
}

func limitErrCode(err error) string {
	if e, ok := apierr.As(err); ok {
		return e.Code
	}
	if err != nil {
		return "internal"
	}
	return ""
}
