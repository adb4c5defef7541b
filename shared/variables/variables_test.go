package variables_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/variables"
)

func TestRender(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		values map[string]string
		want   string
	}{
		{"no placeholders", "Hello, how can I help?", nil, "Hello, how can I help?"},
		{"value", "Hello {{name}}, welcome.", map[string]string{"name": "Ada"}, "Hello Ada, welcome."},
		{"missing value renders empty", "Hello {{name}}, welcome.", nil, "Hello , welcome."},
		{"default", "Hello {{name|friend}}.", nil, "Hello friend."},
		{"value over default", "Hello {{name|friend}}.", map[string]string{"name": "Ada"}, "Hello Ada."},
		{"empty value over default", "Hello {{name|friend}}.", map[string]string{"name": ""}, "Hello ."},
		{"spaces around name and default", "Hi {{ name | dear friend }}!", nil, "Hi dear friend!"},
		{"default may hold a bar", "{{x|a|b}}", nil, "a|b"},
		{"repeated, each its own default", "{{n|A}} and {{n|B}}", nil, "A and B"},
		{"value not expanded again", "Say {{a}}", map[string]string{"a": "{{b}}", "b": "no"}, "Say {{b}}"},
		{"single braces and a lone closer are text", "{x} }} {", nil, "{x} }} {"},
		{"unicode around", "¡Hola {{name}}! ✓", map[string]string{"name": "Zoë"}, "¡Hola Zoë! ✓"},
		{"malformed is left as it is", "Hello {{name", map[string]string{"name": "Ada"}, "Hello {{name"},
		{"adjacent", "{{a}}{{b}}", map[string]string{"a": "1", "b": "2"}, "12"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := variables.Render(tc.text, tc.values); got != tc.want {
				t.Errorf("Render(%q, %v) = %q, want %q", tc.text, tc.values, got, tc.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		wantNames []string
		wantErr   string // a part of the message; "" for no error
	}{
		{"plain", "Hello there", []string{}, ""},
		{"names in order", "{{b}} {{a|x}} {{b}}", []string{"b", "a", "b"}, ""},
		{"camel case and underscore", "{{customerName}} {{_x9}}", []string{"customerName", "_x9"}, ""},
		{"unclosed", "Hello {{name", nil, "character 6 has no closing }}"},
		{"opened twice", "{{a {{b}}", nil, "character 0 has no closing }} before the next {{"},
		{"empty name", "Hi {{}}", nil, `character 3 has the name ""`},
		{"name with a space", "{{first name}}", nil, `the name "first name"`},
		{"name with a dash", "{{first-name}}", nil, `the name "first-name"`},
		{"name starting with a digit", "{{1st}}", nil, `the name "1st"`},
		{"name too long", "{{" + strings.Repeat("a", 41) + "}}", nil, "at most 40 characters"},
		{"name at the limit", "{{" + strings.Repeat("a", 40) + "}}", []string{strings.Repeat("a", 40)}, ""},
		{"default too long", "{{a|" + strings.Repeat("x", 501) + "}}", nil, "default longer than 500"},
		{"offset in characters", "ééé {{", nil, "character 4 has"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			names, err := variables.Check("greeting", tc.text)
			if tc.wantErr == "" {
				if err != nil || !slices.Equal(names, tc.wantNames) {
					t.Errorf("Check(%q) = %q, %v, want %q", tc.text, names, err, tc.wantNames)
				}
				return
			}
			e, ok := apierr.As(err)
			if !ok || e.Code != apierr.CodeParameterInvalid || e.Param != "greeting" || !strings.Contains(e.Message, tc.wantErr) {
				t.Errorf("Check(%q) err = %v, want parameter_invalid on greeting saying %q", tc.text, err, tc.wantErr)
			}
		})
	}
}

func TestCheckFieldsCountsDistinctNames(t *testing.T) {
	var greeting, prompt strings.Builder
	for i := range 30 {
		greeting.WriteString("{{g" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + "}}")
		prompt.WriteString("{{p" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + "}}")
	}
	names, err := variables.CheckFields("greeting", greeting.String(), "system_prompt", greeting.String())
	if err != nil || len(names) != 30 || !slices.IsSorted(names) {
		t.Errorf("CheckFields(30 names twice) = %d names (sorted %v), %v; want 30 sorted", len(names), slices.IsSorted(names), err)
	}
	_, err = variables.CheckFields("greeting", greeting.String(), "system_prompt", prompt.String())
	if e, ok := apierr.As(err); !ok || e.Param != "system_prompt" {
		t.Errorf("CheckFields(60 names) err = %v, want parameter_invalid on system_prompt", err)
	}
}

func TestCheckValues(t *testing.T) {
	many := map[string]string{}
	for i := range 51 {
		many["v"+strings.Repeat("x", i)] = "1"
	}
	tests := []struct {
		name      string
		values    map[string]string
		wantParam string // "" for valid
	}{
		{"none", nil, ""},
		{"ok", map[string]string{"name": "Ada", "note": "line one\nline two\t"}, ""},
		{"value at the limit", map[string]string{"a": strings.Repeat("é", 500)}, ""},
		{"value too long", map[string]string{"a": strings.Repeat("é", 501)}, "variables[a]"},
		{"bad name", map[string]string{"first name": "Ada"}, "variables"},
		{"control character", map[string]string{"a": "x\x00y"}, "variables[a]"},
		{"carriage return", map[string]string{"a": "x\ry"}, "variables[a]"},
		{"invalid utf-8", map[string]string{"a": "\xff"}, "variables[a]"},
		{"too many", many, "variables"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := variables.CheckValues("variables", tc.values)
			if tc.wantParam == "" {
				if err != nil {
					t.Errorf("CheckValues = %v, want nil", err)
				}
				return
			}
			if e, ok := apierr.As(err); !ok || e.Code != apierr.CodeParameterInvalid || e.Param != tc.wantParam {
				t.Errorf("CheckValues err = %v, want parameter_invalid on %s", err, tc.wantParam)
			}
		})
	}
}

func TestResolvePrecedence(t *testing.T) {
	request := map[string]string{"name": "Ada", "unused": "x"}
	line := map[string]string{"name": "caller", "company": "Acme"}
	got := variables.Resolve([]string{"company", "name", "topic"}, request, line)
	want := map[string]string{"name": "Ada", "company": "Acme"}
	if !maps.Equal(got, want) {
		t.Errorf("Resolve = %v, want %v (request over line, unused dropped, missing left to the default)", got, want)
	}
	if got := variables.Resolve(nil); got == nil {
		t.Error("Resolve(nil) = nil, want an empty map")
	}
	text := "{{name}} of {{company}} about {{topic|your call}}"
	if r := variables.Render(text, got); r != "Ada of Acme about your call" {
		t.Errorf("Render(resolved) = %q", r)
	}
}

func TestNames(t *testing.T) {
	got := variables.Names("Hi {{name}} {{b}}", "You help {{name|x}} with {{a}}.", "broken {{c")
	if want := []string{"a", "b", "name"}; !slices.Equal(got, want) {
		t.Errorf("Names = %q, want %q", got, want)
	}
	if got := variables.Names("none"); got != nil {
		t.Errorf("Names(no placeholders) = %q, want nil", got)
	}
}
