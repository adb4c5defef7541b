package httpapi_test

import (
	"context"
	"log/slog"
	"net"
	"net/http/httptest"
	"net/netip"
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
	e := newTrunkEnv(t)
	const inPass, outPass, newPass = "in-pass-7f3a9c-0123456789ab", "out-pass-52be81", "new-pass-c0ffee"
	var seen []resp
	check := func(what string, r resp, status int) resp {
		t.Helper()
		if r.status != status {
			t.Fatalf("%s: %d %s, want %d", what, r.status, r.raw, status)
		}
		seen = append(seen, r)
		return r
	}
	logs := e.logs
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

// TestSIPTrunkOutboundMoveNeedsPassword: PATCH /v1/sip_trunks/{id} that sends the
// outbound side to another host or over another transport without outbound.password is
// 400 outbound_password_required, and the trunk is left as it was: the stored password
// never follows a move it was not given for. With the password the move is made.
func TestSIPTrunkOutboundMoveNeedsPassword(t *testing.T) {
	e := newTrunkEnv(t)
	made := e.do("POST", "/v1/sip_trunks", `{"name":"Acme","outbound":{"address":"acme.pstn.twilio.com","transport":"tls","username":"acme-out","password":"out-pass-52be81"}}`)
	if made.status != 201 {
		t.Fatalf("create: %d %s", made.status, made.raw)
	}
	id, _ := made.body["id"].(string)
	for _, body := range []string{
		`{"outbound":{"address":"attacker.example:5060","transport":"tls","username":"acme-out"}}`,
		`{"outbound":{"address":"acme.pstn.twilio.com","transport":"udp","username":"acme-out"}}`,
		`{"outbound":{"address":"acme.pstn.twilio.com","username":"acme-out"}}`,
		`{"name":"renamed","outbound":{"address":"acme2.pstn.twilio.com","transport":"tls","username":"acme-out"}}`,
	} {
		r := e.do("PATCH", "/v1/sip_trunks/"+id, body)
		errObj, _ := r.body["error"].(map[string]any)
		if r.status != 400 || errCode(r) != "outbound_password_required" || errObj["param"] != "outbound.password" {
			t.Errorf("PATCH %s = %d %s, want 400 outbound_password_required on outbound.password", body, r.status, r.raw)
		}
	}
	got := e.do("GET", "/v1/sip_trunks/"+id, "")
	out, _ := got.body["outbound"].(map[string]any)
	if got.body["name"] != "Acme" || out["address"] != "acme.pstn.twilio.com" || out["transport"] != "tls" || out["password_set"] != true {
		t.Errorf("after the refused moves the trunk is %s", got.raw)
	}
	r := e.do("PATCH", "/v1/sip_trunks/"+id, `{"outbound":{"address":"acme2.pstn.twilio.com","transport":"tls","username":"acme-out","password":"out-pass-new-1"}}`)
	out, _ = r.body["outbound"].(map[string]any)
	if r.status != 200 || out["address"] != "acme2.pstn.twilio.com" || out["password_set"] != true {
		t.Errorf("PATCH moving with the password = %d %s", r.status, r.raw)
	}
}

// TestSIPTrunkAddressesChecked: over HTTP, an outbound host that is or resolves to an
// internal address is 400 url_not_allowed naming it, an allow-list with internal or
// near-universal blocks is refused, and media_encryption is shown with its default.
func TestSIPTrunkAddressesChecked(t *testing.T) {
	e := newTrunkEnv(t)
	for _, tc := range []struct{ body, code, param, says string }{
		{`{"outbound":{"address":"169.254.169.254.nip.io:80"}}`, "url_not_allowed", "outbound.address", "169.254.169.254 is link-local"},
		{`{"outbound":{"address":"169.254.169.254"}}`, "url_not_allowed", "outbound.address", "link-local"},
		{`{"outbound":{"address":"pbx.corp.example","transport":"tcp"}}`, "url_not_allowed", "outbound.address", "10.20.0.5 is private"},
		{`{"outbound":{"address":"nowhere.example"}}`, "parameter_invalid", "outbound.address", "does not resolve"},
		{`{"inbound":{"allowed_addresses":["0.0.0.0/1","128.0.0.0/1"]}}`, "parameter_invalid", "inbound.allowed_addresses", "wider than a /8"},
		{`{"inbound":{"allowed_addresses":["127.0.0.1"]}}`, "url_not_allowed", "inbound.allowed_addresses", "loopback"},
		{`{"inbound":{"allowed_addresses":["192.168.0.0/24"]}}`, "url_not_allowed", "inbound.allowed_addresses", "private"},
		{`{"inbound":{"allowed_addresses":["54.172.60.0/30"]},"media_encryption":"sometimes"}`, "parameter_invalid", "media_encryption", "disable, allow or require"},
		{`{"inbound":{"allowed_addresses":["54.172.60.0/30"]},"media_encryption":null}`, "parameter_invalid", "media_encryption", "null"},
	} {
		r := e.do("POST", "/v1/sip_trunks", tc.body)
		errObj, _ := r.body["error"].(map[string]any)
		msg, _ := errObj["message"].(string)
		if r.status != 400 || errCode(r) != tc.code || errObj["param"] != tc.param || !strings.Contains(msg, tc.says) {
			t.Errorf("POST %s = %d %s, want 400 %s on %s saying %q", tc.body, r.status, r.raw, tc.code, tc.param, tc.says)
		}
	}
	if list := e.do("GET", "/v1/sip_trunks", ""); !strings.Contains(list.raw, `"data":[]`) {
		t.Errorf("refused creates left trunks: %s", list.raw)
	}
	tls := e.do("POST", "/v1/sip_trunks", `{"outbound":{"address":"acme.pstn.twilio.com","transport":"tls"}}`)
	udp := e.do("POST", "/v1/sip_trunks", `{"outbound":{"address":"acme.pstn.twilio.com"},"media_encryption":"require"}`)
	if tls.body["media_encryption"] != "allow" || udp.body["media_encryption"] != "require" {
		t.Errorf("media_encryption: over tls %v (want allow), given require %v", tls.body["media_encryption"], udp.body["media_encryption"])
	}
	id, _ := tls.body["id"].(string)
	if r := e.do("PATCH", "/v1/sip_trunks/"+id, `{"media_encryption":"disable"}`); r.status != 200 || r.body["media_encryption"] != "disable" {
		t.Errorf("PATCH media_encryption = %d %s", r.status, r.raw)
	}
}

// newTrunkEnv is the API with the trunk and line routes on SQLite, LiveKit left out (the
// Service's nil LiveKit: e2e/sip drives the routes with it), DNS from trunkNames.
func newTrunkEnv(t *testing.T) *env {
	t.Helper()
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
		Origination: siptrunk.Origination{Host: "sip.example.test", Port: 5060}, Resolver: trunkNames{
			"acme.pstn.twilio.com": "54.172.60.10", "acme2.pstn.twilio.com": "54.172.60.11",
			"attacker.example": "198.51.100.66", "169.254.169.254.nip.io": "169.254.169.254", "pbx.corp.example": "10.20.0.5"},
		Now: time.Now}
	logs := &syncBuffer{}
	api, err := httpapi.New(s, s, slices.Concat(coreRoutes(t, s, nil, nil), (&httpapi.SIPTrunks{Service: trunks}).Routes()),
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
	return &env{t: t, srv: srv, store: s, key: key, acctID: a.ID, logs: logs}
}

// trunkNames is the DNS of the trunk tests (egress.Resolver): the provider names they
// use, and names pointing inside a deployment. Other names do not exist.
type trunkNames map[string]string

func (n trunkNames) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	a, ok := n[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{netip.MustParseAddr(a)}, nil
}
