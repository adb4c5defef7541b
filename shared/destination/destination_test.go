package destination

import (
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/shared/apierr"
)

func TestCountryLongestPrefix(t *testing.T) {
	for number, want := range map[string]string{
		"+14155550100":   "US", // +1, no other country's area code
		"+14165550100":   "CA", // Toronto
		"+18765550100":   "JM", // Jamaica shares +1: the longest prefix wins
		"+18095550100":   "DO",
		"+442079460000":  "GB",
		"+4930901820":    "DE",
		"+33142685300":   "FR",
		"+74951234567":   "RU",
		"+77012345678":   "KZ",
		"+35312345678":   "IE",
		"+8613800138000": "CN",
		"+919876543210":  "IN",
	} {
		if got, _, ok := Country(number); !ok || got != want {
			t.Errorf("Country(%s) = %q, %v; want %s", number, got, ok, want)
		}
	}
	for _, number := range []string{"+88299123456", "+80012345678", "+2801234567", "15550100", "+0441234567"} {
		if c, _, ok := Country(number); ok {
			t.Errorf("Country(%s) = %s, want no country", number, c)
		}
	}
}

func TestPremiumRangesRefusedWhateverThePolicy(t *testing.T) {
	all := Policy{Allowed: []string{"US", "GB", "DE", "FR", "ES", "IT", "NL", "AU"}, Source: "test"}
	for _, to := range []string{
		"+88299123456", "+881612345678", "+8831234567890", "+979123456789", "+80812345678", "+870772123456",
		"+19005550100", "+12129765555", "+19765550100",
		"+449012345678", "+448712345678", "+447012345678", "+448445678901",
		"+499001234567", "+4913712345", "+4918012345678", "+33899123456", "+34806123456", "+39899123456",
		"+31900123456", "+61190012345", "sip:+88299123456@sip.example.com",
	} {
		err := all.Check("to", to)
		if !apierr.Is(err, apierr.CodeDestinationNotAllowed) || !strings.Contains(err.Error(), to) {
			t.Errorf("Check(%s) = %v, want destination_not_allowed naming it", to, err)
			continue
		}
		if !strings.Contains(err.Error(), "premium-rate or shared-cost") {
			t.Errorf("Check(%s) = %v, want the premium rule named", to, err)
		}
		if Always("to", to) == nil {
			t.Errorf("Always(%s) = nil, want refused", to)
		}
	}
	// Salerno keeps its 0 (+39 089): a geographic number, not the premium 89x.
	if err := all.Check("to", "+39089123456"); err != nil {
		t.Errorf("Check(Salerno) = %v, want allowed", err)
	}
	if err := all.Check("to", "+12125550100"); err != nil {
		t.Errorf("Check(+1 212 555) = %v, want allowed", err)
	}
}

func TestPolicyDefaultsToTheLinesCountry(t *testing.T) {
	p := For("line_1", "+15550100001", nil, nil)
	if err := p.Check("platform_handle", "+14155550100"); err != nil {
		t.Fatalf("a US line dialling the US: %v", err)
	}
	err := p.Check("platform_handle", "+442079460000")
	if !apierr.Is(err, apierr.CodeDestinationNotAllowed) || !strings.Contains(err.Error(), "+442079460000 is in GB") ||
		!strings.Contains(err.Error(), "own country") {
		t.Fatalf("a US line dialling GB = %v, want refused naming GB and the default rule", err)
	}
	// The Caribbean's +1 numbers are other countries: not the US line's default.
	if err := p.Check("platform_handle", "+18765550100"); !apierr.Is(err, apierr.CodeDestinationNotAllowed) {
		t.Fatalf("a US line dialling Jamaica = %v, want refused", err)
	}
	// The account's list applies to a line without its own; the line's wins over it.
	if err := For("line_1", "+15550100001", nil, []string{"GB"}).Check("to", "+442079460000"); err != nil {
		t.Fatalf("account allows GB: %v", err)
	}
	if err := For("line_1", "+15550100001", []string{"US"}, []string{"GB"}).Check("to", "+442079460000"); err == nil {
		t.Fatal("the line's own list (US) must win over the account's (GB)")
	}
	// An empty list allows no country; a line without an E.164 number has no default.
	if err := For("line_1", "+15550100001", []string{}, nil).Check("to", "+14155550100"); err == nil {
		t.Fatal("an empty list must allow nothing")
	}
	if err := For("line_1", "sim:sales", nil, nil).Check("to", "+14155550100"); err == nil ||
		!strings.Contains(err.Error(), "no E.164 number") {
		t.Fatalf("a line without a number = %v, want refused saying why", err)
	}
}

func TestSIPURIDestinations(t *testing.T) {
	p := For("line_1", "+15550100001", nil, nil)
	for to, ok := range map[string]bool{
		"sip:agent@pbx.example.com":            true,  // a named endpoint
		"sip:1001@pbx.example.com":             true,  // an extension
		"sip:+14155550100@sip.example.com":     true,  // an E.164 number in the user part: the US
		"sip:+442079460000@sip.example.com":    false, // GB, not allowed
		"sips:%2B442079460000@sip.example.com": false,
		"sip:00442079460000@sip.example.com":   false, // a number whose country cannot be told
		"sip:118118@sip.example.com":           false,
	} {
		if err := p.Check("to", to); (err == nil) != ok {
			t.Errorf("Check(%s) = %v, want allowed %v", to, err, ok)
		}
	}
}

func TestParseCountries(t *testing.T) {
	got, err := ParseCountries("c", []string{"gb", "US", "GB"})
	if err != nil || strings.Join(got, ",") != "GB,US" {
		t.Fatalf("ParseCountries = %v, %v; want GB,US", got, err)
	}
	for _, bad := range []string{"UK", "USA", "", "ZZ"} {
		if _, err := ParseCountries("c", []string{bad}); !apierr.Is(err, apierr.CodeParameterInvalid) {
			t.Errorf("ParseCountries(%q) = %v, want parameter_invalid", bad, err)
		}
	}
	if got, err := ParseCountries("c", []string{}); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("ParseCountries([]) = %#v, %v; want an empty list (allows none), not nil", got, err)
	}
}
