package platform

import (
	"errors"
	"regexp"
)

// e164 is an international phone number: +, a country code that does not start with 0,
// and 8 to 15 digits in all.
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{7,14}$`)

// sipURI is a SIP URI as a destination: sip: or sips:, a user, @, a host with an
// optional port, and optional parameters, on one line.
var sipURI = regexp.MustCompile(`^sips?:[^@\s<>"]{1,128}@[A-Za-z0-9.\-\[\]:]{1,255}(;[^\s<>"]{0,255})?$`)

// ErrNotDestination is CheckDestination's refusal.
var ErrNotDestination = errors.New("an E.164 number (+15550100002) or a SIP URI (sip:agent@pbx.example.com)")

// CheckDestination checks where a call may be transferred: an E.164 number or a SIP URI
// (sip:agent@pbx.example.com); else ErrNotDestination.
func CheckDestination(to string) error {
	if IsE164(to) || (len(to) <= 512 && sipURI.MatchString(to)) {
		return nil
	}
	return ErrNotDestination
}

// IsE164 reports whether handle is an E.164 number (+15550100002).
func IsE164(handle string) bool { return e164.MatchString(handle) }

// ErrNotE164 is CheckE164's refusal.
var ErrNotE164 = errors.New("an E.164 number: + and 8-15 digits, e.g. +15550100002")

// CheckE164 is CheckHandle of a telephone platform, which dials E.164 numbers only.
func CheckE164(handle string) error {
	if IsE164(handle) {
		return nil
	}
	return ErrNotE164
}
