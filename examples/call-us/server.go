package main

import (
	"crypto/rand"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	bridgeline "github.com/bridgeline/bridgeline/sdk/go"
)

//go:embed static/index.html static/app.js static/style.css
var static embed.FS

// Config is the backend's configuration, from the environment (names in brackets).
type Config struct {
	Addr   string // [ADDR] where this backend listens; default 127.0.0.1:3000
	APIURL string // [BRIDGELINE_API_URL] Bridgeline's API; default http://127.0.0.1:8080
	APIKey string // [BRIDGELINE_API_KEY] your secret API key; required, never sent to a browser
	// Handle is the platform handle each "call us" click dials: your agent, desk or bot.
	Handle string // [CALL_US_HANDLE]
	// AssistantID is the Bridgeline assistant a "talk to our assistant" click puts the
	// visitor on a web call with. At least one of Handle and AssistantID is required.
	AssistantID string // [CALL_US_ASSISTANT_ID]
	LineID      string // [CALL_US_LINE_ID] the line to call from; default: the account's first line
	Media       string // [CALL_US_MEDIA] video (default) or audio
	// ClientSDK is livekit-client's browser bundle, served to the page. Default: the one
	// scripts/install-browser.sh installs under .cache/node.
	ClientSDK string // [LIVEKIT_CLIENT_JS]
}

// ConfigFromEnv reads the configuration through getenv (os.Getenv in main).
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		Addr: getenv("ADDR"), APIURL: getenv("BRIDGELINE_API_URL"), APIKey: getenv("BRIDGELINE_API_KEY"),
		Handle: getenv("CALL_US_HANDLE"), AssistantID: getenv("CALL_US_ASSISTANT_ID"), LineID: getenv("CALL_US_LINE_ID"), Media: getenv("CALL_US_MEDIA"),
		ClientSDK: getenv("LIVEKIT_CLIENT_JS"),
	}
	if c.Addr == "" {
		c.Addr = "127.0.0.1:3000"
	}
	if c.APIURL == "" {
		c.APIURL = "http://127.0.0.1:8080"
	}
	if c.Media == "" {
		c.Media = "video"
	}
	if c.ClientSDK == "" {
		c.ClientSDK = findClientSDK()
	}
	return c, c.Validate()
}

// Validate reports what is missing or wrong.
func (c Config) Validate() error {
	var errs []error
	if c.APIKey == "" {
		errs = append(errs, errors.New("BRIDGELINE_API_KEY is required"))
	}
	if strings.TrimSpace(c.Handle) == "" && c.AssistantID == "" {
		errs = append(errs, errors.New("CALL_US_HANDLE (the handle \"Call us\" dials) or CALL_US_ASSISTANT_ID (the assistant \"Talk to our assistant\" puts the visitor with) is required"))
	}
	if c.AssistantID != "" && !strings.HasPrefix(c.AssistantID, "asst_") {
		errs = append(errs, fmt.Errorf("CALL_US_ASSISTANT_ID %q is not an assistant id (asst_...)", c.AssistantID))
	}
	if c.Media != "video" && c.Media != "audio" {
		errs = append(errs, errors.New("CALL_US_MEDIA must be video or audio"))
	}
	if u, err := url.Parse(c.APIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("BRIDGELINE_API_URL %q is not an http(s) URL", c.APIURL))
	}
	if c.ClientSDK == "" {
		errs = append(errs, errors.New("the LiveKit client SDK is not installed: run `bash scripts/install-browser.sh` or set LIVEKIT_CLIENT_JS"))
	}
	return errors.Join(errs...)
}

// findClientSDK looks for .cache/node/node_modules/livekit-client/dist/livekit-client.umd.js
// in the working directory and the folders above it.
func findClientSDK() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		p := filepath.Join(dir, ".cache", "node", "node_modules", "livekit-client", "dist", "livekit-client.umd.js")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Server is the "call us" backend: it serves the page, starts a Bridgeline session per
// click and ends it on hang-up. The API key stays here; the browser gets only what it
// needs to join the one room.
type Server struct {
	cfg Config
	api *bridgeline.Client // the Go SDK: API key, retries reusing the Idempotency-Key
	log *slog.Logger

	mu sync.Mutex
	// ours holds the sessions this backend started, until their token expires, so a
	// browser can hang up only a call it was given.
	ours map[string]time.Time
}

// NewServer makes the backend.
func NewServer(cfg Config, log *slog.Logger) *Server {
	api, err := bridgeline.New(strings.TrimRight(cfg.APIURL, "/"), cfg.APIKey, bridgeline.Options{
		HTTPClient: &http.Client{Timeout: 20 * time.Second}})
	if err != nil {
		// New refuses only a URL that is not http(s) and an empty key, which Validate has
		// refused first.
		panic(fmt.Sprintf("call-us: %v", err))
	}
	return &Server{cfg: cfg, api: api, log: log, ours: map[string]time.Time{}}
}

