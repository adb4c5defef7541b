package httpapi_test

// Where a line may call (shared/destination), through the HTTP API on SQLite: a live
// key's dial to a premium range, a country the line does not allow until it does, a
// transfer to a premium number, and the daily outbound minutes cap refusing the next
// session once the account's calls used it. The platform is a telephone platform that
// takes live keys only (as SIP): its dial and transfer succeed unless refused before.
// LiveKit is a stand-in that makes rooms and tokens (e2e/sip drives the real one).

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// phoneNet is a telephone platform: E.164 handles, transfers, live keys only. It counts
// what reached it: a refused destination never does.
type phoneNet struct {
	mu     sync.Mutex
	dialed []string
}

func (*phoneNet) Name() string                                 { return "pstn" }
func (*phoneNet) CheckHandle(h string) error                   { return platform.CheckE164(h) }
func (*phoneNet) CanTransfer() bool                            { return true }
func (*phoneNet) TestKeys() bool                               { return false }
func (*phoneNet) Hangup(context.Context, string) error         { return nil }
func (*phoneNet) Reject(context.Context, string, string) error { return nil }
func (*phoneNet) Answer(context.Context, string, string, platform.Room) error {
	return nil
}
func (p *phoneNet) Dial(_ context.Context, d platform.DialRequest) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dialed = append(p.dialed, d.To)
	return "PC_" + d.CallID, nil
}
func (p *phoneNet) Transfer(_ context.Context, t platform.Transfer) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dialed = append(p.dialed, t.To)
	return nil
}
func (p *phoneNet) reached(to string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Contains(p.dialed, to)
}

// roomMaker stands in for LiveKit: rooms are made and tokens minted.
type roomMaker struct{ session.NoRooms }

func (roomMaker) CreateRoom(context.Context, rtc.RoomSpec) (rtc.Room, error) { return rtc.Room{}, nil }
func (roomMaker) DeleteRoom(context.Context, string) error                   { return nil }
func (roomMaker) SendData(context.Context, string, string, []byte) error     { return nil }
func (roomMaker) ParticipantToken(g rtc.Grant) (rtc.Token, error) {
	return rtc.Token{JWT: "jwt-" + g.Identity, Identity: g.Identity, ExpiresAt: time.Now().Add(time.Hour)}, nil
}

