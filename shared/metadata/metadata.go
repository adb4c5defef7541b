// Package metadata holds a customer's own key-value pairs on Bridgeline objects
// (sessions, calls, assistants, lines): the rules they follow, Stripe's, so that a
// customer who knows Stripe's metadata knows these, and how an update changes them.
//
// Bridgeline stores metadata and gives it back (in the objects and in the call events);
// it never reads it. The limits keep an object, and an event that echoes the metadata of
// two objects, small.
package metadata

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bridgeline/bridgeline/shared/apierr"
)

// Limits, in characters (Unicode code points). They are part of the contract in
// openapi.yaml (the Metadata schema).
const (
	MaxKeys     = 50
	MaxKeyLen   = 40
	MaxValueLen = 500
)

// Param is the name errors give the metadata parameter.
const Param = "metadata"

// Metadata is an object's key-value pairs. nil and empty are the same: no pairs.
type Metadata map[string]string

// Clone returns a copy that shares nothing with m; nil for no pairs.
func (m Metadata) Clone() Metadata {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

// OrEmpty is m, or an empty map for none, for answers that show `{}` rather than null.
func (m Metadata) OrEmpty() Metadata {
	if m == nil {
		return Metadata{}
	}
	return m
}

// KeyParam is the parameter an error about one key names: metadata[key].
func KeyParam(key string) string { return Param + "[" + key + "]" }

// Validate checks metadata given whole, on create: every key and value within the
// limits and at most MaxKeys pairs. A key whose value is "" is a pair not given (New
// drops it), as on update, where "" removes a key.
func Validate(m map[string]string) error {
	if err := validatePairs(m); err != nil {
		return err
	}
	n := 0
	for _, v := range m {
		if v != "" {
			n++
		}
	}
	return checkCount(n)
}

// New is the metadata a create stores from validated input: its pairs without the empty
// values; nil for none.
func New(m map[string]string) Metadata {
	var out Metadata
	for k, v := range m {
		if v == "" {
			continue
		}
		if out == nil {
			out = Metadata{}
		}
		out[k] = v
	}
	return out
}

// Patch is an update of metadata, as Stripe's: the keys given are set, a key given ""
// is removed, keys not given are kept; Clear (`"metadata": null`) removes every key
// first.
type Patch struct {
	Clear bool
	Set   map[string]string
}

// IsZero reports whether the patch changes nothing whatever the metadata it is applied to.
func (p Patch) IsZero() bool { return !p.Clear && len(p.Set) == 0 }

// Validate checks the keys and values of the patch; the count is checked by Apply,
// against the metadata it is applied to.
func (p Patch) Validate() error { return validatePairs(p.Set) }

// Apply returns m changed by the patch (m itself is not modified), or an error when the
// result would hold more than MaxKeys pairs. A validated patch fails no other way.
func (p Patch) Apply(m Metadata) (Metadata, error) {
	var out Metadata
	if !p.Clear {
		out = maps.Clone(m)
	}
	for k, v := range p.Set {
		if v == "" {
			delete(out, k)
			continue
		}
		if out == nil {
			out = Metadata{}
		}
		out[k] = v
	}
	if err := checkCount(len(out)); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// validatePairs checks keys and values in sorted key order, so that of several bad keys
// the same one is named every time.
func validatePairs(m map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := validKey(k); err != nil {
			return err
		}
		v := m[k]
		if !utf8.ValidString(v) {
			return apierr.Invalid(KeyParam(k), KeyParam(k)+" must be valid UTF-8")
		}
		if n := utf8.RuneCountInString(v); n > MaxValueLen {
			return apierr.Invalid(KeyParam(k), fmt.Sprintf("%s must be at most %d characters, not %d", KeyParam(k), MaxValueLen, n))
		}
	}
	return nil
}

func validKey(k string) error {
	switch {
	case k == "" || strings.TrimSpace(k) == "":
		return apierr.Invalid(Param, "metadata keys must not be empty or blank")
	case !utf8.ValidString(k):
		return apierr.Invalid(Param, "metadata keys must be valid UTF-8")
	case strings.ContainsAny(k, "[]"):
		// The key is named in errors as metadata[key]; a bracket would make that ambiguous
		// (Stripe refuses them for the same reason).
		return apierr.Invalid(KeyParam(k), fmt.Sprintf("metadata key %q must not contain square brackets", k))
	case utf8.RuneCountInString(k) > MaxKeyLen:
		return apierr.Invalid(KeyParam(k), fmt.Sprintf("metadata key %q is longer than %d characters", k, MaxKeyLen))
	}
	for _, r := range k {
		if r < 0x20 || r == 0x7f {
			return apierr.Invalid(KeyParam(k), fmt.Sprintf("metadata key %q must not contain control characters", k))
		}
	}
	return nil
}

func checkCount(n int) error {
	if n > MaxKeys {
		return apierr.Invalid(Param, fmt.Sprintf("metadata may hold at most %d keys, not %d", MaxKeys, n))
	}
	return nil
}
