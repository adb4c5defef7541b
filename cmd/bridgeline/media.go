package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/engines"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver"
	"github.com/bridgeline/bridgeline/mediafleet/livekitsip"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/mediafleet/redisserver"
	"github.com/bridgeline/bridgeline/mediafleet/sipgateway"
	"github.com/bridgeline/bridgeline/mediafleet/sipvideo"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/avatars"
	"github.com/bridgeline/bridgeline/shared/config"
	"github.com/bridgeline/bridgeline/shared/controlplane"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/joinpage/assets"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/platform/simhook"
	sipplatform "github.com/bridgeline/bridgeline/shared/platform/sip"
	"github.com/bridgeline/bridgeline/shared/recordings"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/rtc/lkapi"
	"github.com/bridgeline/bridgeline/shared/secretbox"
	"github.com/bridgeline/bridgeline/shared/store"
)

// sweepEvery is how often the local stack sweeps sessions past their limits.
const sweepEvery = time.Second

// startMedia starts the local stack's parts (Redis, livekit-server and LiveKit's SIP
// bridge unless SIP_PORT=off, the simulated platform, persona workers), assembles the control plane over them (controlplane.New, with the
// local delivery worker over the store's outbox) and runs its delivery worker and
// sweeper; the sim's /sim/ API joins the route table. The returned stop drains them in
// order.
func startMedia(ctx context.Context, cfg config.Config, s store.Store, log *slog.Logger) (*controlplane.ControlPlane, func(), error) {
	var stops []func()
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	fail := func(err error) (*controlplane.ControlPlane, func(), error) { stop(); return nil, nil, err }

	apiURL := "http://" + cfg.Addr
	lkConfig := livekitserver.Config{
		Dir: filepath.Join(cfg.DataDir, "livekit"), APIKey: cfg.LiveKitAPIKey, APISecret: cfg.LiveKitSecret,
		Port: cfg.LiveKitPort, RTCTCPPort: cfg.LiveKitTCPPort, RTCUDPPort: cfg.LiveKitUDPPort, Binary: cfg.LiveKitBinary,
		WebhookURLs: []string{apiURL + httpapi.LiveKitWebhookPath}, WebhookEvents: rtc.ReceivedEvents, LogLevel: "warn",
	}
	var redis *redisserver.Server
	if cfg.SIPPort != 0 {
		// The SIP bridge and livekit-server meet in Redis: trunks, dispatch rules and the
		// calls handed between them. A password made per start; loopback only.
		var err error
		redis, err = redisserver.Start(ctx, redisserver.Config{Dir: filepath.Join(cfg.DataDir, "redis")})
		if err != nil {
			return fail(err)
		}
		stops = append(stops, func() {
			c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := redis.Stop(c); err != nil {
				log.Warn("redis", "err", err)
			}
		})
		lkConfig.RedisAddress, lkConfig.RedisPassword = redis.Addr(), redis.Password()
	}
	lk, err := livekitserver.Start(context.WithoutCancel(ctx), lkConfig)
	if err != nil {
		return fail(err)
	}
	stops = append(stops, func() {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := lk.Stop(c); err != nil {
			log.Warn("livekit-server", "err", err)
		}
	})
	fmt.Printf("bridgeline: livekit-server on %s (log: %s)\n", lk.WSURL(), lk.LogPath())
	// The SIP gateway: livekit-sip joins rooms through it (its ws_url), and it asks the
	// control plane about each inbound call. A fresh secret each start, as the sim's.
	sipSecret, gwURL := "", ""
	if redis != nil {
		sipSecret = randomHex(32)
		gw, u, err := startSIPGateway(cfg, lk.WSURL(), apiURL, sipSecret, log)
		gwURL = u
		if err != nil {
			return fail(err)
		}
		stops = append(stops, gw)
		sip, err := livekitsip.Start(context.WithoutCancel(ctx), livekitsip.Config{
			Binary: cfg.LiveKitSIPBinary, Dir: filepath.Join(cfg.DataDir, "livekit-sip"),
			APIKey: cfg.LiveKitAPIKey, APISecret: cfg.LiveKitSecret, WSURL: gwURL,
			RedisAddress: redis.Addr(), RedisPassword: redis.Password(),
			SIPPort: cfg.SIPPort, RTPPortStart: cfg.SIPRTPPortStart, RTPPortEnd: cfg.SIPRTPPortEnd,
		})
		if err != nil {
			return fail(fmt.Errorf("%w (SIP_PORT=off runs the stack without it)", err))
		}
		stops = append(stops, func() {
			// Calls in progress get 5 s to finish, then are hung up.
			c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := sip.Stop(c); err != nil {
				log.Warn("livekit-sip", "err", err)
			}
		})
		fmt.Printf("bridgeline: SIP bridge (livekit-sip) on %s, UDP and TCP; RTP %d-%d (log: %s)\n",
			sip.SIPAddr(), cfg.SIPRTPPortStart, cfg.SIPRTPPortEnd, sip.LogPath())
		fmt.Printf("bridgeline: a SIP phone on this machine calls a SIP line as sip:<line number>@%s; bash scripts/sip-phone.sh makes one and calls it (docs/guide.md: Call a line from a SIP phone)\n", sip.SIPAddr())
	}

	rooms, err := lkapi.New(lkapi.Config{URL: cfg.LiveKitURL, PublicURL: cfg.LiveKitPublicURL,
		APIKey: cfg.LiveKitAPIKey, APISecret: cfg.LiveKitSecret, TokenTTL: cfg.TokenTTL})
	if err != nil {
		return fail(err)
	}
	// The sim and its receiver live in this process: a fresh secret each start.
	secret := randomHex(32)
	simulator, err := platformsim.New(platformsim.Config{NotifyURL: apiURL + simhook.Path, Secret: secret, Log: log,
		ClientSDK: os.Getenv(platformsim.ClientSDKEnv)})
	if err != nil {
		return fail(err)
	}
	stops = append(stops, func() {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		simulator.Close(c)
	})

	// Webhook signing secrets are sealed at rest with a key file under the data folder,
	// created 0600 on first start.
	sealer, err := secretbox.OpenKeyFile(filepath.Join(cfg.DataDir, secretbox.KeyFileName))
	if err != nil {
		return fail(fmt.Errorf("webhook secrets key: %w", err))
	}
	// Recorded calls are kept in a folder of the data directory (shared/recordings.Folder:
	// README, Recordings), which the persona workers write and this server serves through
	// URLs signed with a secret fresh each start (a URL lives 15 minutes at most).
	recs := &recordings.Folder{Dir: filepath.Join(cfg.DataDir, "recordings"), BaseURL: apiURL, Secret: []byte(randomHex(32))}
	// The accounts' own avatars' images are kept in a folder of the data directory too
	// (shared/avatars.Folder), served through signed URLs: previews, and the persona
	// workers' reads.
	avatarFiles := &avatars.Folder{Dir: filepath.Join(cfg.DataDir, "avatars"), BaseURL: apiURL, Secret: []byte(randomHex(32))}
	deps := controlplane.Deps{Store: s, Rooms: rooms, LiveKit: rooms,
		Platforms: []platform.Platform{simulator}, SimSecret: secret,
		LocalDelivery: true, Secrets: sealer, Log: log, JoinPage: assets.FS, Recordings: recs, AvatarAssets: avatarFiles,
		Routes: slices.Concat(httpapi.Passthrough(sim.Name, simulator.Handler(), sim.Patterns...),
			httpapi.Passthrough("recordings-file", recs.Handler(), recordings.FolderPatterns...),
			httpapi.Passthrough("avatar-assets-file", avatarFiles.Handler(), avatars.FolderPattern))}
	if sipSecret != "" {
		deps.SIP, deps.SIPSecret = rooms, sipSecret
	}
	if sipSecret != "" && cfg.SIPVideoPort != 0 {
		// The SIP video bridge beside livekit-sip: phones whose calls carry video call it;
		// video sessions on SIP lines ring through it.
		video, err := sipvideo.Start(sipvideo.Config{SIPAddr: fmt.Sprintf("127.0.0.1:%d", cfg.SIPVideoPort),
			RTPPortStart: cfg.SIPVideoRTPPortStart, RTPPortEnd: cfg.SIPVideoRTPPortEnd, GatewayURL: gwURL,
			APIKey: cfg.LiveKitAPIKey, APISecret: cfg.LiveKitSecret, LiveKit: rooms, Log: log.With("component", "sip-video")})
		if err != nil {
			return fail(fmt.Errorf("SIP video bridge: %w (SIP_VIDEO_PORT=off runs the stack without it)", err))
		}
		stops = append(stops, video.Close)
		deps.SIPVideo = video
		if cfg.SIPVideoPublicPort == 0 {
			cfg.SIPVideoPublicPort = cfg.SIPVideoPort
		}
		fmt.Printf("bridgeline: SIP video bridge on %s, UDP; RTP %d-%d: a video phone calls a SIP line as sip:<line number>@%s\n",
			video.SIPAddr(), cfg.SIPVideoRTPPortStart, cfg.SIPVideoRTPPortEnd, video.SIPAddr())
	}
	cp, err := controlplane.New(cfg, deps)
	if err != nil {
		return fail(err)
	}
	// The delivery worker sends webhooks from the outbox; its stop waits for the attempts
	// in flight to be stored.
	runCtx, stopRun := context.WithCancel(context.WithoutCancel(ctx))
	delivered, swept, campaigned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(delivered)
		if err := cp.RunDelivery(runCtx); err != nil {
			log.Error("webhook delivery worker stopped", "err", err)
		}
	}()
	// The sweeper ends sessions past their limits: max_duration, and the assistant
	// dispatch watchdog.
	go func() {
		defer close(swept)
		cp.RunSweeper(runCtx, sweepEvery)
	}()
	// The campaign runner dials the running campaigns' recipients (shared/campaign).
	go func() {
		defer close(campaigned)
		cp.RunCampaigns(runCtx)
	}()
	stops = append(stops, func() { stopRun(); <-swept; <-delivered; <-campaigned })

	if cfg.PersonaWorkers > 0 {
		// The in-process workers read the same variables a deployed worker does (LLM_*,
		// STT_*, TTS_*, PERSONA_*), except where to find LiveKit and the control plane. As
		// a deployed worker, they hold no LiveKit secret (a LIVEKIT_API_SECRET of this
		// process's environment is hidden from them): they get their registration token
		// from this control plane's internal route (persona.AgentTokenPath).
		getenv := workerGetenv(cfg, apiURL)
		wcfg, err := worker.ConfigFromEnv(getenv)
		if err != nil {
			return fail(fmt.Errorf("persona worker: %w", err))
		}
		// The speech engines load once, before the first call, and the workers share them;
		// they read the same environment (STT_*, TTS_*, PERSONA_VAD_*).
		eng, err := engines.FromEnv(getenv, log.With("component", "speech"))
		if err != nil {
			return fail(fmt.Errorf("persona worker: %w", err))
		}
		stops = append(stops, func() { eng.Close() })
		// Recorded calls go to the folder this server serves (recs, above).
		opts := worker.Options{NewVAD: eng.NewVAD, Recognizer: eng.Recognizer, Voices: eng.Voices.Voices(),
			Recordings: recs}
		for i := range cfg.PersonaWorkers {
			if err := startWorker(ctx, wcfg, opts, log.With("component", "persona-worker", "worker", i), &stops); err != nil {
				return fail(err)
			}
		}
	}
	return cp, stop, nil
}