func TestDestinationPolicy(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "api.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	phone := &phoneNet{}
	reg, err := platform.NewRegistry(phone)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := session.New(s, roomMaker{session.NoRooms{Public: "ws://127.0.0.1:7880"}}, session.WithPlatforms(reg),
		session.WithLog(slog.New(slog.DiscardHandler)), session.WithLater(func(func()) {}))
	if err != nil {
		t.Fatal(err)
	}
	const reportSecret = "persona-report-secret-for-the-destination-test"
	api, err := httpapi.New(s, s, slices.Concat(coreRoutes(t, s, nil, nil), (&httpapi.Sessions{Service: svc}).Routes(),
		(&httpapi.Receivers{Sessions: svc, ReportSecret: reportSecret}).Routes()),
		httpapi.WithLog(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	a, key, err := (&account.Service{Store: s, Now: time.Now}).Create(ctx, "Acme", true) // a live key
	if err != nil {
		t.Fatal(err)
	}
	l, err := (&line.Service{Store: s, Assistants: s, Now: time.Now}).Provision(ctx, a.ID, "pstn", "+15550100001", "US line")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, srv: srv, store: s, key: key, acctID: a.ID, lineID: l.ID}
	refused := func(what string, r resp, to string, rule string) {
		t.Helper()
		body, _ := r.body["error"].(map[string]any)
		msg, _ := body["message"].(string)
		if r.status != 403 || errCode(r) != "destination_not_allowed" || !strings.Contains(msg, to) || !strings.Contains(msg, rule) {
			t.Errorf("%s: %d %s; want 403 destination_not_allowed naming %s and %q", what, r.status, r.raw, to, rule)
		}
		if phone.reached(to) {
			t.Errorf("%s: %s reached the platform", what, to)
		}
	}
	dial := func(to string) resp {
		return e.do("POST", "/v1/sessions", `{"platform_handle":"`+to+`","line_id":"`+l.ID+`","media":"audio"}`)
	}

	// A premium range, whatever the policy.
	refused("dial +882", dial("+88299123456"), "+88299123456", "premium-rate or shared-cost")
	refused("dial +1 900", dial("+19005550123"), "+19005550123", "premium-rate or shared-cost")

	// A +44 number from a +1 line: refused by default, allowed once the line allows GB.
	refused("dial GB by default", dial("+442079460000"), "+442079460000", "is in GB")
	if r := e.do("PATCH", "/v1/lines/"+l.ID, `{"allowed_destination_countries":["gb","US"]}`); r.status != 200 ||
		!strings.Contains(r.raw, `"allowed_destination_countries":["GB","US"]`) {
		t.Fatalf("allow GB: %d %s", r.status, r.raw)
	}
	if r := dial("+442079460000"); r.status != 201 || !phone.reached("+442079460000") {
		t.Fatalf("dial GB once allowed: %d %s", r.status, r.raw)
	}
	if r := e.do("PATCH", "/v1/lines/"+l.ID, `{"allowed_destination_countries":["XX"]}`); r.status != 400 || errCode(r) != "parameter_invalid" {
		t.Errorf("an unknown country: %d %s, want 400 parameter_invalid", r.status, r.raw)
	}

	// A transfer to a premium number, or to a country the line does not allow.
	now := time.Now().UTC().Truncate(time.Millisecond)
	answered := now.Add(-6 * time.Minute)
	ses := session.Session{ID: ident.New("ses"), AccountID: a.ID, LineID: l.ID, Mode: session.ModeHuman, Media: "audio",
		PlatformHandle: "+15550107777", Status: session.StatusActive, CreatedAt: answered, AnsweredAt: &answered}
	c := call.Call{ID: ident.New("call"), AccountID: a.ID, Direction: call.Outbound, LineID: l.ID, From: l.Handle,
		To: ses.PlatformHandle, Media: "audio", Status: call.StatusActive, HandledBy: call.HandledByCustomer,
		SessionID: ses.ID, Platform: "pstn", PlatformCallID: "PC_live", OnNetwork: true, StartedAt: answered, AnsweredAt: &answered}
	ses.CallID = c.ID
	if err := s.SaveSession(ctx, ses, c, nil); err != nil {
		t.Fatal(err)
	}
	transfer := func(to string) resp {
		return e.do("POST", "/v1/calls/"+c.ID+"/transfer", `{"to":"`+to+`"}`)
	}
	refused("transfer to +44 9", transfer("+449012345678"), "+449012345678", "premium-rate or shared-cost")
	refused("transfer to FR", transfer("+33142685300"), "+33142685300", "is in FR")
	refused("transfer to a SIP URI's premium number", transfer("sip:+979123456789@sip.example.com"), "sip:+979123456789@sip.example.com", "premium")

	// The assistant's transfer_call: its version lists a French number (publishable: not
	// premium), which the US line may not reach at transfer time; a premium destination
	// is not published at all.
	if r := e.do("POST", "/v1/assistants", `{"name":"Ada","system_prompt":"Be kind.","greeting":"Hi.","avatar_id":"ava_iris",
		"transfer_destinations":[{"to":"+88299123456","description":"the desk"}]}`); r.status != 201 {
		t.Fatalf("create assistant: %d %s", r.status, r.raw)
	} else {
		refused("publish a premium destination", e.do("POST", "/v1/assistants/"+r.body["id"].(string)+"/publish", ""),
			"+88299123456", "premium-rate or shared-cost")
	}
	r := e.do("POST", "/v1/assistants", `{"name":"Ada","system_prompt":"Be kind.","greeting":"Hi.","avatar_id":"ava_iris",
		"transfer_destinations":[{"to":"+33142685300","description":"the Paris desk"}]}`)
	if r.status != 201 {
		t.Fatalf("create assistant: %d %s", r.status, r.raw)
	}
	pub := e.do("POST", "/v1/assistants/"+r.body["id"].(string)+"/publish", "")
	if pub.status != 201 {
		t.Fatalf("publish: %d %s", pub.status, pub.raw)
	}
	versions, _ := pub.body["versions"].([]any)
	ver, _ := versions[len(versions)-1].(map[string]any)["id"].(string)
	aSes := session.Session{ID: ident.New("ses"), AccountID: a.ID, LineID: l.ID, Mode: session.ModeAssistant, Media: "audio",
		PlatformHandle: "+15550107778", Status: session.StatusActive, CreatedAt: now, AnsweredAt: &now,
		AssistantID: r.body["id"].(string), VersionID: ver}
	aCall := call.Call{ID: ident.New("call"), AccountID: a.ID, Direction: call.Inbound, LineID: l.ID, From: aSes.PlatformHandle,
		To: l.Handle, Media: "audio", Status: call.StatusActive, HandledBy: call.HandledByAssistant, AssistantID: aSes.AssistantID,
		VersionID: ver, SessionID: aSes.ID, Platform: "pstn", PlatformCallID: "PC_assistant", StartedAt: now, AnsweredAt: &now}
	aSes.CallID = aCall.ID
	if err := s.SaveSession(ctx, aSes, aCall, nil); err != nil {
		t.Fatal(err)
	}
	body := `{"call_id":"` + aCall.ID + `","to":"+33142685300"}`
	sig, err := persona.SignReport([]byte(body), reportSecret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	refused("the assistant's transfer_call to FR", e.do("POST", persona.TransferPath, body, "Authorization", sig),
		"+33142685300", "is in FR")

	// The daily cap: the operator gives the account 5 minutes; the call above has been
	// under way for 6, so the next session is refused, and still once the call ended
	// (counted then from the day's usage).
	five := 5
	if _, err := s.SetOutbound(ctx, a.ID, account.Outbound{DailyOutboundMinutes: &five}); err != nil {
		t.Fatal(err)
	}
	refused("dial over the cap", dial("+14155550100"), "+14155550100", "daily outbound minutes cap is reached")
	if r := e.do("DELETE", "/v1/sessions/"+ses.ID, ""); r.status != 200 {
		t.Fatalf("end the call: %d %s", r.status, r.raw)
	}
	days, err := s.UsageDays(ctx, a.ID, []string{now.Format("2006-01-02")})
	if err != nil || len(days) != 1 || days[0].OutboundDurationMS < (6*time.Minute).Milliseconds() {
		t.Fatalf("usage of the day = %+v, %v; want the ended call's 6 minutes as outbound", days, err)
	}
	refused("dial over the cap, the call ended", dial("+14155550101"), "+14155550101", "daily outbound minutes cap is reached")
	ten := 10
	if _, err := s.SetOutbound(ctx, a.ID, account.Outbound{DailyOutboundMinutes: &ten}); err != nil {
		t.Fatal(err)
	}
	if r := dial("+14155550102"); r.status != 201 {
		t.Fatalf("dial under a raised cap: %d %s", r.status, r.raw)
	}
}
