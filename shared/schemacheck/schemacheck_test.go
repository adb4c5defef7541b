package schemacheck_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/shared/schemacheck"
)

func TestObject(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		wantErr string // "" for valid
	}{
		{"empty object schema", `{"type":"object"}`, ""},
		{"typical tool", `{"type":"object","properties":{"order_id":{"type":"string","description":"the order"}},"required":["order_id"]}`, ""},
		{"internal ref", `{"type":"object","$defs":{"id":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/id"}}}`, ""},
		{"older draft named", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`, ""},
		{"not JSON", `{"type":`, "valid JSON"},
		{"an array", `[{"type":"object"}]`, "JSON Schema object"},
		{"not an object schema", `{"type":"string"}`, `"type": "object"`},
		{"no type", `{"properties":{}}`, `"type": "object"`},
		{"bad keyword value", `{"type":"object","properties":{"a":{"type":"strin"}}}`, "not a valid JSON Schema"},
		{"required not a list", `{"type":"object","required":"a"}`, "not a valid JSON Schema"},
		{"bad pattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"(("}}}`, "not a valid JSON Schema"},
		{"file ref", `{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`, "another document"},
		{"http ref", `{"type":"object","properties":{"a":{"$ref":"http://169.254.169.254/latest"}}}`, "another document"},
		{"unknown meta-schema", `{"$schema":"https://example.com/meta","type":"object"}`, "another document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := schemacheck.Object(json.RawMessage(tt.schema), 8192)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Object(%s) = %v, want valid", tt.schema, err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("Object(%s) is valid, want an error with %q", tt.schema, tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("Object(%s) = %q, want it to say %q", tt.schema, err, tt.wantErr)
			case err != nil && strings.Contains(err.Error(), "urn:bridgeline"):
				t.Errorf("error %q shows the internal schema name", err)
			}
			if err == nil && !json.Valid(got) {
				t.Errorf("compacted %q is not JSON", got)
			}
		})
	}
}

func TestObjectSize(t *testing.T) {
	big := `{"type":"object","description":"` + strings.Repeat("x", 100) + `"}`
	if _, err := schemacheck.Object(json.RawMessage(big), 100); err == nil || !strings.Contains(err.Error(), "at most 100 bytes") {
		t.Errorf("Object over the limit = %v, want the size error", err)
	}
	got, err := schemacheck.Object(json.RawMessage("{ \"type\" : \"object\" }"), 100)
	if err != nil || string(got) != `{"type":"object"}` {
		t.Errorf("Object = %s, %v; want it compacted", got, err)
	}
}

func TestValidate(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string"},"items":{"type":"integer","minimum":1}},"required":["order_id"],"additionalProperties":false}`)
	if _, err := schemacheck.Object(schema, 8192); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, instance string
		wantErr        []string // "" for a match
	}{
		{"matches", `{"order_id":"6735","items":2}`, nil},
		{"missing required", `{"items":2}`, []string{"order_id", "missing"}},
		{"wrong type", `{"order_id":6735}`, []string{"/order_id", "string"}},
		{"extra property", `{"order_id":"1","colour":"red"}`, []string{"colour"}},
		{"two faults", `{"order_id":1,"items":0}`, []string{"/order_id", "/items"}},
		{"not an object", `"6735"`, []string{"object"}},
		{"not JSON", `{"order_id":`, []string{"not valid JSON"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := schemacheck.Validate(schema, json.RawMessage(tc.instance))
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Validate = %v, want a match", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate = nil, want an error naming %q", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate = %q, want it to name %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "urn:") || strings.Contains(err.Error(), "\n") {
				t.Errorf("Validate = %q: internal urn or several lines", err)
			}
		})
	}
}
