// Package joinpage is the hosted join page of web calls: the page a web call's join_url
// opens, where a visitor meets the assistant (its avatar, its voice, live captions of
// both sides) and can hang up, so a customer needs no front end of its own.
//
// join_url is the page's address with the participant token in its fragment
// (URL): a browser never sends a fragment to a server, so the token reaches no server's
// log, the page's included. The page reads the token's claims itself (its room, its
// expiry) and shows the account's branding (which the session service puts in the
// caller's token attributes) only once LiveKit accepted the token, from the attributes
// LiveKit gives the joined participant, never from claims it could not verify; it says
// what went wrong on an expired token or an ended call, asks for the
// microphone, and joins LiveKit at the rtc_url its server gives it (never one from the
// link, so a crafted link cannot send a visitor's microphone elsewhere).
//
// The page's files and the livekit-client browser bundle it runs are served from an
// fs.FS the caller gives (shared/joinpage/assets embeds them): only the processes that
// serve the page link them, not every function that builds the route table.
package joinpage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/bridgeline/bridgeline/shared/levelmeter"
)

// Path is where the page is served, on the API's own host; its files are beside it,
// under Dir.
const (
	Dir  = "/join/"
	Path = Dir + "call"
)

// Patterns are the page's one route: the page and its files, as one function serves
// them on AWS.
var Patterns = []string{"GET " + Dir + "{file}"}

// SDKFile is the livekit-client browser bundle among the page's files (built by make:
// scripts/build-join-page.sh).
const SDKFile = "livekit-client.js"

// URL is a web call's join_url: base (the page's address) with the participant token in
// the fragment.
func URL(base, token string) string {
	return base + "#" + url.Values{"token": {token}}.Encode()
}

// BaseFor is the page's address for a request to the API: configured when set (the
// deployment's JOIN_PAGE_URL), else the request's own scheme and host with Path. A
// request through TLS, or through a proxy that says it was (X-Forwarded-Proto: https,
// as API Gateway sets), is https.
func BaseFor(configured string, r *http.Request) string {
	if configured != "" {
		return configured
	}
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host + Path
}

var contentTypes = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
}

// Handler serves the page from files (join.html, join.js, join.css and SDKFile; nil
// answers 503 to everything), and the level meter the sim's page shares
// (levelmeter.File) and writes rtcURL, LiveKit's address as clients reach it,
// into the page. The page is never cached (a new deployment's page and scripts are
// seen at once); nothing it serves varies with the request, and no request it gets
// carries the token.
func Handler(files fs.FS, rtcURL string) (http.Handler, error) {
	mux := http.NewServeMux()
	if files == nil {
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			notFound(w, "the join page is not served here")
		})
		return mux, nil
	}
	raw, err := fs.ReadFile(files, "join.html")
	if err != nil {
		return nil, fmt.Errorf("joinpage: %w", err)
	}
	tpl, err := template.New("join.html").Parse(string(raw))
	if err != nil {
		return nil, fmt.Errorf("joinpage: join.html: %w", err)
	}
	var page bytes.Buffer
	if err := tpl.Execute(&page, struct{ RTCURL string }{rtcURL}); err != nil {
		return nil, fmt.Errorf("joinpage: join.html: %w", err)
	}
	rtc, err := url.Parse(rtcURL)
	if err != nil || (rtc.Scheme != "ws" && rtc.Scheme != "wss") || rtc.Host == "" {
		return nil, fmt.Errorf("joinpage: rtc_url %q is not a ws(s) URL", rtcURL)
	}
	// LiveKit's signalling (WebSocket) and its validate request (HTTP) go to rtc_url's
	// host; media (ICE) is not the CSP's.
	httpScheme := map[string]string{"ws": "http", "wss": "https"}[rtc.Scheme]
	csp := "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"media-src 'self' blob: mediastream:; connect-src 'self' " + rtc.Scheme + "://" + rtc.Host + " " +
		httpScheme + "://" + rtc.Host + "; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
	secure := func(w http.ResponseWriter, typ string) {
		h := w.Header()
		h.Set("Content-Type", typ)
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		// The token is in the fragment: no page it links to may learn the address.
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
	}
	mux.HandleFunc("GET "+Dir+"{file}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("file")
		if Dir+name == Path {
			secure(w, "text/html; charset=utf-8")
			// Scripts and styles from this page only, connections to LiveKit only.
			w.Header().Set("Content-Security-Policy", csp)
			w.Write(page.Bytes())
			return
		}
		if name == levelmeter.File {
			secure(w, contentTypes[".js"])
			w.Write(levelmeter.JS)
			return
		}
		typ, ok := contentTypes[path.Ext(name)]
		if !ok || name == "join.html" {
			notFound(w, fmt.Sprintf("no join page file %q", name))
			return
		}
		b, err := fs.ReadFile(files, name)
		switch {
		case errors.Is(err, fs.ErrNotExist) && name == SDKFile:
			notFound(w, "the join page's LiveKit client was not built into this deployment: run make (scripts/build-join-page.sh)")
			return
		case err != nil:
			notFound(w, fmt.Sprintf("no join page file %q", name))
			return
		}
		secure(w, typ)
		if name == SDKFile {
			// The pinned SDK changes only with a deployment; an hour's cache spares a
			// visitor who reloads its 600 kB.
			w.Header().Set("Cache-Control", "public, max-age=3600")
		}
		w.Write(b)
	})
	return mux, nil
}

// notFound answers 404 resource_not_found in the API's error shape, with the request id
// the API's middleware gave the answer.
func notFound(w http.ResponseWriter, message string) {
	var body struct {
		Error struct {
			Type      string `json:"type"`
			Code      string `json:"code"`
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	body.Error.Type, body.Error.Code, body.Error.Message = "invalid_request_error", "resource_not_found", message
	body.Error.RequestID = w.Header().Get("Request-Id")
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNotFound)
	json.NewEncoder(w).Encode(body)
}
