package httpapi

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	"github.com/bridgeline/bridgeline/shared/metadata"
)

// metadataParam is the `metadata` request parameter: an object whose values are strings.
// It decodes itself so that a value of another type is named as Stripe names it,
// `metadata[key]`, rather than as encoding/json would (`metadata.key`), and so that a
// null value gets a message saying how a key is removed. Request bodies hold it as
// Nullable[metadataParam]: null means something on update only (every key removed).
type metadataParam map[string]string

// UnmarshalJSON accepts an object of strings and nothing else.
func (m *metadataParam) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' || json.Unmarshal(b, &raw) != nil {
		return &fieldError{metadata.Param, "metadata must be an object whose values are strings"}
	}
	out := make(metadataParam, len(raw))
	// Sorted, so that of several bad values the same one is named every time.
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		v := bytes.TrimSpace(raw[k])
		var s string
		if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
			p := metadata.KeyParam(k)
			msg := p + " must be a string, not " + jsonValueKind(v)
			if string(v) == "null" {
				msg = p + ` must be a string; to remove the key, set it to ""`
			}
			return &fieldError{p, msg}
		}
		out[k] = s
	}
	*m = out
	return nil
}

// jsonValueKind names a JSON value's type as error messages do.
func jsonValueKind(v []byte) string {
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// metadataOnCreate is the metadata a create stores: none when absent; null is refused.
func metadataOnCreate(p Nullable[metadataParam]) (*metadata.Patch, error) {
	if err := p.NotNull(metadata.Param); err != nil {
		return nil, err
	}
	if !p.Set {
		return nil, nil
	}
	return &metadata.Patch{Set: p.Value}, nil
}

// metadataOnUpdate is the change an update makes: nil when absent, every key removed for
// null, else the keys given set ("" removing one).
func metadataOnUpdate(p Nullable[metadataParam]) *metadata.Patch {
	switch {
	case !p.Set:
		return nil
	case p.Null:
		return &metadata.Patch{Clear: true}
	}
	return &metadata.Patch{Set: p.Value}
}
