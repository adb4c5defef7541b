// Package worker is the persona worker: it registers with LiveKit as the persona agent,
// runs each dispatched call through the persona pipeline, reports to the control plane,
// publishes its load for the fleet's autoscaling, and drains on request.
package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/agent"
	"github.com/bridgeline/bridgeline/mediafleet/analysis"
	"github.com/bridgeline/bridgeline/mediafleet/conversation"
	"github.com/bridgeline/bridgeline/mediafleet/denoise"
	"github.com/bridgeline/bridgeline/mediafleet/llm"
	"github.com/bridgeline/bridgeline/mediafleet/pipeline"
	"github.com/bridgeline/bridgeline/mediafleet/report"
	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/mediafleet/tts/espeak"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Worker is one persona worker process's engine.
type Worker struct {
	cfg     Config
	agent   *agent.Worker
	runner  *pipeline.Runner
	log     *slog.Logger
	emf     *emf
	protect *protector
}

// Options are the parts a test or an embedding process may replace.
//
// The speech engines are made once, when the process starts (cmd/persona-worker builds
// them from the configuration): loading a model on a call's first turn would make the
// caller wait for it.
type Options struct {
	Reporter pipeline.Reporter // default: report.Client to cfg.ControlPlane
	// Tools runs the customer's tool calls; default the same report.Client (the control
	// plane's tool route).
	Tools pipeline.ToolCaller
	// Recordings stores recorded calls' files (cmd/persona-worker builds it from
	// RECORDINGS_*); nil: recorded calls end with no file and say so.
	Recordings pipeline.RecordingStore
	// Conversation replaces the real-time conversation built from the engines below.
	Conversation pipeline.Conversation
	// NewVAD makes a call's voice activity detector (Silero VAD: its ONNX session loaded
	// once, a detector's state per call); Recognizer makes a call's transcriber. Without
	// both, assistants cannot listen and only hold the line after the greeting.
	NewVAD     func() (speech.VAD, error)
	Recognizer speech.Recognizer
	// Model answers; default the OpenAI-compatible client of cfg.LLM*, or the built-in
	// responder when LLM_BASE_URL is unset.
	Model speech.Model
	// Voices speaks a catalogue voice id (persona.VoiceFor); default espeak-ng, mapping
	// the catalogue onto espeak-ng voices.
	Voices     tts.Voices
	MetricsOut io.Writer // where EMF lines go (stdout in main)
	// OnCallEnded, when set, sees every ended report after it was sent.
	OnCallEnded func(persona.Report)
	// OnJoined, when set, is told when a call's worker has joined its room.
	OnJoined func(job persona.Job, at time.Time)
	// CPULoad, when set, is the worker process's measured CPU, 0..1 (agent.ProcessCPU):
	// the load reported to LiveKit is then the larger of it and the calls' share of
	// MaxJobs. cmd/persona-worker, a process of its own, sets it; in-process workers (the
	// local stack) share their process with the API and leave it nil.
	CPULoad func() float64
	// OnTurn, when set, is told the worker-side moments of each answered caller turn
	// (the conversation's speech.Answered events); it must return at once.
	OnTurn func(callID string, t speech.TurnTiming)
}

