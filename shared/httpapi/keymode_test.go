package httpapi_test

// Test mode never reaches a real network (keymode.go): every route of openapi.yaml
// declares its key rule, each route that can reach a real network answers an sk_test_
// key 403 live_key_required (and an sk_live_ key anything else), and the same routes on
// the sim take test keys. Then the review's findings (issue 30, finding 1), each through
// the API: a test key transferring a SIP call, patching a trunk, assigning an assistant
// to a SIP line, minting a token for a SIP call.
//
// The stack is the real handler on SQLite with the SIP trunk, session, call and
// recording routes beside newStack's. LiveKit is an address nothing listens on: tokens
// are signed locally, anything that needs a room fails (502), which is not what these
// tests look at. Calls and sessions are written to the store as the platforms' flows
// write them (e2e/sip places real ones).

import (
	"context"
	"fmt"
	"github.com/bridgeline/bridgeline/shared/campaign"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/erasure"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/httpapi/contracttest"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/platform/simclient"
	"github.com/bridgeline/bridgeline/shared/platform/sip"
	"github.com/bridgeline/bridgeline/shared/rtc/lkhttp"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/siptrunk"
)

// modeStack is the stack with one account holding a test key and a live key, a SIP trunk
// and line, and a live call on each platform.
type modeStack struct {
	*stack
	api            *httpapi.API
	test, live     *env // the same server, with the account's sk_test_ and sk_live_ key
	trunk          string
	sipLine        string
	sipSes, sipCal string // a live SIP call and its session
	simSes, simCal string // a live sim call and its session
}

