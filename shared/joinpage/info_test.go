package joinpage_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/joinpage"
	"github.com/bridgeline/bridgeline/shared/lktoken"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// TestInfo: the page's info verifies the token before it answers: the account's
// branding as it is now (its logo as a data: URL), the assistant's name from the signed
// attributes, and whether the call can be joined; a forged, expired or malformed token
// gets nothing but a refusal.
func TestInfo(t *testing.T) {
	ctx := t.Context()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "info.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	a, _, err := (&account.Service{Store: s, Now: time.Now}).Create(ctx, "Acme Dental", false)
	if err != nil {
		t.Fatal(err)
	}
	logo := account.Logo{LogoInfo: account.LogoInfo{ContentType: "image/png", Bytes: 3}, Data: []byte{1, 2, 3}}
	if _, err := s.SetBranding(ctx, a.ID, account.BrandingChange{BrandColor: ptr("#0a7b83"), SupportURL: ptr("https://acme.example/help"), Logo: &logo}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	ses := session.Session{ID: ident.New("ses"), AccountID: a.ID, Mode: session.ModeAssistant, Media: "video",
		Status: session.StatusRinging, CreatedAt: now, Caller: "customer-x", Slot: true}
	c := call.Call{ID: ident.New("call"), AccountID: a.ID, Direction: call.Inbound, Status: call.StatusRinging,
		SessionID: ses.ID, Platform: "web", StartedAt: now}
	ses.CallID = c.ID
	if err := s.CreateSession(ctx, ses, c, nil, 5); err != nil {
		t.Fatal(err)
	}
	const key, secret = "devkey", "a-secret-of-thirty-two-characters-or-more"
	h := joinpage.InfoHandler(s, lktoken.KeyPair(key, secret))
	token := func(secret, room string, at time.Time) string {
		yes := true
		tok, err := lktoken.Sign(key, secret, lktoken.Claims{RegisteredClaims: jwt.RegisteredClaims{Subject: "customer-x"},
			Video:      &lktoken.VideoGrant{RoomJoin: true, Room: room, CanPublish: &yes},
			Attributes: map[string]string{session.AttributeBrandName: "Evil Bank", session.AttributeAssistantName: "Front desk"}}, at, 10*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	ask := func(body string) (int, map[string]any) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, joinpage.InfoPath, strings.NewReader(body)))
		var out map[string]any
		json.Unmarshal(rec.Body.Bytes(), &out)
		return rec.Code, out
	}
	code, got := ask(`{"token": "` + token(secret, ses.ID, time.Now()) + `"}`)
	b, _ := got["brand"].(map[string]any)
	if code != 200 || got["state"] != "ready" || got["media"] != "video" || got["assistant"] != "Front desk" || b == nil ||
		b["name"] != "Acme Dental" || b["color"] != "#0a7b83" || b["support_url"] != "https://acme.example/help" || b["logo"] != "data:image/png;base64,AQID" {
		t.Fatalf("info = %d %v, want the account's branding as stored (not the token's name), the assistant, ready", code, got)
	}
	for _, tc := range []struct{ name, body, code string }{
		{"forged", `{"token": "` + token(strings.Repeat("x", 40), ses.ID, time.Now()) + `"}`, "parameter_invalid"},
		{"expired", `{"token": "` + token(secret, ses.ID, time.Now().Add(-time.Hour)) + `"}`, "session_ended"},
		{"malformed", `{"token": "nope"}`, "parameter_invalid"},
		{"no body", ``, "parameter_invalid"},
	} {
		code, got := ask(tc.body)
		e, _ := got["error"].(map[string]any)
		if code < 400 || e == nil || e["code"] != tc.code || got["brand"] != nil {
			t.Errorf("%s token: info = %d %v, want a %s refusal and no branding", tc.name, code, got, tc.code)
		}
	}
	// The call is over: the page says so on load.
	ses.Status, ses.Revision = session.StatusEnded, 1
	c.Status, c.Revision = call.StatusEnded, 1
	if err := s.SaveSession(ctx, ses, c, nil); err != nil {
		t.Fatal(err)
	}
	if code, got := ask(`{"token": "` + token(secret, ses.ID, time.Now()) + `"}`); code != 200 || got["state"] != "ended" {
		t.Errorf("info of an ended call = %d %v, want state ended", code, got)
	}
	if code, got := ask(`{"token": "` + token(secret, "ses_gone", time.Now()) + `"}`); code != 200 || got["state"] != "ended" {
		t.Errorf("info of a session that is gone = %d %v, want state ended", code, got)
	}
}

func ptr[T any](v T) *T { return &v }
