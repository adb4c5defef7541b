package httpapi_test

import (
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/shared/siptrunk"
)

// TestSIPTrunkInboundPasswordShownOnce: a trunk created without inbound credentials gets
// generated ones: the create's answer shows inbound.username and inbound.password (32
// characters), and nothing else ever shows the password again: not get, list, update,
// the create's idempotent replay, or the log. An inbound password shorter than 24
// characters is refused.
func TestSIPTrunkInboundPasswordShownOnce(t *testing.T) {
	e := newTrunkEnv(t)

	body := `{"name":"Acme on Twilio","inbound":{"allowed_addresses":["54.172.60.0/30"]}}`
	made := e.do("POST", "/v1/sip_trunks", body, "Idempotency-Key", "trunk-gen-1")
	if made.status != 201 {
		t.Fatalf("create = %d %s", made.status, made.raw)
	}
	in, _ := made.body["inbound"].(map[string]any)
	user, _ := in["username"].(string)
	pass, _ := in["password"].(string)
	if !strings.HasPrefix(user, "bl") || len(pass) != siptrunk.GeneratedPasswordLen || in["password_set"] != true {
		t.Fatalf("create's inbound = %v, want a generated username and a %d-character password", in, siptrunk.GeneratedPasswordLen)
	}
	id, _ := made.body["id"].(string)
	later := []resp{
		e.do("POST", "/v1/sip_trunks", body, "Idempotency-Key", "trunk-gen-1"),
		e.do("GET", "/v1/sip_trunks/"+id, ""),
		e.do("GET", "/v1/sip_trunks", ""),
		e.do("PATCH", "/v1/sip_trunks/"+id, `{"inbound":{"allowed_addresses":["54.172.60.4/30"]}}`),
	}
	for _, r := range later {
		if r.status >= 300 || strings.Contains(r.raw, pass) || strings.Contains(r.raw, `"password":`) {
			t.Errorf("a later answer shows the password, or failed: %d %s", r.status, r.raw)
		}
		if !strings.Contains(r.raw, user) {
			t.Errorf("a later answer lacks the username %s: %s", user, r.raw)
		}
	}
	if later[0].header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the second create was not a replay: %v", later[0].header)
	}
	if strings.Contains(e.logs.String(), pass) {
		t.Error("the log holds the generated password")
	}
	short := e.do("PATCH", "/v1/sip_trunks/"+id, `{"inbound":{"password":"`+strings.Repeat("x", siptrunk.MinInboundPasswordLen-1)+`"}}`)
	if short.status != 400 || errCode(short) != "parameter_invalid" || !strings.Contains(short.raw, "inbound.password") {
		t.Errorf("a 23-character inbound password = %d %s, want 400 parameter_invalid on inbound.password", short.status, short.raw)
	}
}
