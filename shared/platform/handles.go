package platform

import (
	"fmt"
	"regexp"

	"github.com/bridgeline/bridgeline/shared/apierr"
)

// e164 is an international phone number: +, a country code that does not start with 0,
// and 8 to 15 digits in all.
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{7,14}$`)

// IsE164 reports whether handle is an E.164 number (+15550100002).
func IsE164(handle string) bool { return e164.MatchString(handle) }

// CheckE164 is CheckHandle of a telephone platform, which dials E.164 numbers only: nil
// for one, else parameter_invalid on platform_handle naming the platform and the form.
func CheckE164(platformName, handle string) error {
	if IsE164(handle) {
		return nil
	}
	return apierr.Invalid("platform_handle", fmt.Sprintf(
		"platform_handle on the %s platform must be an E.164 number: + and 8-15 digits, e.g. +15550100002", platformName))
}
