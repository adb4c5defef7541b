package joinpage_test

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/bridgeline/bridgeline/shared/joinpage"
	"github.com/bridgeline/bridgeline/shared/joinpage/assets"
)

// TestURL: the token goes in the fragment, which no request carries, and comes back out
// as the page reads it.
func TestURL(t *testing.T) {
	tok := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjdXN0b21lci14In0.c2ln-_"
	u, err := url.Parse(joinpage.URL("https://api.example.com/join/call", tok))
	if err != nil {
		t.Fatal(err)
	}
	if u.Path != "/join/call" || u.RawQuery != "" {
		t.Errorf("join_url %s: path %q query %q, want the page and no query", u, u.Path, u.RawQuery)
	}
	frag, err := url.ParseQuery(u.Fragment)
	if err != nil || frag.Get("token") != tok {
		t.Errorf("join_url fragment %q carries token %q, want %q", u.Fragment, frag.Get("token"), tok)
	}
}

func TestBaseFor(t *testing.T) {
	plain := httptest.NewRequest("POST", "http://127.0.0.1:8080/v1/sessions", nil)
	proxied := httptest.NewRequest("POST", "http://abc.execute-api.eu-west-1.amazonaws.com/v1/sessions", nil)
	proxied.Header.Set("X-Forwarded-Proto", "https")
	direct := httptest.NewRequest("POST", "https://api.example.com/v1/sessions", nil)
	direct.TLS = &tls.ConnectionState{}
	for _, tc := range []struct {
		name, configured string
		r                *http.Request
		want             string
	}{
		{"local stack", "", plain, "http://127.0.0.1:8080/join/call"},
		{"behind API Gateway", "", proxied, "https://abc.execute-api.eu-west-1.amazonaws.com/join/call"},
		{"TLS", "", direct, "https://api.example.com/join/call"},
		{"configured", "https://call.example.com/talk", proxied, "https://call.example.com/talk"},
	} {
		if got := joinpage.BaseFor(tc.configured, tc.r); got != tc.want {
			t.Errorf("%s: BaseFor = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func get(t *testing.T, h http.Handler, path string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	rec.Header().Set("Request-Id", "req_test")
	h.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1:8080"+path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Result(), string(b)
}

// TestHandler: the page carries the deployment's rtc_url (escaped), a policy that loads
// scripts from the page and connects to that LiveKit only, and no referrer; its files
// are served with their types; anything else, and a bundle the build left out, is 404 in
// the API's error shape, saying what is missing.
func TestHandler(t *testing.T) {
	files := fstest.MapFS{
		"join.html":         {Data: []byte(`<meta name="bridgeline-rtc-url" content="{{.RTCURL}}"><script src="/join/join.js"></script>`)},
		"join.js":           {Data: []byte("'use strict';")},
		"join.css":          {Data: []byte("body{}")},
		"livekit-client.js": {Data: []byte("/* sdk */")},
	}
	h, err := joinpage.Handler(files, "wss://rtc.example.com")
	if err != nil {
		t.Fatal(err)
	}
	resp, body := get(t, h, "/join/call")
	if resp.StatusCode != 200 || !strings.Contains(body, `content="wss://rtc.example.com"`) {
		t.Fatalf("GET /join/call = %d %q, want the page with the rtc_url", resp.StatusCode, body)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self'", "connect-src 'self' wss://rtc.example.com https://rtc.example.com;", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if resp.Header.Get("Referrer-Policy") != "no-referrer" || resp.Header.Get("Cache-Control") != "no-store" ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("page headers %v, want text/html, no-referrer, no-store", resp.Header)
	}
	for path, typ := range map[string]string{"/join/join.js": "text/javascript", "/join/join.css": "text/css", "/join/livekit-client.js": "text/javascript",
		"/join/level-meter.js": "text/javascript"} {
		resp, _ := get(t, h, path)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), typ) {
			t.Errorf("GET %s = %d %s, want 200 %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), typ)
		}
	}
	notFound := func(h http.Handler, path, says string) {
		t.Helper()
		resp, body := get(t, h, path)
		var e struct {
			Error struct{ Type, Code, Message, RequestID string }
		}
		json.Unmarshal([]byte(strings.ReplaceAll(body, "request_id", "requestid")), &e)
		if resp.StatusCode != 404 || e.Error.Code != "resource_not_found" || e.Error.RequestID != "req_test" || !strings.Contains(e.Error.Message, says) {
			t.Errorf("GET %s = %d %s, want 404 resource_not_found saying %q", path, resp.StatusCode, body, says)
		}
	}
	notFound(h, "/join/join.html", "join.html")
	notFound(h, "/join/secret.txt", "secret.txt")
	notFound(h, "/join/other.js", "other.js")

	delete(files, "livekit-client.js")
	h, err = joinpage.Handler(files, "ws://127.0.0.1:7880")
	if err != nil {
		t.Fatal(err)
	}
	notFound(h, "/join/livekit-client.js", "not built")
	if resp, _ := get(t, h, "/join/call"); !strings.Contains(resp.Header.Get("Content-Security-Policy"), "ws://127.0.0.1:7880 http://127.0.0.1:7880;") {
		t.Errorf("local CSP %q, want the local LiveKit", resp.Header.Get("Content-Security-Policy"))
	}
	if _, err := joinpage.Handler(files, "https://not-a-ws-url"); err == nil {
		t.Error("Handler with an http rtc_url: no error")
	}
	none, _ := joinpage.Handler(nil, "wss://rtc.example.com")
	notFound(none, "/join/call", "not served here")
}

// TestAssets: the embedded page has what it needs: its script and styles, the hook the
// handler fills, and references to nothing outside /join/.
func TestAssets(t *testing.T) {
	page, err := fs.ReadFile(assets.FS, "join.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"{{.RTCURL}}", `src="/join/livekit-client.js"`, `src="/join/level-meter.js"`, `src="/join/join.js"`, `href="/join/join.css"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("join.html lacks %s", want)
		}
	}
	for _, name := range []string{"join.js", "join.css"} {
		if _, err := fs.Stat(assets.FS, name); err != nil {
			t.Errorf("assets: %v", err)
		}
	}
	if _, err := joinpage.Handler(assets.FS, "ws://127.0.0.1:7880"); err != nil {
		t.Errorf("Handler(assets.FS): %v", err)
	}
}

// TestPageNamesItsIcon: the page declares an inline icon, which the page's policy
// (img-src data:) allows, so a browser asks the API for no /favicon.ico, a 404 in every
// visitor's console otherwise.
func TestPageNamesItsIcon(t *testing.T) {
	b, err := fs.ReadFile(assets.FS, "join.html")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `<link rel="icon" href="data:,"`) {
		t.Error(`join.html declares no inline icon (<link rel="icon" href="data:,">)`)
	}
	h, err := joinpage.Handler(assets.FS, "wss://rtc.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if resp, _ := get(t, h, "/join/call"); !strings.Contains(resp.Header.Get("Content-Security-Policy"), "img-src 'self' data:") {
		t.Errorf("Content-Security-Policy %q does not allow the inline icon", resp.Header.Get("Content-Security-Policy"))
	}
}
