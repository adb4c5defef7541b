package httpapi_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/secretbox"
	"github.com/bridgeline/bridgeline/shared/siptrunk"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// TestSIPTrunkPasswordsNeverReturned: a trunk's passwords go in and never come out: not
// in the answer of create, get, list, update or delete (password_set says one is
// there), not in the idempotent replay of the create, and not in the log. LiveKit is
// left out (the Service's nil LiveKit): e2e/sip drives the routes with it.
func TestSIPTrunkPasswordsNeverReturned(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := sqlite.Open(ctx, filepath.Join(dir, "api.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	box, err := secretbox.OpenKeyFile(filepath.Join(dir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	lines := &line.Service{Store: s, Assistants: s, Now: time.Now}
	trunks := &siptrunk.Service{Store: s, Lines: s, LineRules: lines, Calls: s, Secrets: box,
		Origination: siptrunk.Origination{Host: "sip.example.test", Port: 5060}, Now: time.Now}
	logs := &syncBuffer{}
	api, err := httpapi.New(s, s, slices.Concat(coreRoutes(s, nil, nil), (&httpapi.SIPTrunks{Service: trunks}).Routes()),
		httpapi.WithLog(slog.New(slog.NewJSONHandler(logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	a, key, err := (&account.Service{Store: s, Now: time.Now}).Create(ctx, "Acme", true) // trunks take live keys only
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, srv: srv, store: s, key: key, acctID: a.ID, logs: logs}

	const inPass, outPass, newPass = "in-pass-7f3a9c", "out-pass-52be81", "new-pass-c0ffee"
	var seen []resp
	check := func(what string, r resp, status int) resp {
		t.Helper()
		if r.status != status {
			t.Fatalf("%s: %d %s, want %d", what, r.status, r.raw, status)
		}
		seen = append(seen, r)
		return r
	}
	body := `{"name":"Acme on Twilio",
		"inbound":{"allowed_addresses":["54.172.60.0/30"],"username":"acme-in","password":"` + inPass + `"},
		"outbound":{"address":"acme.pstn.twilio.com","transport":"tls","username":"acme-out","password":"` + outPass + `"}}`
	made := check("create", e.do("POST", "/v1/sip_trunks", body, "Idempotency-Key", "trunk-create-1"), 201)
	check("create replayed", e.do("POST", "/v1/sip_trunks", body, "Idempotency-Key", "trunk-create-1"), 201)
	id, _ := made.body["id"].(string)
	for _, side := range []string{"inbound", "outbound"} {
		m, _ := made.body[side].(map[string]any)
		if m["password_set"] != true {
			t.Errorf("create: %s.password_set = %v, want true", side, m["password_set"])
		}
		if _, ok := m["password"]; ok {
			t.Errorf("create: %s carries a password field", side)
		}
	}
	if made.body["origination_uri"] != "sip:sip.example.test:5060" {
		t.Errorf("origination_uri = %v", made.body["origination_uri"])
	}
	check("get", e.do("GET", "/v1/sip_trunks/"+id, ""), 200)
	check("list", e.do("GET", "/v1/sip_trunks", ""), 200)
	check("update", e.do("PATCH", "/v1/sip_trunks/"+id,
		`{"outbound":{"address":"acme.pstn.twilio.com","transport":"tls","username":"acme-out","password":"`+newPass+`"}}`), 200)
	check("update keeping the password", e.do("PATCH", "/v1/sip_trunks/"+id,
		`{"inbound":{"allowed_addresses":["54.172.60.0/30","54.244.51.0/30"],"username":"acme-in"}}`), 200)
	refused := check("update with a short password", e.do("PATCH", "/v1/sip_trunks/"+id,
		`{"inbound":{"allowed_addresses":["54.172.60.0/30"],"username":"acme-in","password":"short"}}`), 400)
	if errCode(refused) != "parameter_invalid" {
		t.Errorf("short password: %s", refused.raw)
	}
	check("delete", e.do("DELETE", "/v1/sip_trunks/"+id, ""), 200)
	for _, r := range seen {
		for _, p := range []string{inPass, outPass, newPass, "short"} {
			if strings.Contains(r.raw, p) {
				t.Errorf("an answer holds a password: %s", r.raw)
			}
		}
		if strings.Contains(r.raw, secretbox.Prefix) {
			t.Errorf("an answer holds a sealed password: %s", r.raw)
		}
	}
	for _, p := range []string{inPass, outPass, newPass} {
		if strings.Contains(logs.String(), p) {
			t.Errorf("the log holds a password")
		}
	}
}
