// Command persona-worker is a media-fleet process that runs Bridgeline assistants on
// calls: a LiveKit agent worker configured from the environment (see worker.Config).
// SIGTERM or SIGINT drains it: it stops taking calls and exits when the running ones have
// ended, or after PERSONA_DRAIN_TIMEOUT ends them; a second signal ends them at once.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/bridgeline/bridgeline/mediafleet/agent"
	"github.com/bridgeline/bridgeline/mediafleet/engines"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/recordings"
	"github.com/bridgeline/bridgeline/shared/redact"
)

func main() {
	cfg, err := worker.ConfigFromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "persona-worker: config: %v\n", err)
		os.Exit(2)
	}
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	log := slog.New(redact.Handler(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level})))
	worker.SetSDKLogger(log)

	// The speech engines load before the worker registers, so no call waits for a model.
	eng, err := engines.FromEnv(os.Getenv, log)
	if err != nil {
		fmt.Fprintf(os.Stderr, "persona-worker: speech engines: %v\n", err)
		os.Exit(2)
	}
	defer eng.Close()
	opts := worker.Options{MetricsOut: os.Stdout, NewVAD: eng.NewVAD, Recognizer: eng.Recognizer, Voices: eng.Voices.Voices(),
		CPULoad: agent.ProcessCPU()}
	if cfg.RecordingsBucket != "" {
		awsCfg, err := awsconfig.LoadDefaultConfig(context.Background())
		if err != nil {
			fmt.Fprintf(os.Stderr, "persona-worker: AWS configuration for RECORDINGS_BUCKET: %v\n", err)
			os.Exit(2)
		}
		opts.Recordings = &recordings.S3{Client: s3.NewFromConfig(awsCfg), Bucket: cfg.RecordingsBucket}
	}
	w, err := worker.New(cfg, opts, log)
	if err != nil {
		fmt.Fprintf(os.Stderr, "persona-worker: %v\n", err)
		os.Exit(2)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		s := <-sigs
		log.Info("draining", "signal", s.String(), "calls", w.Calls(), "timeout", cfg.DrainTimeout.String())
		w.Drain()
		var timeout <-chan time.Time
		if cfg.DrainTimeout > 0 {
			timeout = time.After(cfg.DrainTimeout)
		}
		select {
		case s = <-sigs:
			log.Warn("second signal; ending calls", "signal", s.String())
		case <-timeout:
			log.Warn("drain timeout; ending calls", "calls", w.Calls())
		case <-ctx.Done():
		}
		cancel()
	}()

	log.Info("persona worker starting", "livekit", cfg.LiveKitURL, "agent_name", cfg.AgentName, "max_calls", cfg.MaxJobs)
	if err := w.Run(ctx); err != nil {
		log.Error("persona worker stopped", "err", err)
		os.Exit(1)
	}
	log.Info("persona worker stopped")
}