// Handler serves the page and its API routes:
//
//	POST /api/call       -> Bridgeline POST /v1/sessions dialling Handle; answers {session_id, rtc_url, participant_token, expires_at}
//	POST /api/assistant  -> Bridgeline POST /v1/sessions, a web call with AssistantID (no handle): the same four fields,
//	                        the token the visitor's own (it publishes camera and microphone)
//	POST /api/hangup     {session_id} -> Bridgeline DELETE /v1/sessions/{id}
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.file("static/index.html", "text/html; charset=utf-8"))
	mux.HandleFunc("GET /app.js", s.file("static/app.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /style.css", s.file("static/style.css", "text/css; charset=utf-8"))
	mux.HandleFunc("GET /livekit-client.umd.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		http.ServeFile(w, r, s.cfg.ClientSDK)
	})
	mux.HandleFunc("POST /api/call", s.call)
	mux.HandleFunc("POST /api/assistant", s.assistant)
	mux.HandleFunc("POST /api/hangup", s.hangup)
	return mux
}

func (s *Server) file(name, typ string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, err := static.ReadFile(name)
		if err != nil {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", typ)
		w.Header().Set("Cache-Control", "no-store")
		w.Write(b)
	}
}

// joinInfo is everything the browser gets: the room's address, the one-room token and
// when it expires, and the session id to hang up with.
type joinInfo struct {
	SessionID        string `json:"session_id"`
	RTCURL           string `json:"rtc_url"`
	ParticipantToken string `json:"participant_token"`
	ExpiresAt        string `json:"expires_at"`
}

func (s *Server) call(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Handle == "" {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "calls to our team are not set up here (CALL_US_HANDLE)"})
		return
	}
	mode := bridgeline.SessionCreateModeHuman
	s.start(w, r, bridgeline.SessionCreate{PlatformHandle: s.cfg.Handle, Mode: &mode})
}

// assistant starts a web call with the assistant: no handle, so Bridgeline dials nothing
// and the visitor's browser, joining with the returned token, is the caller.
func (s *Server) assistant(w http.ResponseWriter, r *http.Request) {
	if s.cfg.AssistantID == "" {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "the assistant is not set up here (CALL_US_ASSISTANT_ID)"})
		return
	}
	mode := bridgeline.SessionCreateModeAssistant
	s.start(w, r, bridgeline.SessionCreate{AssistantId: &s.cfg.AssistantID, Mode: &mode})
}

// start creates the session req describes, with the configured media and line, and
// answers the browser the four fields joining needs.
func (s *Server) start(w http.ResponseWriter, r *http.Request, req bridgeline.SessionCreate) {
	media := bridgeline.SessionCreateMedia(s.cfg.Media)
	req.Media = &media
	if s.cfg.LineID != "" {
		req.LineId = &s.cfg.LineID
	}
	// A fresh Idempotency-Key per click: the SDK retries this one click's POST with it, so
	// a retry cannot start a second call.
	ses, err := s.api.CreateSession(r.Context(), req, bridgeline.WithIdempotencyKey(randomKey()))
	if err != nil || ses.SessionId == "" || ses.ParticipantToken == "" {
		s.log.Error("start session", "err", err)
		writeJSON(w, http.StatusBadGateway, map[string]string{"error": "could not start the call; try again"})
		return
	}
	got := joinInfo{SessionID: ses.SessionId, RTCURL: ses.RtcUrl, ParticipantToken: ses.ParticipantToken,
		ExpiresAt: ses.ExpiresAt.UTC().Format("2006-01-02T15:04:05.000Z07:00")}
	now := time.Now()
	s.mu.Lock()
	for id, until := range s.ours {
		if now.After(until) {
			delete(s.ours, id)
		}
	}
	s.ours[got.SessionID] = ses.ExpiresAt
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, got)
}

func (s *Server) hangup(w http.ResponseWriter, r *http.Request) {
	var body struct {
		SessionID string `json:"session_id"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10)).Decode(&body); err != nil || body.SessionID == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "body must be {\"session_id\": \"ses_...\"}"})
		return
	}
	s.mu.Lock()
	_, ok := s.ours[body.SessionID]
	delete(s.ours, body.SessionID)
	s.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such call"})
		return
	}
	if _, err := s.api.DeleteSession(r.Context(), body.SessionID); err != nil {
		s.log.Error("end session", "session_id", body.SessionID, "err", err)
		writeJSON(w, http.StatusBadGateway, map[string]string{"error": "could not end the call"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ended"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func randomKey() string {
	b := make([]byte, 16)
	rand.Read(b)
	return "call-us-" + hex.EncodeToString(b)
}
