package httpapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/bridgeline/bridgeline/shared/apierr"
)

// checkKeys rejects object keys that match no field of t exactly. encoding/json matches
// names case-insensitively, so without this `{"NAME": "x"}` would set `name`; a typo in
// case is as much a typo as any other.
func checkKeys(body []byte, t reflect.Type, prefix string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if inner, ok := nullableInner(t); ok {
		t = inner
	}
	if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct {
		// A list of objects (an assistant's tools): each item's keys, named tools[2].url.
		var items []json.RawMessage
		if err := json.Unmarshal(body, &items); err != nil {
			return nil // not a list here: the decoder reports the type error
		}
		base := strings.TrimSuffix(prefix, ".")
		for i, raw := range items {
			if err := checkKeys(raw, t.Elem(), fmt.Sprintf("%s[%d].", base, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil // not an object here: the decoder reports the type error
	}
	fields := jsonFields(t)
	for k, raw := range obj {
		ft, ok := fields[k]
		if !ok {
			return apierr.Param(apierr.CodeParameterUnknown, prefix+k, fmt.Sprintf("unknown parameter %q", prefix+k))
		}
		if err := checkKeys(raw, ft, prefix+k+"."); err != nil {
			return err
		}
	}
	return nil
}

// jsonFields maps each JSON name of a struct to its field type, with the fields of an
// embedded struct promoted as encoding/json promotes them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("json") == "" {
			for name, ft := range jsonFields(f.Type) {
				if _, ok := out[name]; !ok {
					out[name] = ft
				}
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// nullableInner returns T of a Nullable[T].
func nullableInner(t reflect.Type) (reflect.Type, bool) {
	if t.Kind() != reflect.Struct || !strings.HasPrefix(t.Name(), "Nullable[") {
		return nil, false
	}
	f, ok := t.FieldByName("Value")
	if !ok {
		return nil, false
	}
	return f.Type, true
}