// New builds a worker from a validated configuration.
func New(cfg Config, opts Options, log *slog.Logger) (*Worker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	w := &Worker{cfg: cfg, log: log}
	client := &report.Client{BaseURL: cfg.ControlPlane, Secret: cfg.ReportSecret, Log: log}
	rep := opts.Reporter
	if rep == nil {
		rep = client
	}
	tools := opts.Tools
	if tools == nil {
		tools = client
	}
	voices := opts.Voices
	if voices == nil {
		if cfg.TTS != "espeak" {
			// The engine of PERSONA_TTS is built by the process (cmd/persona-worker) and
			// passed in Options.Voices; an embedding without it speaks espeak-ng.
			log.Warn("no synthesizer given for PERSONA_TTS; speaking with espeak-ng", "tts", cfg.TTS)
		}
		voices = EspeakVoices(cfg.ESpeakWPM)
	}
	model, err := chooseModel(cfg, opts, log)
	if err != nil {
		return nil, err
	}
	conv, err := newConversation(cfg, opts, voices, model, log)
	if err != nil {
		return nil, err
	}
	// The analysis asks the model the conversation talks with; the built-in responder
	// is no model, and its calls' analyses are skipped.
	analyst := analysis.Analyst{}
	if _, builtin := model.(llm.Builtin); !builtin {
		analyst.Model = model
	}
	runner, err := pipeline.New(pipeline.Config{
		Width: cfg.Width, Height: cfg.Height, FPS: cfg.FPS, IdleFPS: cfg.IdleFPS, VideoKbps: cfg.VideoKbps,
		VerifyTimeout: cfg.VerifyTimeout, ConnectingDwell: cfg.ConnectingDwell, Voices: voices, Conversation: conv,
		Reporter: rep, Tools: tools, Recordings: opts.Recordings, Log: log, OnJoined: opts.OnJoined,
		AMDRecognizer: opts.Recognizer, AMDNewVAD: opts.NewVAD,
	})
	if err != nil {
		return nil, err
	}
	w.runner = runner
	if cfg.Metrics == "emf" && opts.MetricsOut != nil {
		w.emf = &emf{out: opts.MetricsOut, namespace: cfg.MetricsNamespace, service: cfg.MetricsService}
	}
	if cfg.ECSAgentURI != "" {
		w.protect = newProtector(cfg.ECSAgentURI, log)
	}
	onEnded := opts.OnCallEnded
	// The registration token comes from the control plane (persona.AgentTokenPath),
	// kept until it nears its end: the worker holds no LiveKit API secret.
	token := agent.Refreshing(func(ctx context.Context) (string, time.Time, error) {
		t, err := client.AgentToken(ctx)
		return t.Token, t.ExpiresAt, err
	}, persona.AgentTokenRefresh)
	w.agent, err = agent.New(agent.Config{
		URL: cfg.LiveKitURL, Token: token,
		AgentName: cfg.AgentName, MaxJobs: cfg.MaxJobs, IdentityPrefix: "assistant-",
		ParticipantName: participantName, CPULoad: opts.CPULoad,
		OnLoad: func(load float64, jobs int) {
			if w.emf != nil {
				w.emf.set(load, jobs)
			}
			if w.protect != nil {
				w.protect.set(jobs > 0)
			}
		},
	}, func(ctx context.Context, job agent.Job) error {
		pj, err := decodeJob(job.Metadata)
		if err != nil {
			// Without a call id nothing can be reported: fail the job for LiveKit's record.
			return err
		}
		ended, err := w.runner.Run(ctx, job, pj)
		if onEnded != nil {
			onEnded(ended)
		}
		if pj.Version.Analysis != nil {
			analyse(ctx, analyst, rep, pj, ended, log)
		}
		return err
	}, log)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// chooseModel is the model calls talk with and are analysed by: opts.Model, else the
// OpenAI-compatible client of cfg.LLM*, else the built-in responder.
func chooseModel(cfg Config, opts Options, log *slog.Logger) (speech.Model, error) {
	switch {
	case opts.Model != nil:
		return opts.Model, nil
	case cfg.LLMBaseURL != "":
		return llm.New(llm.Config{BaseURL: cfg.LLMBaseURL, APIKey: cfg.LLMAPIKey, Model: cfg.LLMModel, MaxTokens: cfg.LLMMaxTokens})
	}
	log.Info("LLM_BASE_URL unset: assistants answer with the built-in responder, and calls are not analysed")
	return llm.Builtin{}, nil
}

// analyse runs a call's analysis after its ended report and reports it
// (persona.ReportAnalysis), with the call's usage counting the analysis's tokens. It
// outlives a cancelled job (a drain or LiveKit's termination): the call is over, and
// its analysis is what is left to send; it is bounded by the analyst's attempts.
func analyse(ctx context.Context, a analysis.Analyst, r pipeline.Reporter, job persona.Job, ended persona.Report, log *slog.Logger) {
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = analysis.DefaultTimeout
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), analysis.Attempts*timeout)
	defer cancel()
	start := time.Now()
	res := a.Run(actx, job.Version, ended.Transcript)
	var u persona.Usage
	if ended.Usage != nil {
		u = *ended.Usage
	}
	u.LLMPromptTokens += int64(res.Tokens.Prompt)
	u.LLMCompletionTokens += int64(res.Tokens.Completion)
	u.Estimated = u.Estimated || res.Estimated
	rep := persona.Report{Kind: persona.ReportAnalysis, CallID: job.CallID, SessionID: job.SessionID, At: time.Now().UTC(),
		Analysis: &res.AnalysisResult, Usage: &u}
	log.Info("call analysed", "call_id", job.CallID, "status", res.Status, "error", res.Error, "ms", time.Since(start).Milliseconds())
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer scancel()
	if err := r.Send(sctx, rep); err != nil {
		log.Error("analysis report not delivered", "call_id", job.CallID, "err", err)
	}
}

// newConversation builds what runs after the greeting: opts.Conversation, else the
// real-time conversation over the engines and model, else (no VAD or recogniser)
// holding the line.
// newSuppressor is a call's noise suppression: speexdsp's preprocessor at its default
// depth (mediafleet/denoise).
func newSuppressor() (speech.Suppressor, error) { return denoise.New(speech.Rate, 0) }

func newConversation(cfg Config, opts Options, voices tts.Voices, model speech.Model, log *slog.Logger) (pipeline.Conversation, error) {
	if opts.Conversation != nil {
		return opts.Conversation, nil
	}
	if opts.NewVAD == nil || opts.Recognizer == nil {
		log.Warn("no voice activity detector or recogniser given: assistants greet and hold the line without listening")
		return pipeline.Listen{}, nil
	}
	e, err := conversation.New(conversation.Config{
		NewVAD: opts.NewVAD, NewSuppressor: newSuppressor, Recognizer: opts.Recognizer, Model: model, Voices: voices,
		EndOfTurn: cfg.EndOfTurn, FlushAfter: cfg.STTFlushAfter, MaxTurn: cfg.MaxTurn, Confirm: cfg.BargeInConfirm,
		FirstTokenTimeout: cfg.LLMTimeout, Log: log,
	})
	if err != nil {
		return nil, err
	}
	return conversing{e: e, onTurn: opts.OnTurn}, nil
}

