// Package harness runs the control plane's session path on real parts for tests and
// benchmarks: livekit-server, the SQLite store, the sim platform, the sweeper and the
// whole HTTP stack (the same httpapi router and middleware as the local stack) on
// 127.0.0.1, with an account, its API key and two sim lines. Persona workers join on
// demand (StartWorker), and Tenant gives a test an account and lines of its own, so one
// stack can serve a whole test package.
package harness

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/livekit/protocol/livekit"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/bridgeline/bridgeline/mediafleet/livekitserver"
	"github.com/bridgeline/bridgeline/mediafleet/livekitsip"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/mediafleet/redisserver"
	"github.com/bridgeline/bridgeline/mediafleet/sipgateway"
	"github.com/bridgeline/bridgeline/mediafleet/sipvideo"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/avatars"
	"github.com/bridgeline/bridgeline/shared/config"
	"github.com/bridgeline/bridgeline/shared/controlplane"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/joinpage/assets"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/platform/simhook"
	sipplatform "github.com/bridgeline/bridgeline/shared/platform/sip"
	"github.com/bridgeline/bridgeline/shared/recordings"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/rtc/lkapi"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/siptrunk"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// Handles of the two sim lines every stack gets.
const (
	Line1 = "+15550100001"
	Line2 = "+15550100002"
)

// Options tune a stack.
type Options struct {
	// RingDelay is how long a dialled sim handle rings (default 10 ms).
	RingDelay time.Duration
	// RateLimit per API key, requests a second (0: off).
	RateLimit float64
	// Log receives the stack's logs (default: discarded).
	Log *slog.Logger
	// MaxDuration and DispatchTimeout are the session service's limits (0: its defaults).
	MaxDuration     time.Duration
	DispatchTimeout time.Duration
	// SweepEvery is how often the sweeper runs (default 1 s, as on the local stack).
	SweepEvery time.Duration
	// WrapRooms, when set, wraps LiveKit as the session service uses it (fault tests);
	// Stack.RTC stays the real client.
	WrapRooms func(session.Rooms) session.Rooms
	// MaxConcurrentSessions is an account's limit of live sessions (0: the default, 20).
	MaxConcurrentSessions int
	// Platforms are calling platforms beside the sim.
	Platforms []platform.Platform
	// SIP runs LiveKit's SIP bridge as make run does: Redis under livekit-server and
	// livekit-sip, the SIP gateway between them, and the sip platform in the control
	// plane (Stack.SIP).
	SIP bool
	// ToolClient posts the assistants' tool calls (default: the local stack's egress
	// rules, loopback allowed).
	ToolClient *http.Client
	// LocalDelivery runs the local stack's webhook delivery worker, so the tests'
	// endpoints get the events they subscribe to (call.incoming is asked either way).
	LocalDelivery bool
	// JoinTimeout is how long a web call waits for its caller (0: the default minute).
	JoinTimeout time.Duration
}

// Stack is a running control plane on real parts. A Tenant of it is a copy whose API key,
// account and lines are another account's; everything else is shared.
type Stack struct {
	URL       string // the API, http://127.0.0.1:port
	APIKey    string
	AccountID string
	Lines     map[string]line.Line // by handle
	// Handles are the handles of the account's two lines, in order (Line1, Line2 for the
	// stack's first account).
	Handles [2]string

	Store   *sqlite.Store
	LiveKit *livekitserver.Server
	RTC     *lkapi.Client
	Sim     *platformsim.Sim
	// SIP is the SIP bridge (Options.SIP); nil without it. Trunks keeps SIP trunks.
	SIP *livekitsip.Server
	// SIPVideo is the SIP video bridge beside it (mediafleet/sipvideo): phones whose
	// calls carry video call it.
	SIPVideo *sipvideo.Bridge
	Trunks   *siptrunk.Service
	Service  *session.Service
	API      *httpapi.API
	Client   *http.Client
	// ReportSecret signs the persona workers' reports (PERSONA_REPORT_SECRET).
	ReportSecret string
	// Recordings keeps the recorded calls' files as make run does: a folder whose signed
	// URLs the API serves on /recordings/ (GET /v1/calls/{id}/recording hands them out).
	// StartWorker gives it to a worker that brings no store of its own.
	Recordings *recordings.Folder

	shared *shared
}

