package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/engines"
	lkserver "github.com/bridgeline/bridgeline/mediafleet/livekit"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/config"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/platform/sim/simhook"
	"github.com/bridgeline/bridgeline/shared/rtc/lkapi"
	"github.com/bridgeline/bridgeline/shared/session"
)

// mediaSettings are the local stack's media settings beyond config.Config, read from the
// environment: LIVEKIT_RTC_TCP_PORT (default 7881), LIVEKIT_RTC_UDP_PORT (default 7882)
// and PERSONA_WORKERS (persona workers run in-process, default 1, 0 for none).
type mediaSettings struct {
	rtcTCP, rtcUDP int
	workers        int
}

func mediaFromEnv() (mediaSettings, error) {
	m := mediaSettings{rtcTCP: 7881, rtcUDP: 7882, workers: 1}
	for name, dst := range map[string]*int{"LIVEKIT_RTC_TCP_PORT": &m.rtcTCP, "LIVEKIT_RTC_UDP_PORT": &m.rtcUDP, "PERSONA_WORKERS": &m.workers} {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 65535 {
				return m, fmt.Errorf("%s: not a port or count: %q", name, v)
			}
			*dst = n
		}
	}
	return m, nil
}

// sweepEvery is how often the local stack sweeps sessions past their limits.
const sweepEvery = time.Second

// startMedia starts the media side of the local stack (livekit-server, the simulated
// platform, persona workers) and plugs its routes and services into api before the API
// starts serving: sessions and calls, the internal receivers (LiveKit webhooks, sim
// notifications, worker reports) and the sim's /sim/ API. It also starts the webhook side
// (startWebhooks), whose customer_decides Asker inbound calls use. The returned stop
// drains them in order.
func startMedia(ctx context.Context, cfg config.Config, s Store, api *httpapi.API, log *slog.Logger) (func(), error) {
	ms, err := mediaFromEnv()
	if err != nil {
		return nil, err
	}
	recs, ok := s.(session.Records)
	if !ok {
		return nil, fmt.Errorf("store %T keeps no sessions or calls", s)
	}
	hooks, err := startWebhooks(ctx, s, api, cfg.Webhooks, cfg.DataDir, log)
	if err != nil {
		return nil, err
	}
	stops := []func(){hooks.Stop}
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	fail := func(err error) (func(), error) { stop(); return nil, err }

	apiURL := "http://" + cfg.Addr
	lk, err := lkserver.Start(context.WithoutCancel(ctx), lkserver.Config{
		Dir: filepath.Join(cfg.DataDir, "livekit"), APIKey: cfg.LiveKitAPIKey, APISecret: cfg.LiveKitSecret,
		Port: cfg.LiveKitPort, RTCTCPPort: ms.rtcTCP, RTCUDPPort: ms.rtcUDP,
		WebhookURLs: []string{apiURL + httpapi.LiveKitWebhookPath}, LogLevel: "warn",
	})
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

	rooms, err := lkapi.New(lkapi.Config{URL: cfg.LiveKitURL, PublicURL: cfg.LiveKitPublicURL,
		APIKey: cfg.LiveKitAPIKey, APISecret: cfg.LiveKitSecret, TokenTTL: cfg.TokenTTL})
	if err != nil {
		return fail(err)
	}
	// The sim and its receiver live in this process: a fresh secret each start.
	secret := randomHex(32)
	simulator, err := sim.New(sim.Config{NotifyURL: apiURL + simhook.Path, Secret: secret, Log: log})
	if err != nil {
		return fail(err)
	}
	stops = append(stops, func() {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		simulator.Close(c)
	})

	svc := &session.Service{Records: recs, Lines: s, Assistants: s, Accounts: s, Rooms: rooms,
		Platforms: map[string]platform.Platform{sim.Name: simulator}, Decider: hooks.Asker,
		Notify: hooks.Worker.Notify, MaxDuration: cfg.MaxSession, DispatchTimeout: cfg.AssistantDispatchTimeout,
		Log: log, Now: time.Now}
	// The sweeper ends sessions past their limits: max_duration, and the assistant
	// dispatch watchdog.
	sweepCtx, stopSweep := context.WithCancel(context.WithoutCancel(ctx))
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		svc.RunSweeper(sweepCtx, sweepEvery)
	}()
	stops = append(stops, func() { stopSweep(); <-swept })
	api.Extra = append(api.Extra, (&httpapi.Sessions{Service: svc}).Routes()...)
	api.Extra = append(api.Extra, (&httpapi.Receivers{Sessions: svc, RTC: rooms, SimSecret: secret}).Routes()...)
	api.Extra = append(api.Extra, sim.Routes(simulator.Handler())...)

	if ms.workers > 0 {
		// The in-process workers read the same variables a deployed worker does (LLM_*,
		// STT_*, TTS_*, PERSONA_*), except where to find LiveKit and the control plane.
		local := map[string]string{
			"LIVEKIT_URL": cfg.LiveKitPublicURL, "LIVEKIT_API_KEY": cfg.LiveKitAPIKey,
			"LIVEKIT_API_SECRET": cfg.LiveKitSecret, "BRIDGELINE_API_URL": apiURL,
		}
		wcfg, err := worker.ConfigFromEnv(func(k string) string {
			if v, ok := local[k]; ok {
				return v
			}
			return os.Getenv(k)
		})
		if err != nil {
			return fail(fmt.Errorf("persona worker: %w", err))
		}
		// The speech engines load once, before the first call, and the workers share them.
		eng, err := engines.FromEnv(log.With("component", "speech"))
		if err != nil {
			return fail(fmt.Errorf("persona worker: %w", err))
		}
		stops = append(stops, func() { eng.Close() })
		opts := worker.Options{NewVAD: eng.NewVAD, Recognizer: eng.Recognizer, Voices: eng.Voices.Voices()}
		for i := range ms.workers {
			if err := startWorker(ctx, wcfg, opts, log.With("component", "persona-worker", "worker", i), &stops); err != nil {
				return fail(err)
			}
		}
	}
	return stop, nil
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