// conversing runs the conversation on a LiveKit call: the call is its line.
type conversing struct {
	e      *conversation.Engine
	onTurn func(callID string, t speech.TurnTiming)
}

func (c conversing) Converse(ctx context.Context, call *pipeline.Call) error {
	var line speech.Line = call
	if c.onTurn != nil {
		line = turnStamps{Call: call, onTurn: c.onTurn}
	}
	return c.e.Run(ctx, line, call.Job().Version, conversation.AnsweredAt(call.Job().AnsweredAt))
}

// turnStamps is the call as a line that also tells Options.OnTurn each answered turn.
type turnStamps struct {
	*pipeline.Call
	onTurn func(callID string, t speech.TurnTiming)
}

func (l turnStamps) Publish(e speech.Event) {
	if a, ok := e.(speech.Answered); ok {
		l.onTurn(l.Job().CallID, a.Timing)
	}
	l.Call.Publish(e)
}

// EspeakVoices speaks the voice catalogue with espeak-ng: its espeak-ng voices as they
// are, the others (flite, hosted) with the espeak-ng voice of their gender.
func EspeakVoices(wpm int) tts.Voices {
	return func(id string) tts.Synthesizer {
		voice := "en-us"
		if v, ok := persona.LocalVoice(id); ok {
			switch {
			case v.Engine == persona.EngineEspeak:
				voice = v.EngineVoice
			case v.Gender == "male":
				voice = "en-us+m3"
			default:
				voice = "en-us+f3"
			}
		}
		return &espeak.Synthesizer{Voice: voice, WPM: wpm}
	}
}

// decodeJob reads the dispatch metadata: a persona.Job, with a call id to report on.
func decodeJob(metadata string) (persona.Job, error) {
	var pj persona.Job
	if err := json.Unmarshal([]byte(metadata), &pj); err != nil || pj.CallID == "" {
		return pj, fmt.Errorf("dispatch metadata is not a persona job: %v", err)
	}
	return pj, nil
}

// participantName shows the assistant's name to the other participants. LiveKit asks
// for it when it offers the job, before it assigns it.
func participantName(metadata string) string {
	if pj, err := decodeJob(metadata); err == nil && pj.Version.Name != "" {
		return pj.Version.Name
	}
	return "Assistant"
}

// Run serves calls until ctx ends (running calls end with worker_shutdown) or, after
// Drain, until the running calls have ended.
func (w *Worker) Run(ctx context.Context) error {
	side, stop := context.WithCancel(ctx)
	defer stop()
	if w.emf != nil {
		go w.emf.run(side, w.cfg.MetricsInterval)
	}
	if w.protect != nil {
		go w.protect.run(side)
	}
	return w.agent.Run(ctx)
}

// Drain stops taking calls; Run returns when the running ones have ended.
func (w *Worker) Drain() { w.agent.Drain() }

// Registered is closed once the worker is registered with LiveKit.
func (w *Worker) Registered() <-chan struct{} { return w.agent.Registered() }

// Calls is the number of running calls.
func (w *Worker) Calls() int { return w.agent.Jobs() }

// emf writes CloudWatch embedded-metric-format lines: CloudWatch Logs (the awslogs driver
// of the ECS task) turns them into the WorkerLoad and RunningCalls metrics the fleet's
// target-tracking policy scales on, with no AWS SDK in the worker.
type emf struct {
	out       io.Writer
	namespace string
	service   string
	mu        sync.Mutex
	load      float64
	jobs      int
}

func (e *emf) set(load float64, jobs int) {
	e.mu.Lock()
	e.load, e.jobs = load, jobs
	e.mu.Unlock()
}

func (e *emf) run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		e.write(time.Now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (e *emf) write(now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	WriteEMF(e.out, e.namespace, e.service, e.load, e.jobs, now)
}

// WriteEMF writes one embedded-metric-format line with WorkerLoad and RunningCalls under
// namespace, dimension ServiceName=service.
func WriteEMF(out io.Writer, namespace, service string, load float64, calls int, now time.Time) {
	line, _ := json.Marshal(map[string]any{
		"_aws": map[string]any{
			"Timestamp": now.UnixMilli(),
			"CloudWatchMetrics": []any{map[string]any{
				"Namespace":  namespace,
				"Dimensions": [][]string{{"ServiceName"}},
				"Metrics": []any{
					map[string]string{"Name": "WorkerLoad", "Unit": "None"},
					map[string]string{"Name": "RunningCalls", "Unit": "Count"},
				},
			}},
		},
		"ServiceName":  service,
		"WorkerLoad":   load,
		"RunningCalls": calls,
	})
	_, _ = out.Write(append(line, '\n'))
}