// shared is what a stack's tenants share: what Close stops, and the LiveKit webhook log.
type shared struct {
	closers []func()
	log     *slog.Logger

	mu       sync.Mutex
	webhooks []*livekit.WebhookEvent
	handles  int
}

// SkipShort skips the test under -short: a whole stack (livekit-server, the sim,
// persona workers) is what `make check` leaves out.
func SkipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: needs the whole stack (livekit-server, the sim, persona workers)")
	}
}

// Start brings a stack up for the test and stops it when the test ends; under -short
// it skips the test instead.
func Start(t testing.TB, opts Options) *Stack {
	t.Helper()
	SkipShort(t)
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// New brings a stack up; Close stops it. For a stack shared by a test package, from
// TestMain.
func New(opts Options) (_ *Stack, err error) {
	ctx := context.Background()
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
		if os.Getenv("HARNESS_LOG") != "" {
			log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
	}
	sh := &shared{log: log}
	s := &Stack{shared: sh}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	dir, err := os.MkdirTemp("", "harness-")
	if err != nil {
		return nil, err
	}
	sh.closers = append(sh.closers, func() { os.RemoveAll(dir) })

	// The API's address must be known before livekit-server starts (its webhook URL), so
	// the server starts first with a handler filled in below.
	var handler atomic.Value
	handler.Store(http.Handler(http.NotFoundHandler()))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handler.Load().(http.Handler).ServeHTTP(w, r)
	}))
	sh.closers = append(sh.closers, srv.Close)

	st, err := sqlite.Open(ctx, filepath.Join(dir, "bridgeline.db"))
	if err != nil {
		return nil, err
	}
	sh.closers = append(sh.closers, func() { st.Close() })

	lkcfg := livekitserver.Config{Binary: os.Getenv("LIVEKIT_SERVER_BIN"),
		Dir: filepath.Join(dir, "livekit"), APIKey: "APItest" + randHex(6), APISecret: randHex(32),
		WebhookURLs: []string{srv.URL + httpapi.LiveKitWebhookPath}, WebhookEvents: rtc.ReceivedEvents,
	}
	var redis *redisserver.Server
	if opts.SIP {
		if redis, err = redisserver.Start(ctx, redisserver.Config{Dir: filepath.Join(dir, "redis")}); err != nil {
			return nil, fmt.Errorf("start redis: %w", err)
		}
		sh.closers = append(sh.closers, func() {
			c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			redis.Stop(c)
		})
		lkcfg.RedisAddress, lkcfg.RedisPassword = redis.Addr(), redis.Password()
	}
	lk, err := livekitserver.Start(context.Background(), lkcfg)
	if err != nil {
		return nil, fmt.Errorf("start livekit-server: %w", err)
	}
	sh.closers = append(sh.closers, func() {
		// livekit-server looks for remaining participants only every 5 s: a test has no
		// use for a long drain.
		c, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		lk.Stop(c)
	})
	lkc := lk.Config()
	rooms, err := lkapi.New(lkapi.Config{URL: lk.HTTPURL(), PublicURL: lk.WSURL(), APIKey: lkc.APIKey, APISecret: lkc.APISecret})
	if err != nil {
		return nil, err
	}
	ring := opts.RingDelay
	if ring == 0 {
		ring = 10 * time.Millisecond
	}
	simulator, err := platformsim.New(platformsim.Config{NotifyURL: srv.URL + simhook.Path, Secret: "sim-test-secret", RingDelay: ring, Log: log,
		ClientSDK: os.Getenv(platformsim.ClientSDKEnv)})
	if err != nil {
		return nil, err
	}
	sh.closers = append(sh.closers, func() {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		simulator.Close(c)
	})

	// The control plane is the one every process assembles (controlplane.New), on the
	// tests' parts: SQLite, this livekit-server, the in-process sim. The tests' webhook
	// receivers run on 127.0.0.1.
	cfg := config.Defaults()
	cfg.LiveKitURL, cfg.LiveKitPublicURL, cfg.LiveKitAPIKey, cfg.LiveKitSecret = lk.HTTPURL(), lk.WSURL(), lkc.APIKey, lkc.APISecret
	cfg.PersonaReportSecret = randHex(32)
	cfg.RateLimit, cfg.RateBurst = opts.RateLimit, max(1, opts.RateLimit*2)
	cfg.Webhooks.AllowLoopback = true
	// The models a version may name (LLM_MODELS): the tests' fake model servers answer
	// any name, and these are the ones the tests pick.
	cfg.Models = []string{"llama3.1:8b", "gpt-4o-mini"}
	// Of them, the one that accepts images (LLM_VISION_MODELS), as a vision version needs.
	cfg.VisionModels = []string{"gpt-4o-mini"}
	// The languages a version may have (STT_LANGUAGES): the tests' Deepgram fake hears
	// Spanish, and the espeak-ng Spanish voices speak it.
	cfg.Languages = []string{"en", "es"}
	if opts.MaxDuration > 0 {
		cfg.MaxSession = opts.MaxDuration
	}
	if opts.DispatchTimeout > 0 {
		cfg.AssistantDispatchTimeout = opts.DispatchTimeout
	}
	if opts.MaxConcurrentSessions > 0 {
		cfg.MaxConcurrentSessions = opts.MaxConcurrentSessions
	}
	platforms := append([]platform.Platform{simulator}, opts.Platforms...)
	var svcRooms session.Rooms = rooms
	if opts.WrapRooms != nil {
		svcRooms = opts.WrapRooms(rooms)
	}
	deps := controlplane.Deps{Store: st, Rooms: svcRooms, LiveKit: rooms,
		Platforms: platforms, SimSecret: "sim-test-secret", ToolClient: opts.ToolClient, LocalDelivery: opts.LocalDelivery, Log: log, JoinPage: assets.FS,
		JoinTimeout: opts.JoinTimeout}
	recs := &recordings.Folder{Dir: filepath.Join(dir, "recordings"), BaseURL: srv.URL, Secret: []byte(randHex(32))}
	deps.Recordings = recs
	// The accounts' own avatars' images, as make run keeps them: a folder whose signed
	// URLs the API serves on /avatar-assets/.
	avatarFiles := &avatars.Folder{Dir: filepath.Join(dir, "avatars"), BaseURL: srv.URL, Secret: []byte(randHex(32))}
	deps.AvatarAssets = avatarFiles
	deps.Routes = slices.Concat(httpapi.Passthrough("recordings-file", recs.Handler(), recordings.FolderPatterns...),
		httpapi.Passthrough("avatar-assets-file", avatarFiles.Handler(), avatars.FolderPattern))
	var sipServer *livekitsip.Server
	var sipVideo *sipvideo.Bridge
	if opts.SIP {
		if sipServer, sipVideo, err = startSIP(ctx, sh, dir, lk, rooms, redis, srv.URL, log); err != nil {
			return nil, err
		}
		cfg.SIPPublicHost, cfg.SIPPublicPort = "127.0.0.1", sipServer.Config().SIPPort
		_, vport, _ := net.SplitHostPort(sipVideo.SIPAddr())
		cfg.SIPVideoPublicPort, _ = strconv.Atoi(vport)
		deps.SIP, deps.SIPSecret, deps.SIPVideo = rooms, sipTestSecret, sipVideo
	}
	cp, err := controlplane.New(cfg, deps)
	if err != nil {
		return nil, err
	}
	svc, api := cp.Sessions, cp.API
	apiHandler, simHandler := api.Handler(), simulator.Handler()
	handler.Store(http.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/sim/") {
			simHandler.ServeHTTP(w, r)
			return
		}
		if r.URL.Path == httpapi.LiveKitWebhookPath {
			defer sh.recordWebhook(r, sh.readBody(r))
		}
		apiHandler.ServeHTTP(w, r)
	})))

	sweepCtx, stopSweep := context.WithCancel(context.Background())
	swept := make(chan struct{})
	every := opts.SweepEvery
	if every <= 0 {
		every = time.Second
	}
	go func() {
		defer close(swept)
		cp.RunSweeper(sweepCtx, every)
	}()
	sh.closers = append(sh.closers, func() { stopSweep(); <-swept })
	campaigned := make(chan struct{})
	go func() {
		defer close(campaigned)
		cp.RunCampaigns(sweepCtx)
	}()
	sh.closers = append(sh.closers, func() { stopSweep(); <-campaigned })
	if cp.Delivery != nil {
		delivered := make(chan struct{})
		go func() {
			defer close(delivered)
			if err := cp.RunDelivery(sweepCtx); err != nil && sweepCtx.Err() == nil {
				log.Error("webhook delivery worker", "err", err)
			}
		}()
		sh.closers = append(sh.closers, func() { stopSweep(); <-delivered })
	}

	*s = Stack{URL: srv.URL, Store: st, LiveKit: lk, RTC: rooms, Sim: simulator, SIP: sipServer, SIPVideo: sipVideo, Trunks: cp.Trunks, Service: svc, API: api,
		Client: &http.Client{Timeout: 60 * time.Second}, ReportSecret: cfg.PersonaReportSecret, Recordings: recs, shared: sh}
	if err := s.addAccount(ctx, "Test Co", [2]string{Line1, Line2}); err != nil {
		return nil, err
	}
	return s, nil
}

