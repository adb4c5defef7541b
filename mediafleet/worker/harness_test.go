package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/livekit/protocol/auth"
	"github.com/livekit/protocol/livekit"
	protoLogger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/mediafleet/avatar"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver"
	"github.com/bridgeline/bridgeline/mediafleet/tts/voices"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// lkServer is where a livekit-server answers and the keys it takes.
type lkServer struct {
	URL, HTTPURL, APIKey, APISecret string
}

// One livekit-server serves the package; each test registers its workers under its own
// agent name, so tests never take each other's jobs.
var lk lkServer

// lkServerProc is that livekit-server's process, for its log when a test fails.
var lkServerProc *livekitserver.Server

// syncBuffer is a log's text, written from many goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// tail is the last n bytes written.
func (b *syncBuffer) tail(n int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.buf.Bytes()
	return string(out[max(0, len(out)-n):])
}

func TestMain(m *testing.M) {
	if os.Getenv(workerChildEnv) != "" {
		// BenchmarkWorkerCPU runs the worker in this binary, started again as its own
		// process.
		os.Exit(workerChild())
	}
	lksdk.SetLogger(protoLogger.GetDiscardLogger())
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	srv, err := livekitserver.Start(context.Background(), livekitserver.Config{Binary: os.Getenv("LIVEKIT_SERVER_BIN"),
		APIKey: "APIpersona", APISecret: "persona-test-secret-persona-test-secret-0",
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start livekit-server:", err)
		return 1
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Stop(ctx)
	}()
	lk, lkServerProc = serverOf(srv), srv
	return m.Run()
}

func serverOf(srv *livekitserver.Server) lkServer {
	return lkServer{URL: srv.WSURL(), HTTPURL: srv.HTTPURL(), APIKey: srv.Config().APIKey, APISecret: srv.Config().APISecret}
}

var seq atomic.Int64

// env is one test's world: the shared livekit-server, a report endpoint that runs the
// control plane's verifier, and a fresh agent name.
type env struct {
	t         testing.TB
	lk        lkServer
	agentName string
	rooms     *lksdk.RoomServiceClient
	api       *httptest.Server
	reports   chan persona.Report
	rejected  atomic.Int32
	// tokens counts the registration tokens handed out.
	tokens atomic.Int32
	// ownAvatar is the account's own avatar the control plane hands out
	// (persona.AvatarPath), its files served by this server; nil: none.
	ownAvatar atomic.Pointer[testAvatar]
	// sheetReads counts the sheets handed out.
	sheetReads atomic.Int32
	// logo is the account's logo the control plane hands out (persona.AvatarRequest's
	// Logo); nil: none. logoReads counts the logos handed out, avatarRequests the
	// requests at persona.AvatarPath.
	logo           atomic.Pointer[persona.BrandLogo]
	logoReads      atomic.Int32
	avatarRequests atomic.Int32
}

// testAvatar is an own avatar of the test account: its id, account and sheet.
type testAvatar struct {
	id, accountID string
	parts         []persona.AvatarSheetPart // URLs relative to the env's server
	files         map[string][]byte
}

// testReportSecret signs the workers' reports (PERSONA_REPORT_SECRET).
const testReportSecret = "worker-test-report-secret-0123456789"

func newEnv(t testing.TB) *env { return newEnvOn(t, lk) }

// newEnvOn is newEnv on another livekit-server.
func newEnvOn(t testing.TB, srv lkServer) *env {
	e := &env{
		t:         t,
		lk:        srv,
		agentName: fmt.Sprintf("persona-test-%d", seq.Add(1)),
		rooms:     lksdk.NewRoomServiceClient(srv.HTTPURL, srv.APIKey, srv.APISecret),
		reports:   make(chan persona.Report, 64),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+persona.ReportPath, func(w http.ResponseWriter, r *http.Request) {
		rep, err := persona.VerifyReport(r, testReportSecret)
		if err != nil {
			e.rejected.Add(1)
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		e.reports <- rep
		w.WriteHeader(http.StatusNoContent)
	})
	// The worker's registration token, as the control plane mints it: the worker is
	// given no LiveKit secret.
	mux.HandleFunc("POST "+persona.AgentTokenPath, func(w http.ResponseWriter, r *http.Request) {
		if err := persona.VerifyAgentTokenRequest(r, testReportSecret); err != nil {
			e.rejected.Add(1)
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		tok, err := persona.MintAgentToken(srv.APIKey, srv.APISecret, time.Now())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		e.tokens.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(tok)
	})
	// An own avatar's sheet, as the control plane answers it: the parts with URLs to
	// read them (here, this server's /test-assets/).
	mux.HandleFunc("POST "+persona.AvatarPath, func(w http.ResponseWriter, r *http.Request) {
		req, err := persona.VerifyAvatarRequest(r, testReportSecret)
		if err != nil {
			e.rejected.Add(1)
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		e.avatarRequests.Add(1)
		out := persona.AvatarSheet{ExpiresAt: time.Now().Add(15 * time.Minute)}
		if req.AvatarID != "" {
			a := e.ownAvatar.Load()
			if a == nil || a.id != req.AvatarID || a.accountID != req.AccountID {
				http.Error(w, "no such avatar", http.StatusNotFound)
				return
			}
			e.sheetReads.Add(1)
			out.ID = a.id
			for _, p := range a.parts {
				p.URL = e.api.URL + "/test-assets/" + a.id + "/" + p.Name
				out.Parts = append(out.Parts, p)
			}
		}
		if l := e.logo.Load(); req.Logo && l != nil {
			e.logoReads.Add(1)
			out.Logo = l
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("GET /test-assets/{id}/{part}", func(w http.ResponseWriter, r *http.Request) {
		a := e.ownAvatar.Load()
		if a == nil || a.id != r.PathValue("id") || a.files[r.PathValue("part")] == nil {
			http.NotFound(w, r)
			return
		}
		w.Write(a.files[r.PathValue("part")])
	})
	e.api = httptest.NewServer(mux)
	t.Cleanup(func() {
		e.api.Close()
		if n := e.rejected.Load(); n > 0 {
			t.Errorf("%d reports failed verification", n)
		}
	})
	return e
}

func (e *env) config(mod func(*worker.Config)) worker.Config {
	cfg := worker.Defaults()
	cfg.LiveKitURL = e.lk.URL
	cfg.ControlPlane, cfg.ReportSecret = e.api.URL, testReportSecret
	cfg.AgentName = e.agentName
	cfg.MaxJobs = 2
	if mod != nil {
		mod(&cfg)
	}
	return cfg
}

// startWorker runs an in-process worker until the test ends.
func (e *env) startWorker(mod func(*worker.Config)) *worker.Worker {
	e.t.Helper()
	return e.startWorkerWith(mod, worker.Options{})
}

func (e *env) startWorkerWith(mod func(*worker.Config), opts worker.Options) *worker.Worker {
	e.t.Helper()
	// Warnings go to stderr as they come; the whole log, debug included, is kept and
	// shown with livekit-server's when the test fails, so a failure in CI says why.
	kept := &syncBuffer{}
	log := slog.New(slog.NewMultiHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel()}),
		slog.NewTextHandler(kept, &slog.HandlerOptions{Level: slog.LevelDebug})))
	e.t.Cleanup(func() {
		if e.t.Failed() {
			e.t.Logf("worker log (the last 64 KiB):\n%s", kept.tail(64<<10))
			e.t.Logf("livekit-server log tail:\n%s", lkServerProc.LogTail(16<<10))
		}
	})
	cfg := e.config(mod)
	if opts.Voices == nil && cfg.TTS != "espeak" {
		// As cmd/persona-worker does: PERSONA_TTS=flite speaks the voice catalogue, whose
		// default voice is flite's, which the recogniser checking the greeting hears well.
		cat, err := voices.New(voices.Config{Logger: log})
		if err != nil {
			e.t.Fatal(err)
		}
		opts.Voices = cat.Voices()
	}
	w, err := worker.New(cfg, opts, log)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = w.Run(ctx)
	}()
	e.t.Cleanup(func() {
		cancel()
		<-done
	})
	wait(e.t, w.Registered(), "worker registration")
	return w
}

// call creates the room with the persona dispatch, as the control plane does on answer,
// and returns a caller token for it.
func (e *env) call(room string, job persona.Job) string {
	e.t.Helper()
	meta, err := json.Marshal(job)
	if err != nil {
		e.t.Fatal(err)
	}
	_, err = e.rooms.CreateRoom(context.Background(), &livekit.CreateRoomRequest{
		Name:   room,
		Agents: []*livekit.RoomAgentDispatch{{AgentName: e.agentName, Metadata: string(meta)}},
	})
	if err != nil {
		e.t.Fatalf("CreateRoom: %v", err)
	}
	e.t.Cleanup(func() {
		_, _ = e.rooms.DeleteRoom(context.Background(), &livekit.DeleteRoomRequest{Room: room})
	})
	tok, err := auth.NewAccessToken(e.lk.APIKey, e.lk.APISecret).SetIdentity(job.CallerIdentity).
		SetVideoGrant(&auth.VideoGrant{RoomJoin: true, Room: room}).SetValidFor(10 * time.Minute).ToJWT()
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

// nextReport waits for the next report of the call.
func (e *env) nextReport(callID string, within time.Duration) persona.Report {
	e.t.Helper()
	deadline := time.After(within)
	for {
		select {
		case r := <-e.reports:
			if r.CallID == callID {
				return r
			}
		case <-deadline:
			e.t.Fatalf("no report for %s within %v", callID, within)
		}
	}
}

// reportsUntilEnded collects a call's reports up to and including ended.
func (e *env) reportsUntilEnded(callID string, within time.Duration) []persona.Report {
	e.t.Helper()
	var out []persona.Report
	deadline := time.Now().Add(within)
	for {
		r := e.nextReport(callID, time.Until(deadline))
		out = append(out, r)
		if r.Kind == persona.ReportEnded {
			return out
		}
	}
}

func kinds(rs []persona.Report) []string {
	var k []string
	for _, r := range rs {
		k = append(k, r.Kind)
	}
	return k
}

func wait[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// eventually polls cond every 20 ms until it holds or within passes.
func eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// screens classifies a caller's decoded frames by their corner colour: the brand colour
// is the connecting screen, the avatar's backdrop the avatar.
type screens struct {
	brand, backdrop [3]uint8
	mu              sync.Mutex
	firstConnecting time.Time
	firstAvatar     time.Time
	connecting      int
	avatars         int
	other           int
	lastAvatar      *image.YCbCr
}

func newScreens(brandHex, avatarID string) *screens {
	b, _ := avatar.ParseColor(brandHex)
	a, _ := avatar.Lookup(avatarID)
	return &screens{brand: ycc(b.R, b.G, b.B), backdrop: ycc(a.Backdrop.R, a.Backdrop.G, a.Backdrop.B)}
}

func (s *screens) see(f callerbot.Frame) {
	c := cornerColour(f.Image)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case close3(c, s.brand):
		s.connecting++
		if s.firstConnecting.IsZero() {
			s.firstConnecting = f.At
		}
	case close3(c, s.backdrop):
		s.avatars++
		s.lastAvatar = f.Image
		if s.firstAvatar.IsZero() {
			s.firstAvatar = f.At
		}
	default:
		s.other++
	}
}

func (s *screens) counts() (connecting, avatars, other int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connecting, s.avatars, s.other
}

func ycc(r, g, b uint8) [3]uint8 {
	y, cb, cr := color.RGBToYCbCr(r, g, b)
	return [3]uint8{y, cb, cr}
}

// cornerColour averages the two top 8x8 corner blocks (the shirt can reach the bottom
// ones).
func cornerColour(img *image.YCbCr) [3]uint8 {
	w := img.Rect.Dx()
	var sum [3]int
	n := 0
	for _, o := range [][2]int{{2, 2}, {w - 10, 2}} {
		for y := o[1]; y < o[1]+8; y++ {
			for x := o[0]; x < o[0]+8; x++ {
				c := img.YCbCrAt(x, y)
				sum[0] += int(c.Y)
				sum[1] += int(c.Cb)
				sum[2] += int(c.Cr)
				n++
			}
		}
	}
	return [3]uint8{uint8(sum[0] / n), uint8(sum[1] / n), uint8(sum[2] / n)}
}

func close3(a, b [3]uint8) bool {
	for i := range a {
		if d := int(a[i]) - int(b[i]); d > 12 || d < -12 {
			return false
		}
	}
	return true
}

// logLevel is warn unless PERSONA_TEST_LOG=debug|info asks for more.
func logLevel() slog.Level {
	var l slog.Level = slog.LevelWarn
	if v := os.Getenv("PERSONA_TEST_LOG"); v != "" {
		_ = l.UnmarshalText([]byte(v))
	}
	return l
}
