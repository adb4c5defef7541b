package persona

import (
	"fmt"
	"regexp"
	"strings"
)

// DefaultLanguage is a version's language when it names none, and the one language an
// offline deployment hears (pocketsphinx's model is English).
const DefaultLanguage = "en"

// languageTag is the part of BCP-47 a version's language may use: a primary language of
// 2-3 letters, an optional script (4 letters) and an optional region (2 letters or 3
// digits): "es", "es-MX", "es-419", "zh-Hant-TW". Part of the contract in openapi.yaml.
var languageTag = regexp.MustCompile(`^[A-Za-z]{2,3}(-[A-Za-z]{4})?(-([A-Za-z]{2}|[0-9]{3}))?$`)

// CanonicalLanguage checks tag and returns it in BCP-47's canonical case ("ES-mx" is
// "es-MX", "zh-hant-tw" is "zh-Hant-TW"), or an error saying what a tag looks like.
func CanonicalLanguage(tag string) (string, error) {
	if !languageTag.MatchString(tag) {
		return "", fmt.Errorf("%q is not a BCP-47 language tag such as en, es or es-MX", tag)
	}
	parts := strings.Split(tag, "-")
	parts[0] = strings.ToLower(parts[0])
	for i := 1; i < len(parts); i++ {
		if len(parts[i]) == 4 {
			parts[i] = strings.ToUpper(parts[i][:1]) + strings.ToLower(parts[i][1:])
		} else {
			parts[i] = strings.ToUpper(parts[i])
		}
	}
	return strings.Join(parts, "-"), nil
}

// PrimaryLanguage is tag's primary language subtag, lower case ("es" of "es-MX"); ""
// is DefaultLanguage.
func PrimaryLanguage(tag string) string {
	if tag == "" {
		return DefaultLanguage
	}
	p, _, _ := strings.Cut(tag, "-")
	return strings.ToLower(p)
}

// SameLanguage says whether two tags name the same language, whatever their regions
// ("es" and "es-MX" do; "en" and "es" do not).
func SameLanguage(a, b string) bool { return PrimaryLanguage(a) == PrimaryLanguage(b) }

// Speaks says whether the voice speaks language: a local voice speaks its own language
// in any region; a hosted voice (no Language) speaks what it is given.
func (v Voice) Speaks(language string) bool {
	return v.Language == "" || SameLanguage(v.Language, language)
}

// ParseLanguages reads STT_LANGUAGES: the comma-separated languages the deployment's
// recogniser hears (BCP-47 tags). The control plane cannot ask the fleet's recogniser
// (Lambdas never reach the media fleet's providers), so the operator lists them beside
// STT_PROVIDER: pocketsphinx hears English only; Deepgram hears what its model has.
// Blank entries and repeats are skipped; an empty list is DefaultLanguage.
func ParseLanguages(list string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		tag, err := CanonicalLanguage(n)
		if err != nil {
			return nil, fmt.Errorf("STT_LANGUAGES: %w", err)
		}
		if !seen[tag] {
			seen[tag] = true
			out = append(out, tag)
		}
	}
	if len(out) == 0 {
		out = []string{DefaultLanguage}
	}
	return out, nil
}

// Hears says whether a recogniser that hears the languages heard (ParseLanguages)
// hears language: heard lists it, or lists its primary language alone ("es" hears
// "es-MX"; "es-MX" does not hear "es-ES").
func Hears(heard []string, language string) bool {
	for _, h := range heard {
		if strings.EqualFold(h, language) || (!strings.Contains(h, "-") && SameLanguage(h, language)) {
			return true
		}
	}
	return false
}