// sipTestSecret signs the SIP gateway's notifications in tests.
const sipTestSecret = "sip-test-secret-0123456789abcdef"

// startSIP runs the SIP gateway on a loopback port, and livekit-sip and the SIP video
// bridge joining rooms through it, on redis with livekit-server; the gateway notifies
// the API at apiURL.
// SIPVideoLabel is the value of the profiler label "component" on the SIP video
// bridge's goroutines.
const SIPVideoLabel = "sip-video"

func startSIP(ctx context.Context, sh *shared, dir string, lk *livekitserver.Server, rooms *lkapi.Client, redis *redisserver.Server, apiURL string, log *slog.Logger) (*livekitsip.Server, *sipvideo.Bridge, error) {
	bin, err := livekitsip.ResolveBinary(ctx, os.Getenv("LIVEKIT_SIP_BIN"))
	if err != nil {
		return nil, nil, fmt.Errorf("livekit-sip is not available: %w", err)
	}
	lkc := lk.Config()
	gw, err := sipgateway.New(sipgateway.Config{LiveKitURL: lk.WSURL(), APIKey: lkc.APIKey, APISecret: lkc.APISecret,
		NotifyURL: apiURL + sipplatform.Path, Secret: sipTestSecret, Log: log.With("component", "sip-gateway")})
	if err != nil {
		return nil, nil, err
	}
	gwSrv := httptest.NewServer(gw.Handler())
	sh.closers = append(sh.closers, func() { gwSrv.CloseClientConnections(); gwSrv.Close(); gw.Close() })
	var video *sipvideo.Bridge
	// The bridge's goroutines, and those they start, carry a profiler label, so that a
	// benchmark can tell its CPU from the rest of this process's (SIPVideoLabel).
	pprof.Do(ctx, pprof.Labels("component", SIPVideoLabel), func(context.Context) {
		video, err = sipvideo.Start(sipvideo.Config{SIPAddr: "127.0.0.1:0", GatewayURL: "ws://" + gwSrv.Listener.Addr().String(),
			APIKey: lkc.APIKey, APISecret: lkc.APISecret, LiveKit: rooms, Log: log.With("component", "sip-video")})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("start the SIP video bridge: %w", err)
	}
	sh.closers = append(sh.closers, video.Close)
	sc, err := livekitsip.Start(context.Background(), livekitsip.Config{Binary: bin, Dir: filepath.Join(dir, "sip"),
		APIKey: lkc.APIKey, APISecret: lkc.APISecret, WSURL: "ws://" + gwSrv.Listener.Addr().String(),
		RedisAddress: redis.Addr(), RedisPassword: redis.Password(), LogLevel: "debug", Nice: livekitsip.TestNice})
	if err != nil {
		return nil, nil, fmt.Errorf("start livekit-sip: %w", err)
	}
	sh.closers = append(sh.closers, func() {
		c, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		sc.Stop(c)
	})
	return sc, video, nil
}

// Close stops everything the stack started, the last started first.
func (s *Stack) Close() {
	for i := len(s.shared.closers) - 1; i >= 0; i-- {
		s.shared.closers[i]()
	}
	s.shared.closers = nil
}

// addAccount makes the stack's account: its key and two sim lines.
func (s *Stack) addAccount(ctx context.Context, name string, handles [2]string) error {
	acct, key, err := (&account.Service{Store: s.Store, Now: time.Now}).Create(ctx, name, false)
	if err != nil {
		return err
	}
	lines := line.Service{Store: s.Store, Assistants: s.Store, Now: time.Now}
	byHandle := map[string]line.Line{}
	for _, h := range handles {
		l, err := lines.Provision(ctx, acct.ID, sim.Name, h, "line "+h)
		if err != nil {
			return err
		}
		byHandle[h] = l
	}
	s.APIKey, s.AccountID, s.Lines, s.Handles = key, acct.ID, byHandle, handles
	return nil
}

// Tenant is the stack as another, fresh account sees it: its own API key and two sim
// lines of its own (handles +1555020xxxx), in assistant mode with no assistant. Tests that
// share a stack take one each, so their lines' settings and webhook endpoints never meet.
func (s *Stack) Tenant(t testing.TB) *Stack {
	t.Helper()
	s.shared.mu.Lock()
	n := s.shared.handles
	s.shared.handles += 2
	s.shared.mu.Unlock()
	cp := *s
	handles := [2]string{fmt.Sprintf("+1555020%04d", n), fmt.Sprintf("+1555020%04d", n+1)}
	if err := cp.addAccount(context.Background(), "Tenant Co", handles); err != nil {
		t.Fatal(err)
	}
	return &cp
}

// Worker is a persona worker running in the test process.
type Worker struct {
	*worker.Worker
	stop func()
}

// Stop ends the worker (its running calls end with worker_shutdown) and waits for it.
func (w *Worker) Stop() { w.stop() }

// StartWorker runs a persona worker in this process against the stack, as `make run`
// does, until the test ends or Stop; mod adjusts its configuration (the default MaxJobs
// and verify timeout) and opts its parts. It returns once LiveKit has registered the worker.
func (s *Stack) StartWorker(t testing.TB, mod func(*worker.Config), opts worker.Options) *Worker {
	t.Helper()
	cfg := worker.Defaults()
	// As a deployed worker: no LiveKit secret; its registration token comes from the
	// control plane's route.
	cfg.LiveKitURL, cfg.ControlPlane = s.LiveKit.WSURL(), s.URL
	cfg.ReportSecret = s.ReportSecret
	if mod != nil {
		mod(&cfg)
	}
	if opts.Recordings == nil && s.Recordings != nil {
		opts.Recordings = s.Recordings
	}
	w, err := worker.New(cfg, opts, s.shared.log.With("component", "persona-worker"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx)
	}()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	select {
	case <-w.Registered():
	case <-done:
		t.Fatal("persona worker stopped before it registered")
	case <-time.After(20 * time.Second):
		t.Fatal("persona worker did not register with livekit-server")
	}
	return &Worker{Worker: w, stop: stop}
}

// readBody reads a request's body and puts it back for the handler.
func (sh *shared) readBody(r *http.Request) []byte {
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return nil
	}
	return body
}