func newModeStack(t *testing.T) *modeStack {
	t.Helper()
	ctx := context.Background()
	st := newStack(t, nil)
	rooms, err := lkhttp.New(lkhttp.Config{URL: "http://127.0.0.1:9", PublicURL: "ws://127.0.0.1:9",
		APIKey: "APIkeymode", APISecret: strings.Repeat("s", 32)})
	if err != nil {
		t.Fatal(err)
	}
	simPlat, err := simclient.New(simclient.Config{URL: "http://127.0.0.1:9", Secret: "sim-secret"})
	if err != nil {
		t.Fatal(err)
	}
	lines := &line.Service{Store: st.store, Assistants: st.store, Now: time.Now}
	trunks := &siptrunk.Service{Store: st.store, Lines: st.store, LineRules: lines, Calls: st.store,
		Origination: siptrunk.Origination{Host: "sip.example.test", Port: 5060}, Now: time.Now}
	// The SIP adapter as the control plane wires it, its LiveKit the address above.
	reg, err := platform.NewRegistry(simPlat, &sip.Adapter{LiveKit: rooms, Calls: st.store, Outbound: trunks.OutboundTrunk,
		Dialable: trunks.CheckDial})
	if err != nil {
		t.Fatal(err)
	}
	// A transfer runs in its request (as in a Lambda), so none outlives the test.
	svc, err := session.New(st.store, rooms, session.WithPlatforms(reg), session.WithCreateTimeout(2*time.Second),
		session.WithLater(func(task func()) { task() }), session.WithLog(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	api := st.api.With(slicesOf((&httpapi.Sessions{Service: svc}).Routes(), (&httpapi.SIPTrunks{Service: trunks}).Routes(),
		(&httpapi.Recordings{Service: call.Recordings{Store: st.store, Now: time.Now}}).Routes(),
		(&httpapi.CallErasure{Service: erasure.Service{Store: st.store, Now: time.Now}}).Routes(),
		(&httpapi.Campaigns{Service: &campaign.Service{Store: st.store, Lines: st.store, Assistants: st.store, Accounts: st.store,
			Calls: st.store, Platforms: reg, Now: time.Now}}).Routes())...)
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	liveKey, _, err := (&account.Service{Store: st.store, Now: time.Now}).AddKey(ctx, st.acctID, true)
	if err != nil {
		t.Fatal(err)
	}
	m := &modeStack{stack: st, api: api,
		test: &env{t: t, srv: srv, store: st.store, key: st.key, acctID: st.acctID, lineID: st.lineID},
		live: &env{t: t, srv: srv, store: st.store, key: liveKey, acctID: st.acctID, lineID: st.lineID}}
	tr := m.live.do("POST", "/v1/sip_trunks", `{"name":"Provider","inbound":{"allowed_addresses":["203.0.113.0/24"]},
		"outbound":{"address":"198.51.100.20","transport":"tls","username":"acme","password":"provider-pass-1"}}`)
	if tr.status != 201 {
		t.Fatalf("live key: POST /v1/sip_trunks = %d %s", tr.status, tr.raw)
	}
	m.trunk = tr.body["id"].(string)
	l := m.live.do("POST", "/v1/lines", `{"platform":"sip","handle":"+15550100777","sip_trunk_id":"`+m.trunk+`"}`)
	if l.status != 201 {
		t.Fatalf("live key: POST /v1/lines = %d %s", l.status, l.raw)
	}
	m.sipLine = l.body["id"].(string)
	m.sipSes, m.sipCal = m.liveCall(t, m.sipLine, sip.Name, "+15557650001")
	m.simSes, m.simCal = m.liveCall(t, st.lineID, sim.Name, "sim:alice")
	return m
}

func slicesOf(groups ...[]httpapi.Route) []httpapi.Route {
	var out []httpapi.Route
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// liveCall writes an answered outbound call on lineID's platform and its session, as
// the session service records one the platform put through.
func (m *modeStack) liveCall(t *testing.T, lineID, plat, to string) (sessionID, callID string) {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Millisecond)
	ses := session.Session{ID: ident.New("ses"), AccountID: m.acctID, LineID: lineID, Mode: session.ModeHuman,
		Media: "audio", PlatformHandle: to, Status: session.StatusActive, CreatedAt: now, AnsweredAt: &now, Slot: true}
	c := call.Call{ID: ident.New("call"), AccountID: m.acctID, Direction: call.Outbound, LineID: lineID, From: "+15550100777",
		To: to, Media: "audio", Status: call.StatusActive, HandledBy: call.HandledByCustomer, SessionID: ses.ID,
		Platform: plat, PlatformCallID: "pc-" + ses.ID, StartedAt: now, AnsweredAt: &now}
	ses.CallID = c.ID
	if err := m.store.CreateSession(context.Background(), ses, c, nil, 20); err != nil {
		t.Fatal(err)
	}
	return ses.ID, c.ID
}

// liveKeyRefusal checks r is the rule's refusal of route, naming why.
func liveKeyRefusal(t *testing.T, what string, r resp, route, why string) {
	t.Helper()
	e, _ := r.body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if r.status != http.StatusForbidden || errCode(r) != "live_key_required" {
		t.Errorf("%s = %d %s, want 403 live_key_required", what, r.status, r.raw)
		return
	}
	if !strings.HasPrefix(msg, route+" needs an sk_live_ key: ") || !strings.Contains(msg, why) {
		t.Errorf("%s: message %q, want it to name %s and say %q", what, msg, route, why)
	}
}

// TestEveryRouteDeclaresAKeyPolicy enumerates openapi.yaml: every operation is a route
// of the table that declares its key rule (public routes take no key and declare
// none), and each one is sent with both keys. A route that can reach a real network
// (live only, or by its resource, here the SIP trunk, line, call and session and an
// assistant the SIP line runs) answers the test key 403 live_key_required naming the
// route, and the live key anything else; every other route, and each resource route on
// the sim's call and session, takes the test key. A new route fails here until it
// declares its rule.
func TestEveryRouteDeclaresAKeyPolicy(t *testing.T) {
	m := newModeStack(t)
	asst := m.live.do("POST", "/v1/assistants", `{"name":"Front desk","system_prompt":"Help.","greeting":"Hi.","avatar_id":"ava_iris"}`)
	asstID, _ := asst.body["id"].(string)
	ver := m.live.do("POST", "/v1/assistants/"+asstID+"/publish", "")
	verID, _ := ver.body["active_version_id"].(string)
	if r := m.live.do("POST", "/v1/lines/"+m.sipLine+"/assign", `{"assistant_id":"`+asstID+`"}`); r.status != 200 {
		t.Fatalf("live key: assign the SIP line = %d %s", r.status, r.raw)
	}
	spare, _, err := (&account.Service{Store: m.store, Now: time.Now}).AddKey(context.Background(), m.acctID, true)
	if err != nil {
		t.Fatal(err)
	}
	spareKey, err := m.store.KeyByHash(context.Background(), account.HashKey(spare))
	if err != nil {
		t.Fatal(err)
	}
	// A campaign on the SIP line (a live key's) and one on the sim line (a test key's).
	sipCmp := m.live.do("POST", "/v1/campaigns", `{"assistant_id":"`+asstID+`","line_id":"`+m.sipLine+`","recipients":[{"platform_handle":"+15557650042"}]}`)
	simCmp := m.test.do("POST", "/v1/campaigns", `{"assistant_id":"`+asstID+`","line_id":"`+m.lineID+`","recipients":[{"platform_handle":"sim:alice"}]}`)
	if sipCmp.status != 201 || simCmp.status != 201 {
		t.Fatalf("campaigns: live key on the SIP line = %d %s; test key on the sim line = %d %s", sipCmp.status, sipCmp.raw, simCmp.status, simCmp.raw)
	}
	// The ids each path segment names: the real-network resource of each kind.
	real := map[string]string{"assistants": asstID, "lines": m.sipLine, "sessions": m.sipSes, "calls": m.sipCal,
		"sip_trunks": m.trunk, "api_keys": spareKey.ID, "webhook_endpoints": "we_none", "events": "evt_none",
		"campaigns": sipCmp.body["id"].(string), "avatars": "ava_iris"}
	sim := map[string]string{"sessions": m.simSes, "calls": m.simCal, "lines": m.lineID, "campaigns": simCmp.body["id"].(string)}
	bodies := map[string]string{
		"POST /v1/sessions":                 `{"line_id":"$line","platform_handle":"$handle","media":"audio"}`,
		"PATCH /v1/sessions/{id}":           `{"metadata":{"crm_id":"42"}}`,
		"PATCH /v1/calls/{id}":              `{"metadata":{"crm_id":"42"}}`,
		"POST /v1/calls/{id}/transfer":      `{"to":"+15557650042"}`,
		"POST /v1/calls/{id}/answer":        `{"action":"decline"}`,
		"POST /v1/sessions/{id}/tokens":     `{"name":"Agent"}`,
		"PATCH /v1/lines/{id}":              `{"name":"Renamed"}`,
		"POST /v1/lines/{id}/assign":        `{"assistant_id":"` + asstID + `"}`,
		"POST /v1/assistants/{id}/activate": `{"version_id":"` + verID + `"}`,
		"PATCH /v1/sip_trunks/{id}":         `{"name":"Renamed"}`,
		"POST /v1/sip_trunks":               `{"name":"Second","inbound":{"allowed_addresses":["203.0.113.0/24"]}}`,
		"POST /v1/lines":                    `{"platform":"sip","handle":"+15550100778","sip_trunk_id":"` + m.trunk + `"}`,
		"POST /v1/campaigns":                `{"assistant_id":"` + asstID + `","line_id":"$line","recipients":[{"platform_handle":"$handle"}]}`,
	}
	request := func(e *env, method, pattern string, ids map[string]string, line, handle string) resp {
		t.Helper()
		path := pattern
		if strings.Contains(path, "{id}") {
			kind, _, _ := strings.Cut(strings.TrimPrefix(pattern, "/v1/"), "/")
			id, ok := ids[kind]
			if !ok {
				t.Fatalf("%s %s: no id for %q: add one to the test", method, pattern, kind)
			}
			path = strings.Replace(path, "{id}", id, 1)
		}
		body := strings.NewReplacer("$line", line, "$handle", handle).Replace(bodies[method+" "+pattern])
		if body == "" && method != http.MethodGet && method != http.MethodDelete {
			body = `{}`
		}
		return e.do(method, path, body)
	}

	table := map[string]httpapi.Route{}
	for _, r := range m.api.Routes() {
		table[contracttest.RouteKey(r.Method, r.Pattern)] = r
	}
	doc := contracttest.LoadSpec(t)
	type op struct {
		method, path string
		documents403 bool // the operation lists 403 live_key_required
	}
	var ops, deletes []op
	for path, item := range doc.Paths.Map() {
		for method, oper := range item.Operations() {
			r403 := oper.Responses.Value("403")
			o := op{method, path, r403 != nil && r403.Ref == "#/components/responses/LiveKeyRequired"}
			if method == http.MethodDelete {
				deletes = append(deletes, o) // last: a live key's delete ends what others need
			} else {
				ops = append(ops, o)
			}
		}
	}
	checked := map[httpapi.KeyMode]int{}
	for _, o := range append(ops, deletes...) {
		key := contracttest.RouteKey(o.method, o.path)
		rt, ok := table[key]
		if !ok {
			if strings.HasPrefix(o.path, "/v1/") {
				t.Errorf("%s: in openapi.yaml but not in this stack's route table: add its group to newModeStack", key)
			}
			continue // the internal receivers and the sim's pages: TestOpenAPIMatchesRouteTable
		}
		if rt.Public {
			if rt.Keys.Mode != httpapi.KeyModeUndeclared {
				t.Errorf("%s: a public route takes no key, yet declares %v", key, rt.Keys.Mode)
			}
			continue
		}
		route := rt.Method + " " + rt.Pattern
		checked[rt.Keys.Mode]++
		if mayRefuse := rt.Keys.Mode != httpapi.TestKeysAllowed; mayRefuse != o.documents403 {
			t.Errorf("%s: %v, but openapi.yaml lists 403 live_key_required = %v", key, rt.Keys.Mode, o.documents403)
		}
		switch rt.Keys.Mode {
		case httpapi.KeyModeUndeclared:
			t.Errorf("%s: declares no key rule (Route.Keys): say whether a test key may use it", key)
		case httpapi.TestKeysAllowed:
			if r := request(m.test, o.method, o.path, real, m.sipLine, "+15557650042"); errCode(r) == "live_key_required" {
				t.Errorf("%s takes test keys, yet answered one %d %s", key, r.status, r.raw)
			}
		case httpapi.LiveKeyOnly:
			liveKeyRefusal(t, key+" with a test key", request(m.test, o.method, o.path, real, m.sipLine, "+15557650042"), route, rt.Keys.Why)
			if r := request(m.live, o.method, o.path, real, m.sipLine, "+15557650042"); errCode(r) == "live_key_required" {
				t.Errorf("%s with a live key = %d %s", key, r.status, r.raw)
			}
		case httpapi.LiveKeyForRealResource:
			why := "sip platform, which reaches the real phone network"
			if strings.HasPrefix(o.path, "/v1/api_keys") {
				why = "is an sk_live_ key"
			}
			liveKeyRefusal(t, key+" with a test key", request(m.test, o.method, o.path, real, m.sipLine, "+15557650042"), route, why)
			if _, onSim := sim[strings.Split(o.path, "/")[2]]; onSim {
				if r := request(m.test, o.method, o.path, sim, m.lineID, "sim:alice"); errCode(r) == "live_key_required" {
					t.Errorf("%s on the sim with a test key = %d %s, want the sim to take test keys", key, r.status, r.raw)
				}
			}
			if r := request(m.live, o.method, o.path, real, m.sipLine, "+15557650042"); errCode(r) == "live_key_required" {
				t.Errorf("%s with a live key = %d %s", key, r.status, r.raw)
			}
		}
	}
	if checked[httpapi.LiveKeyOnly] < 7 || checked[httpapi.LiveKeyForRealResource] < 10 || checked[httpapi.TestKeysAllowed] < 20 {
		t.Errorf("routes checked by rule = %v: fewer than the route table has", checked)
	}
}

// TestTestKeyCannotTransferASIPCall: finding 1's toll fraud. A test key's transfer of a
// live SIP call is refused before anything is recorded or sent; the same key's transfer
// of a sim call gets the sim's own answer (it cannot transfer), not the key rule's.
func TestTestKeyCannotTransferASIPCall(t *testing.T) {
	m := newModeStack(t)
	r := m.test.do("POST", "/v1/calls/"+m.sipCal+"/transfer", `{"to":"+15557650099"}`)
	liveKeyRefusal(t, "test key transferring a SIP call", r, "POST /v1/calls/{id}/transfer",
		"call "+m.sipCal+" is on the sip platform, which reaches the real phone network")
	if got := m.test.do("GET", "/v1/calls/"+m.sipCal, ""); got.status != 200 || got.body["transfer"] != nil || got.body["status"] != "active" {
		t.Errorf("the SIP call after the refused transfer = %d %s, want it active with no transfer", got.status, got.raw)
	}
	if r := m.test.do("POST", "/v1/calls/"+m.simCal+"/transfer", `{"to":"+15557650042"}`); errCode(r) != "transfer_not_supported" {
		t.Errorf("test key transferring a sim call = %d %s, want the sim's transfer_not_supported", r.status, r.raw)
	}
	// A test key cannot end, relabel or answer the SIP call either; it reads it.
	liveKeyRefusal(t, "test key ending the SIP session", m.test.do("DELETE", "/v1/sessions/"+m.sipSes, ""),
		"DELETE /v1/sessions/{id}", "sip platform")
	liveKeyRefusal(t, "test key patching the SIP call", m.test.do("PATCH", "/v1/calls/"+m.sipCal, `{"metadata":{"a":"b"}}`),
		"PATCH /v1/calls/{id}", "sip platform")
	liveKeyRefusal(t, "test key answering the SIP call", m.test.do("POST", "/v1/calls/"+m.sipCal+"/answer", `{"action":"decline"}`),
		"POST /v1/calls/{id}/answer", "sip platform")
	if got := m.test.do("GET", "/v1/sessions/"+m.sipSes, ""); got.status != 200 || got.body["status"] != "active" {
		t.Errorf("test key reading the SIP session = %d %s", got.status, got.raw)
	}
}

// TestTestKeyCannotChangeASIPTrunk: a test key can neither read nor change a trunk (the
// outbound address the stored password would follow), nor make one, nor a line on one.
func TestTestKeyCannotChangeASIPTrunk(t *testing.T) {
	m := newModeStack(t)
	why := "SIP trunks and the numbers on them carry calls on the real phone network"
	liveKeyRefusal(t, "test key patching the trunk's outbound address", m.test.do("PATCH", "/v1/sip_trunks/"+m.trunk,
		`{"outbound":{"address":"attacker.example.net","transport":"udp","username":"acme"}}`), "PATCH /v1/sip_trunks/{id}", why)
	liveKeyRefusal(t, "test key opening the trunk's inbound side", m.test.do("PATCH", "/v1/sip_trunks/"+m.trunk,
		`{"inbound":{"allowed_addresses":["0.0.0.0/1","128.0.0.0/1"]}}`), "PATCH /v1/sip_trunks/{id}", why)
	liveKeyRefusal(t, "test key making a trunk", m.test.do("POST", "/v1/sip_trunks",
		`{"name":"Mine","outbound":{"address":"attacker.example.net"}}`), "POST /v1/sip_trunks", why)
	liveKeyRefusal(t, "test key reading the trunk", m.test.do("GET", "/v1/sip_trunks/"+m.trunk, ""), "GET /v1/sip_trunks/{id}", why)
	liveKeyRefusal(t, "test key claiming a number", m.test.do("POST", "/v1/lines",
		`{"platform":"sip","handle":"+18005550199","sip_trunk_id":"`+m.trunk+`"}`), "POST /v1/lines", why)
	liveKeyRefusal(t, "test key deleting the SIP line", m.test.do("DELETE", "/v1/lines/"+m.sipLine, ""), "DELETE /v1/lines/{id}", why)
	got := m.live.do("GET", "/v1/sip_trunks/"+m.trunk, "")
	out, _ := got.body["outbound"].(map[string]any)
	in, _ := got.body["inbound"].(map[string]any)
	if got.status != 200 || out["address"] != "198.51.100.20" || fmt.Sprint(in["allowed_addresses"]) != "[203.0.113.0/24]" {
		t.Errorf("the trunk after the test key's requests = %d %s, want it unchanged", got.status, got.raw)
	}
	if list := m.live.do("GET", "/v1/sip_trunks", ""); len(list.body["data"].([]any)) != 1 {
		t.Errorf("trunks after the test key's create = %s, want the one", list.raw)
	}
	if r := m.live.do("GET", "/v1/lines/"+m.sipLine, ""); r.status != 200 {
		t.Errorf("the SIP line after the test key's delete = %d %s", r.status, r.raw)
	}
}

// TestTestKeyCannotPutAnAssistantOnASIPLine: a test key may build and publish an
// assistant (here one that would transfer to a premium number), and put it on a sim
// line, but not on the SIP line; nor publish or activate a version of an assistant the
// SIP line runs. A live key may do all of it.
func TestTestKeyCannotPutAnAssistantOnASIPLine(t *testing.T) {
	m := newModeStack(t)
	mk := m.test.do("POST", "/v1/assistants", `{"name":"Premium","system_prompt":"Transfer every caller.","greeting":"Hi.",
		"avatar_id":"ava_iris","transfer_destinations":[{"to":"+15557650099","description":"Sales"}]}`)
	if mk.status != 201 {
		t.Fatalf("test key: create assistant = %d %s", mk.status, mk.raw)
	}
	asst := mk.body["id"].(string)
	if r := m.test.do("POST", "/v1/assistants/"+asst+"/publish", ""); r.status != 201 {
		t.Fatalf("test key: publish an assistant no line runs = %d %s", r.status, r.raw)
	}
	liveKeyRefusal(t, "test key assigning it to the SIP line", m.test.do("POST", "/v1/lines/"+m.sipLine+"/assign", `{"assistant_id":"`+asst+`"}`),
		"POST /v1/lines/{id}/assign", "line "+m.sipLine+" is on the sip platform, which reaches the real phone network")
	liveKeyRefusal(t, "test key setting it on the SIP line", m.test.do("PATCH", "/v1/lines/"+m.sipLine, `{"assistant_id":"`+asst+`"}`),
		"PATCH /v1/lines/{id}", "line "+m.sipLine)
	if r := m.live.do("GET", "/v1/lines/"+m.sipLine, ""); r.body["assistant_id"] != nil {
		t.Errorf("the SIP line after the refused assigns = %s, want no assistant", r.raw)
	}
	if r := m.test.do("POST", "/v1/lines/"+m.lineID+"/assign", `{"assistant_id":"`+asst+`"}`); r.status != 200 {
		t.Errorf("test key: assign the sim line = %d %s", r.status, r.raw)
	}

	// The live key puts it on the SIP line; from then on what the line runs is live.
	if r := m.live.do("POST", "/v1/lines/"+m.sipLine+"/assign", `{"assistant_id":"`+asst+`"}`); r.status != 200 {
		t.Fatalf("live key: assign the SIP line = %d %s", r.status, r.raw)
	}
	before := m.live.do("GET", "/v1/assistants/"+asst, "")
	if r := m.test.do("PATCH", "/v1/assistants/"+asst, `{"greeting":"Hello from the draft."}`); r.status != 200 {
		t.Errorf("test key: edit the draft = %d %s", r.status, r.raw)
	}
	liveKeyRefusal(t, "test key publishing what the SIP line runs", m.test.do("POST", "/v1/assistants/"+asst+"/publish", ""),
		"POST /v1/assistants/{id}/publish", "line "+m.sipLine+", which runs the assistant's active version, is on the sip platform")
	liveKeyRefusal(t, "test key activating a version the SIP line would run", m.test.do("POST", "/v1/assistants/"+asst+"/activate",
		`{"version_id":"`+before.body["active_version_id"].(string)+`"}`), "POST /v1/assistants/{id}/activate", "line "+m.sipLine)
	if after := m.live.do("GET", "/v1/assistants/"+asst, ""); after.body["version_count"] != before.body["version_count"] {
		t.Errorf("versions after the refused publish = %v, want %v", after.body["version_count"], before.body["version_count"])
	}
	// Pinned to its version, the SIP line no longer follows the active one: a test key
	// may publish again.
	ver := before.body["active_version_id"].(string)
	if r := m.live.do("PATCH", "/v1/lines/"+m.sipLine, `{"version_id":"`+ver+`"}`); r.status != 200 {
		t.Fatalf("live key: pin the SIP line = %d %s", r.status, r.raw)
	}
	if r := m.test.do("POST", "/v1/assistants/"+asst+"/publish", ""); r.status != 201 {
		t.Errorf("test key: publish with the SIP line pinned = %d %s", r.status, r.raw)
	}
	if r := m.live.do("POST", "/v1/assistants/"+asst+"/publish", ""); r.status != 201 {
		t.Errorf("live key: publish = %d %s", r.status, r.raw)
	}
}

// TestTestKeyCannotJoinASIPCall: a test key mints no participant token for a live phone
// call, and places none; it mints one for a sim call, and a live key for the phone call.
func TestTestKeyCannotJoinASIPCall(t *testing.T) {
	m := newModeStack(t)
	liveKeyRefusal(t, "test key minting a token for the SIP call", m.test.do("POST", "/v1/sessions/"+m.sipSes+"/tokens", `{}`),
		"POST /v1/sessions/{id}/tokens", "session "+m.sipSes+"'s call is on the sip platform, which reaches the real phone network")
	if r := m.test.do("POST", "/v1/sessions/"+m.simSes+"/tokens", `{}`); r.status != 201 || r.body["participant_token"] == "" {
		t.Errorf("test key: token for the sim call = %d %s", r.status, r.raw)
	}
	if r := m.live.do("POST", "/v1/sessions/"+m.sipSes+"/tokens", `{}`); r.status != 201 {
		t.Errorf("live key: token for the SIP call = %d %s", r.status, r.raw)
	}
	liveKeyRefusal(t, "test key calling from the SIP line", m.test.do("POST", "/v1/sessions",
		`{"line_id":"`+m.sipLine+`","platform_handle":"+15557650099","media":"audio"}`),
		"POST /v1/sessions", "line "+m.sipLine+" is on the sip platform")
	if list := m.live.do("GET", "/v1/sessions", ""); len(list.body["data"].([]any)) != 2 {
		t.Errorf("sessions after the refused create = %s, want the two", list.raw)
	}
}

// TestRevokingALiveKeyTakesALiveKey: a leaked test key cannot cut the account's
// production off; it revokes test keys.
func TestRevokingALiveKeyTakesALiveKey(t *testing.T) {
	m := newModeStack(t)
	keys := m.live.do("GET", "/v1/api_keys", "")
	var liveID, testID string
	for _, k := range keys.body["data"].([]any) {
		k := k.(map[string]any)
		if k["mode"] == "live" {
			liveID = k["id"].(string)
		}
	}
	if r := m.test.do("POST", "/v1/api_keys", ""); r.status != 201 {
		t.Fatalf("test key: create a key = %d %s", r.status, r.raw)
	} else {
		testID = r.body["id"].(string)
	}
	liveKeyRefusal(t, "test key revoking the live key", m.test.do("DELETE", "/v1/api_keys/"+liveID, ""),
		"DELETE /v1/api_keys/{id}", "key "+liveID+" is an sk_live_ key")
	if r := m.live.do("GET", "/v1/usage", ""); r.status != 200 {
		t.Errorf("the live key after the refused revoke = %d %s", r.status, r.raw)
	}
	if r := m.test.do("DELETE", "/v1/api_keys/"+testID, ""); r.status != 200 {
		t.Errorf("test key revoking a test key = %d %s", r.status, r.raw)
	}
}

// TestKeyRuleFailsClosed: a route that declares no rule takes live keys only, and a
// route that declares its resource decides yet answers a test key without asking the
// rule is a 500, not a pass.
func TestKeyRuleFailsClosed(t *testing.T) {
	st := newStack(t, nil)
	ok := func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		return http.StatusOK, map[string]bool{"ok": true}, nil
	}
	api := st.api.With(
		httpapi.Route{Function: "undeclared", Method: http.MethodGet, Pattern: "/v1/undeclared", Handler: ok},
		httpapi.Route{Function: "unasked", Method: http.MethodGet, Pattern: "/v1/unasked", Keys: httpapi.LiveForRealResource(), Handler: ok},
		httpapi.Route{Function: "open", Method: http.MethodGet, Pattern: "/v1/open", Keys: httpapi.TestKeys(), Handler: ok})
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	liveKey, _, err := (&account.Service{Store: st.store, Now: time.Now}).AddKey(context.Background(), st.acctID, true)
	if err != nil {
		t.Fatal(err)
	}
	test := &env{t: t, srv: srv, key: st.key}
	live := &env{t: t, srv: srv, key: liveKey}
	liveKeyRefusal(t, "test key on an undeclared route", test.do("GET", "/v1/undeclared", ""), "GET /v1/undeclared", "declares no test-mode rule")
	if r := live.do("GET", "/v1/undeclared", ""); r.status != 200 {
		t.Errorf("live key on an undeclared route = %d %s", r.status, r.raw)
	}
	if r := test.do("GET", "/v1/unasked", ""); r.status != 500 || errCode(r) != "internal_error" {
		t.Errorf("test key on a route whose handler never asked the rule = %d %s, want 500", r.status, r.raw)
	}
	if r := live.do("GET", "/v1/unasked", ""); r.status != 200 {
		t.Errorf("live key on that route = %d %s", r.status, r.raw)
	}
	if r := test.do("GET", "/v1/open", ""); r.status != 200 {
		t.Errorf("test key on a test-key route = %d %s", r.status, r.raw)
	}
}
