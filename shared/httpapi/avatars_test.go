package httpapi_test

import (
	"encoding/json"
	"testing"

	"github.com/bridgeline/bridgeline/shared/httpapi/contracttest"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// TestAvatarsDocumentedAsServed: openapi.yaml's example of GET /v1/avatars and of the
// Avatar schema is the catalogue as the API serves it, word for word, so the descriptions
// a reader sees in the contract are the ones drawn (persona's tests tie the words to the
// drawing's colours).
func TestAvatarsDocumentedAsServed(t *testing.T) {
	e := newEnv(t, nil)
	r := e.do("GET", "/v1/avatars", "")
	if r.status != 200 {
		t.Fatalf("GET /v1/avatars = %d %s", r.status, r.raw)
	}
	var served any
	if err := json.Unmarshal([]byte(r.raw), &served); err != nil {
		t.Fatal(err)
	}
	data, _ := served.(map[string]any)["data"].([]any)
	if len(data) != len(persona.Avatars) {
		t.Fatalf("GET /v1/avatars lists %d avatars, want the %d of the catalogue", len(data), len(persona.Avatars))
	}
	for i, a := range persona.Avatars {
		got, _ := data[i].(map[string]any)
		if got["id"] != a.ID || got["description"] != a.Description() {
			t.Errorf("avatar %d = %v, want %s described %q", i, got, a.ID, a.Description())
		}
	}

	doc := contracttest.LoadSpec(t)
	example := doc.Paths.Value("/v1/avatars").Get.Responses.Status(200).Value.Content.Get("application/json").Example
	if !sameJSON(t, example, served) {
		t.Errorf("openapi.yaml's GET /v1/avatars example\n%s\nwant what the API serves\n%s", mustJSON(t, example), r.raw)
	}
	schema := doc.Components.Schemas["Avatar"].Value
	if len(schema.Examples) != 1 || !sameJSON(t, schema.Examples[0], data[0]) {
		t.Errorf("openapi.yaml's Avatar example %s, want the catalogue's first avatar %s", mustJSON(t, schema.Examples), mustJSON(t, data[0]))
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameJSON compares two values by their JSON.
func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	var x, y any
	json.Unmarshal(mustJSON(t, a), &x)
	json.Unmarshal(mustJSON(t, b), &y)
	return string(mustJSON(t, x)) == string(mustJSON(t, y))
}