// recordWebhook keeps a LiveKit webhook once the API has handled it (the API verifies
// it; this only reads it).
func (sh *shared) recordWebhook(r *http.Request, body []byte) {
	var ev livekit.WebhookEvent
	if protojson.Unmarshal(body, &ev) == nil {
		sh.mu.Lock()
		sh.webhooks = append(sh.webhooks, &ev)
		sh.mu.Unlock()
	}
}

// Webhooks returns the LiveKit webhooks the API has handled for a room, in order.
func (s *Stack) Webhooks(room string) []*livekit.WebhookEvent {
	s.shared.mu.Lock()
	defer s.shared.mu.Unlock()
	var out []*livekit.WebhookEvent
	for _, ev := range s.shared.webhooks {
		if ev.GetRoom().GetName() == room {
			out = append(out, ev)
		}
	}
	return out
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)[:n]
}

// Do sends an authenticated JSON request (body nil sends none) and decodes a JSON answer
// into out (nil skips). It returns the status.
func (s *Stack) Do(t testing.TB, method, path string, body, out any) int {
	t.Helper()
	status, raw, err := s.Request(method, path, body, s.APIKey)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
	return status
}

// Request is Do without a test: it returns the status and raw body.
func (s *Stack) Request(method, path string, body any, key string) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// WaitFor polls cond every 20 ms until it holds, failing the test after limit.
func WaitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Must fails the test on a status other than want.
func Must(t testing.TB, got, want int, what string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: status %d, want %d", what, got, want)
	}
}

// NewAccount makes another account with no lines and returns its API key.
func NewAccount(t testing.TB, s *Stack) string {
	t.Helper()
	_, key, err := (&account.Service{Store: s.Store, Now: time.Now}).Create(context.Background(), "Other Co", false)
	if err != nil {
		t.Fatal(err)
	}
	return key
}
