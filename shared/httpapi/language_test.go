package httpapi_test

import (
	"testing"
)

// TestContractLanguage: a version's language over the API. A draft is en unless it
// says otherwise; a tag that is not BCP-47 is parameter_invalid; a language the
// deployment does not serve (here its recogniser hears en and es) is
// language_not_supported at create and update, naming those it serves; publish
// refuses a voice of another language, and the version carries the language. GET
// /v1/voices lists the Spanish voices with their language.
func TestContractLanguage(t *testing.T) {
	c := newContract(t, nil)
	const full = `"system_prompt":"Sé amable.","greeting":"Hola, ¿en qué puedo ayudarle?","avatar_id":"ava_iris"`

	en := c.OK("POST", "/v1/assistants", `{"name":"Ada"}`, 201)
	if got := en.Body["draft"].(map[string]any)["language"]; got != "en" {
		t.Errorf("a new draft's language = %v, want en", got)
	}
	es := c.OK("POST", "/v1/assistants", `{"name":"Ana",`+full+`,"language":"es-mx"}`, 201)
	id := es.Str("id")
	if got := es.Body["draft"].(map[string]any)["language"]; got != "es-MX" {
		t.Errorf("draft language = %v, want es-MX (canonical case)", got)
	}
	c.Fail("POST", "/v1/assistants", `{"name":"a","language":"spanish"}`, 400, "parameter_invalid")
	c.Fail("PATCH", "/v1/assistants/"+id, `{"language":null}`, 400, "parameter_invalid")
	fr := c.FailValid("POST", "/v1/assistants", `{"name":"a","language":"fr"}`, 400, "language_not_supported")
	if e, _ := fr.Body["error"].(map[string]any); e["param"] != "language" || e["message"] != `language "fr" is not served by this deployment (its recogniser and voices); it serves en, es` {
		t.Errorf("the refusal of fr = %s, want it on language, naming en and es", fr.Raw)
	}
	c.FailValid("PATCH", "/v1/assistants/"+id, `{"language":"de-DE"}`, 400, "language_not_supported")

	// Publish: the voice must speak the language.
	c.OK("PATCH", "/v1/assistants/"+id, `{"voice":"flite-slt"}`, 200)
	pub := c.FailValid("POST", "/v1/assistants/"+id+"/publish", "", 400, "parameter_invalid")
	if e, _ := pub.Body["error"].(map[string]any); e["param"] != "voice" {
		t.Errorf("publish of a Spanish draft with an English voice = %s, want the refusal on voice", pub.Raw)
	}
	c.OK("PATCH", "/v1/assistants/"+id, `{"voice":"espeak-es-f3"}`, 200)
	a := c.OK("POST", "/v1/assistants/"+id+"/publish", "", 201)
	vs := a.Body["versions"].([]any)
	if v := vs[len(vs)-1].(map[string]any); v["language"] != "es-MX" || v["voice"] != "espeak-es-f3" {
		t.Errorf("the version = language %v voice %v, want es-MX and espeak-es-f3", v["language"], v["voice"])
	}

	voices := c.OK("GET", "/v1/voices", "", 200).Body["data"].([]any)
	found := false
	for _, v := range voices {
		v := v.(map[string]any)
		if v["id"] == "espeak-es-f3" {
			found = v["language"] == "es-ES" && v["engine"] == "espeak-ng"
		}
	}
	if !found {
		t.Errorf("GET /v1/voices lists no espeak-es-f3 of language es-ES: %v", voices)
	}
}
