// Package destination decides where a line may call on a real telephone network: the
// countries it may reach (the line's own allowed_destination_countries, else its
// account's, else the country of the line's own number), the premium-rate and
// shared-cost ranges refused whatever the policy (premium.go), and the account's daily
// outbound minutes (cap.go). Every dial and transfer to a real network asks it first:
// a session's dial (shared/session/create.go), an API transfer and the assistant's
// transfer_call (shared/session/transfer.go); an assistant's transfer destinations are
// checked against the ranges refused always at publish (shared/assistant).
//
// A refusal is 403 destination_not_allowed, whose message names the number and the rule.
package destination

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/platform"
)

// Country is the ISO 3166-1 alpha-2 code of the country an E.164 number reaches (the
// longest prefix of the ITU-T E.164 table that matches, countries.go), and the country
// calling code that matched; ok is false for a number no country holds (a global
// service, a spare code) or that is not E.164.
func Country(number string) (iso, prefix string, ok bool) {
	if !platform.IsE164(number) {
		return "", "", false
	}
	digits := number[1:]
	for n := min(len(digits), 4); n > 0; n-- {
		if c, found := countryPrefixes[digits[:n]]; found {
			return c, digits[:n], true
		}
	}
	return "", "", false
}

// known are the ISO codes countries.go maps some prefix to.
var known = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range countryPrefixes {
		m[c] = true
	}
	return m
}()

// MaxCountries bounds a list of allowed countries.
const MaxCountries = 250

// ParseCountries checks a list of allowed destination countries (param names it in the
// error): ISO 3166-1 alpha-2 codes, each one a country the E.164 table knows, in any
// case; it returns them upper-cased, sorted and without repeats. An empty list allows no
// country.
func ParseCountries(param string, codes []string) ([]string, error) {
	if len(codes) > MaxCountries {
		return nil, apierr.Invalid(param, fmt.Sprintf("%s holds at most %d countries", param, MaxCountries))
	}
	out := make([]string, 0, len(codes))
	for i, c := range codes {
		up := strings.ToUpper(c)
		if len(up) != 2 || !known[up] {
			return nil, apierr.Invalid(fmt.Sprintf("%s[%d]", param, i), fmt.Sprintf(
				"%s[%d] must be the ISO 3166-1 alpha-2 code of a country with an E.164 country code (US, GB, DE, ...), not %q", param, i, c))
		}
		out = append(out, up)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Policy is where one line may call: the countries it may reach and where that list
// comes from, for the error.
type Policy struct {
	// Allowed are ISO codes; none allows no country.
	Allowed []string
	// Source names the rule that set Allowed, as an error message says it.
	Source string
}

// For is the policy of a line whose number is handle: its own list when it has one (not
// nil), else its account's, else the country of its own number; a line whose handle is
// no E.164 number (and whose line and account set no list) may call no country: there
// is no country to default to, so it fails closed.
func For(lineID, handle string, lineCountries, accountCountries []string) Policy {
	switch {
	case lineCountries != nil:
		return Policy{Allowed: lineCountries, Source: fmt.Sprintf("line %s's allowed_destination_countries", lineID)}
	case accountCountries != nil:
		return Policy{Allowed: accountCountries, Source: "the account's allowed destination countries (set by the operator)"}
	}
	if c, _, ok := Country(handle); ok {
		return Policy{Allowed: []string{c}, Source: fmt.Sprintf("line %s's own country, from its number (the default)", lineID)}
	}
	return Policy{Source: fmt.Sprintf("line %s has no E.164 number to take a default country from", lineID)}
}

// maxExtension is the longest all-digit user part of a SIP URI taken as a PBX extension
// (sip:1001@pbx.example.com); a longer one is a phone number in a form whose country
// cannot be told (national, or 00-prefixed), and is refused.
const maxExtension = 5

// Check refuses to a destination the policy does not allow, as 403
// destination_not_allowed on param naming the number and the rule: a premium-rate or
// shared-cost range (whatever the policy), a number no country holds, a country the
// policy does not list. to is an E.164 number or a SIP URI: a SIP URI whose user part
// is an E.164 number is checked as that number; one whose user is a name or a short
// extension addresses a SIP endpoint, not the telephone network, and passes; one whose
// user is a longer run of digits is refused (write the number in E.164).
func (p Policy) Check(param, to string) error {
	number, ok := phoneNumber(to)
	if !ok {
		return refused(param, fmt.Sprintf("%s addresses a phone number in a form whose country cannot be told: write it as an E.164 number (sip:+4420...@host)", to))
	}
	if number == "" {
		return nil
	}
	if err := always(param, to, number); err != nil {
		return err
	}
	c, prefix, _ := Country(number)
	if !slices.Contains(p.Allowed, c) {
		allowed := "no country"
		if len(p.Allowed) > 0 {
			allowed = strings.Join(p.Allowed, ", ")
		}
		return refused(param, fmt.Sprintf("%s is in %s (+%s), which is not an allowed destination country: %s allows %s",
			to, c, prefix, p.Source, allowed))
	}
	return nil
}

// Always refuses a destination whatever the policy: a premium-rate or shared-cost range,
// a number in a country code no country holds, a SIP URI user that is a long number
// not in E.164 form. An assistant's transfer destinations are checked with it at
// publish.
func Always(param, to string) error {
	number, ok := phoneNumber(to)
	if !ok {
		return refused(param, fmt.Sprintf("%s addresses a phone number in a form whose country cannot be told: write it as an E.164 number (sip:+4420...@host)", to))
	}
	return always(param, to, number)
}

// always is Always of to, whose number is number ("" for none).
func always(param, to, number string) error {
	if number == "" {
		return nil
	}
	if what := premium(number[1:]); what != "" {
		return refused(param, fmt.Sprintf("%s is in a premium-rate or shared-cost range (%s), refused whatever the destination policy", to, what))
	}
	if _, _, ok := Country(number); !ok {
		return refused(param, fmt.Sprintf("%s starts with no country code of the ITU-T E.164 list Bridgeline knows, so no destination policy can allow it", to))
	}
	return nil
}

// phoneNumber is the E.164 number a destination reaches: to itself, or a SIP URI's user
// part; "" for a SIP URI that addresses an endpoint by name or extension. ok is false
// for a SIP URI whose user is a number not in E.164 form.
func phoneNumber(to string) (number string, ok bool) {
	rest, sip := strings.CutPrefix(to, "sip:")
	if !sip {
		rest, sip = strings.CutPrefix(to, "sips:")
	}
	if !sip {
		return to, true
	}
	user, _, _ := strings.Cut(rest, "@")
	user, _, _ = strings.Cut(user, ";") // user parameters (;isub=, ;ext=)
	user = strings.NewReplacer("%2B", "+", "%2b", "+", "-", "", ".", "", "(", "", ")", "", " ", "").Replace(user)
	if strings.HasPrefix(user, "+") {
		return user, platform.IsE164(user)
	}
	if strings.Trim(user, "0123456789*#") != "" {
		return "", true // a name: sip:agent@pbx.example.com
	}
	return "", len(user) <= maxExtension
}

func refused(param, msg string) error {
	return apierr.Param(apierr.CodeDestinationNotAllowed, param, msg)
}