// workerGetenv is the environment the in-process persona workers read: this process's,
// over which where LiveKit and the control plane are, the report secret, and an empty
// LIVEKIT_API_SECRET and LIVEKIT_API_KEY.
func workerGetenv(cfg config.Config, apiURL string) func(string) string {
	local := map[string]string{
		"LIVEKIT_URL": cfg.LiveKitPublicURL, "LIVEKIT_API_SECRET": "", "LIVEKIT_API_KEY": "",
		"BRIDGELINE_API_URL": apiURL, "PERSONA_REPORT_SECRET": cfg.PersonaReportSecret,
	}
	return func(k string) string {
		if v, ok := local[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
}

// startSIPGateway serves the SIP gateway on a loopback port of its own (SIP_GATEWAY_PORT,
// or a free one) and returns its stop and the ws:// URL livekit-sip joins rooms through.
func startSIPGateway(cfg config.Config, liveKitURL, apiURL, secret string, log *slog.Logger) (func(), string, error) {
	gw, err := sipgateway.New(sipgateway.Config{LiveKitURL: liveKitURL, APIKey: cfg.LiveKitAPIKey, APISecret: cfg.LiveKitSecret,
		NotifyURL: apiURL + sipplatform.Path, Secret: secret, Log: log.With("component", "sip-gateway")})
	if err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", cfg.SIPGatewayPort))
	if err != nil {
		gw.Close()
		return nil, "", fmt.Errorf("SIP gateway: %w", err)
	}
	srv := &http.Server{Handler: gw.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	stop := func() {
		c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(c)
		gw.Close()
	}
	return stop, "ws://" + ln.Addr().String(), nil
}

// startWorker runs one in-process persona worker until the stack stops; its stop drains
// it for up to 5 s.
func startWorker(ctx context.Context, wcfg worker.Config, opts worker.Options, log *slog.Logger, stops *[]func()) error {
	w, err := worker.New(wcfg, opts, log)
	if err != nil {
		return fmt.Errorf("persona worker: %w", err)
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(wctx); err != nil {
			log.Error("persona worker stopped", "err", err)
		}
	}()
	*stops = append(*stops, func() {
		w.Drain()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		cancel()
		<-done
	})
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
