// Package variables holds per-call variables: the `{{name}}` and `{{name|default}}`
// placeholders an assistant's greeting and system prompt may contain, the checks on them
// and on the values a call is given, and the rendering the control plane does before a
// persona job is dispatched, so the worker only ever sees finished text.
//
// Syntax: `{{` opens a placeholder and the next `}}` closes it. Inside is a name
// (NamePattern), optionally followed by `|` and a default; spaces around the name and the
// default are ignored. `{{` always opens a placeholder, so a text cannot say `{{`
// literally; a lone `}}` or single braces are ordinary text. A placeholder renders as the
// call's value for its name, else its default, else nothing: never as braces. Values are
// inserted as they are and never expanded again.
package variables

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bridgeline/bridgeline/shared/apierr"
)

// Bounds, part of the contract in openapi.yaml.
const (
	// MaxCount bounds the values a request or a line carries, and the distinct names one
	// version may use.
	MaxCount = 50
	// MaxNameLen bounds a name, in characters.
	MaxNameLen = 40
	// MaxValueLen bounds a value, and a placeholder's default, in characters.
	MaxValueLen = 500
)

// NamePattern is what a variable's name must match: a letter or underscore, then
// letters, digits or underscores, at most MaxNameLen in all. Names are case-sensitive.
const NamePattern = `^[A-Za-z_][A-Za-z0-9_]{0,39}$`

var nameRE = regexp.MustCompile(NamePattern)

// ValidName reports whether name is a variable name.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// Placeholder is one `{{...}}` of a text.
type Placeholder struct {
	Name    string
	Default string
	// Start and End are the byte offsets of `{{` and just past `}}`.
	Start, End int
}

// SyntaxError says where and why a text's placeholders are malformed.
type SyntaxError struct {
	// Offset is the character (not byte) offset of the `{{` at fault, from 0.
	Offset int
	Reason string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("the placeholder at character %d %s", e.Offset, e.Reason)
}

// Parse returns text's placeholders in order, or a *SyntaxError for the first malformed
// one.
func Parse(text string) ([]Placeholder, error) {
	var out []Placeholder
	for i := 0; ; {
		open := strings.Index(text[i:], "{{")
		if open < 0 {
			return out, nil
		}
		start := i + open
		fail := func(reason string) error {
			return &SyntaxError{Offset: utf8.RuneCountInString(text[:start]), Reason: reason}
		}
		rest := text[start+2:]
		closing := strings.Index(rest, "}}")
		if closing < 0 {
			return nil, fail("has no closing }}")
		}
		inner := rest[:closing]
		if strings.Contains(inner, "{{") {
			return nil, fail("has no closing }} before the next {{")
		}
		name, def, hasDefault := strings.Cut(inner, "|")
		name = strings.TrimSpace(name)
		if !ValidName(name) {
			return nil, fail(fmt.Sprintf("has the name %q: a name is a letter or _ then letters, digits or _, at most %d characters",
				name, MaxNameLen))
		}
		if hasDefault {
			def = strings.TrimSpace(def)
			if utf8.RuneCountInString(def) > MaxValueLen {
				return nil, fail(fmt.Sprintf("has a default longer than %d characters", MaxValueLen))
			}
		}
		end := start + 2 + closing + 2
		out = append(out, Placeholder{Name: name, Default: def, Start: start, End: end})
		i = end
	}
}

// Check validates the placeholders of a text field (param names it in the error) and
// returns the names it uses.
func Check(param, text string) ([]string, error) {
	ps, err := Parse(text)
	if err != nil {
		return nil, apierr.Invalid(param, fmt.Sprintf("%s: %v; write {{name}} or {{name|default}}", param, err))
	}
	names := make([]string, 0, len(ps))
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return names, nil
}

// CheckFields validates the placeholders of several text fields together: each field's
// syntax, and at most MaxCount distinct names over all of them (the error names the field
// where the names ran over). fields alternate param and text. It returns the distinct
// names, sorted.
func CheckFields(fields ...string) ([]string, error) {
	seen := map[string]bool{}
	for i := 0; i+1 < len(fields); i += 2 {
		names, err := Check(fields[i], fields[i+1])
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			seen[n] = true
		}
		if len(seen) > MaxCount {
			return nil, apierr.Invalid(fields[i], fmt.Sprintf("the greeting and system prompt use more than %d distinct variables", MaxCount))
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// Names returns the distinct names the texts use, sorted; a malformed text adds none
// (texts are checked before they are published).
func Names(texts ...string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range texts {
		ps, _ := Parse(t)
		for _, p := range ps {
			if !seen[p.Name] {
				seen[p.Name] = true
				out = append(out, p.Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Render replaces each placeholder of text with values[name], else its default, else
// nothing. Values are inserted as they are (a value holding braces is not expanded). A
// text whose placeholders are malformed (never a published one) is returned unchanged.
func Render(text string, values map[string]string) string {
	ps, err := Parse(text)
	if err != nil || len(ps) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for _, p := range ps {
		b.WriteString(text[last:p.Start])
		if v, ok := values[p.Name]; ok {
			b.WriteString(v)
		} else {
			b.WriteString(p.Default)
		}
		last = p.End
	}
	b.WriteString(text[last:])
	return b.String()
}

// CheckValues validates values given to a call or a line: at most MaxCount, each name a
// valid name, each value valid UTF-8 of at most MaxValueLen characters without control
// characters other than tab and newline. param names the field ("variables"); a value's
// error names it as "variables[<name>]", as metadata errors name keys.
func CheckValues(param string, values map[string]string) error {
	if len(values) > MaxCount {
		return apierr.Invalid(param, fmt.Sprintf("%s may hold at most %d variables", param, MaxCount))
	}
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	slices.Sort(names) // the first bad one, the same on every try
	for _, n := range names {
		if !ValidName(n) {
			return apierr.Invalid(param, fmt.Sprintf("%s: %q is not a variable name (a letter or _ then letters, digits or _, at most %d characters)",
				param, n, MaxNameLen))
		}
		v, field := values[n], param+"["+n+"]"
		if !utf8.ValidString(v) {
			return apierr.Invalid(field, field+" must be valid UTF-8")
		}
		if utf8.RuneCountInString(v) > MaxValueLen {
			return apierr.Invalid(field, fmt.Sprintf("%s must be at most %d characters", field, MaxValueLen))
		}
		if strings.IndexFunc(v, func(r rune) bool { return r < 0x20 && r != '\t' && r != '\n' || r == 0x7f }) >= 0 {
			return apierr.Invalid(field, field+" must not hold control characters other than tab and newline")
		}
	}
	return nil
}

// Resolve picks the value of each name from the first of layers that has it (a request's
// or an answer's values first, then the line's defaults). Names no layer has are left
// out: their placeholders render their defaults. The result holds only names, so values
// given for names the version does not use are dropped; it is never nil.
func Resolve(names []string, layers ...map[string]string) map[string]string {
	out := make(map[string]string, len(names))
	for _, n := range names {
		for _, l := range layers {
			if v, ok := l[n]; ok {
				out[n] = v
				break
			}
		}
	}
	return out
}
