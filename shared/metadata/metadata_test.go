package metadata

import (
	"maps"
	"strconv"
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/shared/apierr"
)

func many(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m["k"+strconv.Itoa(i)] = "v"
	}
	return m
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        map[string]string
		wantParam string // "" for valid
	}{
		{"none", nil, ""},
		{"one pair", map[string]string{"order_id": "6735"}, ""},
		{"key at the limit", map[string]string{strings.Repeat("k", MaxKeyLen): "v"}, ""},
		{"key in characters, not bytes", map[string]string{strings.Repeat("é", MaxKeyLen): "v"}, ""},
		{"key too long", map[string]string{strings.Repeat("k", MaxKeyLen+1): "v"}, "metadata[" + strings.Repeat("k", MaxKeyLen+1) + "]"},
		{"value at the limit", map[string]string{"k": strings.Repeat("é", MaxValueLen)}, ""},
		{"value too long", map[string]string{"k": strings.Repeat("v", MaxValueLen+1)}, "metadata[k]"},
		{"empty key", map[string]string{"": "v"}, "metadata"},
		{"blank key", map[string]string{"  ": "v"}, "metadata"},
		{"bracket in key", map[string]string{"a[b]": "v"}, "metadata[a[b]]"},
		{"control character in key", map[string]string{"a\nb": "v"}, "metadata[a\nb]"},
		{"invalid UTF-8 value", map[string]string{"k": "\xff"}, "metadata[k]"},
		{"50 keys", many(MaxKeys), ""},
		{"51 keys", many(MaxKeys + 1), "metadata"},
		{"51 keys, one empty (not given)", func() map[string]string { m := many(MaxKeys + 1); m["k0"] = ""; return m }(), ""},
		{"first bad key in order is named", map[string]string{"b": strings.Repeat("v", 501), "a": strings.Repeat("v", 501)}, "metadata[a]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.in)
			checkParam(t, err, tc.wantParam)
		})
	}
}

func checkParam(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("error = %v, want none", err)
		}
		return
	}
	e, ok := apierr.As(err)
	if !ok {
		t.Fatalf("error = %v, want a parameter error on %q", err, want)
	}
	if e.Code != apierr.CodeParameterInvalid || e.Param != want {
		t.Errorf("error = %s on %q (%s), want parameter_invalid on %q", e.Code, e.Param, e.Message, want)
	}
}

func TestNewDropsEmptyValues(t *testing.T) {
	got := New(map[string]string{"a": "1", "b": ""})
	if want := (Metadata{"a": "1"}); !maps.Equal(got, want) {
		t.Errorf("New = %v, want %v", got, want)
	}
	if got := New(map[string]string{"b": ""}); got != nil {
		t.Errorf("New(only empty) = %v, want nil", got)
	}
}

func TestPatchApply(t *testing.T) {
	base := Metadata{"a": "1", "b": "2"}
	for _, tc := range []struct {
		name      string
		patch     Patch
		want      Metadata
		wantParam string
	}{
		{"nothing", Patch{}, base, ""},
		{"empty object changes nothing", Patch{Set: map[string]string{}}, base, ""},
		{"sets and keeps the others", Patch{Set: map[string]string{"b": "two", "c": "3"}}, Metadata{"a": "1", "b": "two", "c": "3"}, ""},
		{"empty value removes", Patch{Set: map[string]string{"a": ""}}, Metadata{"b": "2"}, ""},
		{"removing an absent key is fine", Patch{Set: map[string]string{"zz": ""}}, base, ""},
		{"removing all leaves none", Patch{Set: map[string]string{"a": "", "b": ""}}, nil, ""},
		{"clear", Patch{Clear: true}, nil, ""},
		{"clear then set", Patch{Clear: true, Set: map[string]string{"c": "3"}}, Metadata{"c": "3"}, ""},
		{"over the count", Patch{Set: many(MaxKeys - 1)}, nil, "metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := maps.Clone(base)
			got, err := tc.patch.Apply(base)
			checkParam(t, err, tc.wantParam)
			if !maps.Equal(base, orig) {
				t.Errorf("Apply modified its input: %v, want %v", base, orig)
			}
			if tc.wantParam != "" {
				return
			}
			if !maps.Equal(got, tc.want) || (tc.want == nil) != (got == nil) {
				t.Errorf("Apply = %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestPatchApplyAtTheCount(t *testing.T) {
	set := many(MaxKeys - 1) // beside "a" and "b": one too many, unless one goes
	set["a"] = ""
	got, err := Patch{Set: set}.Apply(Metadata{"a": "1", "b": "2"})
	if err != nil || len(got) != MaxKeys {
		t.Errorf("Apply = %d keys, %v; want %d keys", len(got), err, MaxKeys)
	}
}

func TestPatchValidate(t *testing.T) {
	checkParam(t, Patch{Set: map[string]string{"k": strings.Repeat("v", MaxValueLen+1)}}.Validate(), "metadata[k]")
	checkParam(t, Patch{Set: map[string]string{"": ""}}.Validate(), "metadata")
	checkParam(t, Patch{Set: map[string]string{"k": ""}}.Validate(), "")
}
