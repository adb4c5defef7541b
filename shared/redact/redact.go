// Package redact masks phone numbers: in log lines (the docs promise logs carry ids, not
// numbers) and in what a call record keeps after its data was deleted. One rule, one
// owner: a number shows its last four digits and nothing else.
package redact

import (
	"regexp"
	"strings"
)

// Number masks one phone number or platform handle for a log: "+15550100003" becomes
// "***0003", "sip:+15550100003@example.com" "sip:***0003@example.com". A value with fewer
// than five digits (a sim handle such as "sim:sales", an extension) is not a number
// anyone can dial and is returned as it is. Every digit but the last four goes, so a
// national number, a SIP URI's user part and an E.164 number alike keep no more.
func Number(s string) string {
	if s == "" {
		return s
	}
	if masked := Numbers(s); masked != s {
		return masked
	}
	digits := 0
	for _, r := range s {
		if r >= '0' && r <= '9' {
			digits++
		}
	}
	if digits < 5 {
		return s
	}
	// A short number (5-6 digits) Numbers leaves, or one written with separators.
	return "***" + lastDigits(s, 4)
}

// numberRun is a run of 7 to 15 digits (E.164's longest), with an optional "+" before
// it, that is not part of a longer word: an id such as call_01jd3f4g5h... has no run of
// seven digits between letters, a phone number in a SIP URI, a JSON field, an
// identifier made from it or a log line's text does.
// Separators inside a number ("+1 555-010-0003") are not joined: each part is shorter
// than seven digits, and a date or a time would match them too.
var numberRun = regexp.MustCompile(`\+?[0-9]{7,15}`)

// Numbers masks every phone number in text (a log line another program wrote, a
// metadata value): each run of 7-15 digits, with its "+", becomes "***" and its last
// four digits. Runs inside a longer alphanumeric word, or longer than 15 digits, are
// left alone. Long counts (a byte size, a millisecond timestamp) are masked too: the
// rule errs on the side of the caller's privacy.
func Numbers(text string) string {
	locs := numberRun.FindAllStringIndex(text, -1)
	if locs == nil {
		return text
	}
	var b strings.Builder
	last := 0
	for _, l := range locs {
		start, end := l[0], l[1]
		if start > 0 && isWordByte(text[start-1]) || end < len(text) && isWordByte(text[end]) {
			continue
		}
		b.WriteString(text[last:start])
		b.WriteString("***")
		b.WriteString(text[end-4 : end])
		last = end
	}
	b.WriteString(text[last:])
	return b.String()
}

// HasNumber reports whether text holds a phone number as Numbers sees one.
func HasNumber(text string) bool { return Numbers(text) != text }

// isWordByte: a letter or digit next to a run makes it part of a longer word (an id, a
// hash). An underscore does not: identifiers built from a number ("sip_+15550100003",
// livekit-sip's room and participant names) hold it whole.
func isWordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func lastDigits(s string, n int) string {
	var d []byte
	for i := len(s) - 1; i >= 0 && len(d) < n; i-- {
		if c := s[i]; c >= '0' && c <= '9' {
			d = append([]byte{c}, d...)
		}
	}
	return string(d)
}
