package session

import (
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
)

// phone is a telephone platform's Kind, as SIP's will be: E.164 only, live keys only.
type phone struct{}

func (phone) Name() string                    { return "pstn" }
func (phone) CheckHandle(handle string) error { return platform.CheckE164(handle) }
func (phone) CanTransfer() bool               { return true }
func (phone) TestKeys() bool                  { return false }

func TestAdmitTestKeys(t *testing.T) {
	const test, live = false, true
	simLine := line.Line{ID: "line_1", Platform: sim.Name}
	pstn := line.Line{ID: "line_2", Platform: "pstn"}
	req := CreateRequest{PlatformHandle: "+15550100002"}
	for _, tc := range []struct {
		name string
		live bool
		l    line.Line
		kind platform.Kind
		code string
	}{
		{"test key on the sim", test, simLine, sim.Kind{}, ""},
		{"live key on the sim", live, simLine, sim.Kind{}, ""},
		{"live key on a phone platform", live, pstn, phone{}, ""},
		{"test key on a phone platform", test, pstn, phone{}, apierr.CodeLiveKeyRequired},
	} {
		err := admit(tc.live, req, tc.l, tc.kind)
		if got := limitErrCode(err); got != tc.code {
			t.Errorf("%s: admit = %v, want code %q", tc.name, err, tc.code)
		}
	}
	if e, _ := apierr.As(admit(test, req, pstn, phone{})); e == nil || e.Status() != 403 || !strings.Contains(e.Message, "sk_live_") {
		t.Errorf("test key on a phone platform = %v, want 403 telling to use an sk_live_ key", e)
	}
	// A handle the line's platform does not dial: parameter_invalid on platform_handle,
	// naming the platform and the forms it dials.
	for _, tc := range []struct {
		kind platform.Kind
		want string
	}{
		{sim.Kind{}, "platform_handle on the sim platform must be an E.164 number (+ and 8-15 digits, e.g. +15550100002) " +
			"or sim:<name> (1-64 letters, digits, '.', '_' or '-', e.g. sim:alice)"},
		{phone{}, "platform_handle on the pstn platform must be an E.164 number: + and 8-15 digits, e.g. +15550100002"},
	} {
		err := admit(live, CreateRequest{PlatformHandle: "alice"}, pstn, tc.kind)
		if e, ok := apierr.As(err); !ok || e.Code != apierr.CodeParameterInvalid || e.Param != "platform_handle" || e.Message != tc.want {
			t.Errorf("handle alice on %s = %v, want parameter_invalid on platform_handle: %q", tc.kind.Name(), err, tc.want)
		}
	}
	// The handle's form is checked first: it is the same answer for either key.
	if got := limitErrCode(admit(test, CreateRequest{PlatformHandle: "sim:alice"}, pstn, phone{})); got != apierr.CodeParameterInvalid {
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
