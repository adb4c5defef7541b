package conversation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/pipeline"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Rate is the sample rate the conversation listens at (pipeline.ListenRate).
const Rate = pipeline.ListenRate

// Defaults of Config.
const (
	// DefaultEndOfTurn is the silence that ends a caller's turn. 400 ms: Pipecat's 0.2 s
	// cuts callers off at the ordinary pauses inside a sentence (200-300 ms between
	// phrases), LiveKit Agents' 0.5 s adds a tenth of a second to every answer; 400 ms
	// clears those pauses and, with a 32 ms VAD window, decides within ~430 ms.
	DefaultEndOfTurn = 400 * time.Millisecond
	// DefaultMaxTurn is the longest a caller's turn runs before it is answered anyway.
	DefaultMaxTurn = 20 * time.Second
	// DefaultPadding is the audio before speech onset given to the recogniser: the VAD
	// fires a window or two into a word, whose start the recogniser needs.
	DefaultPadding = 256 * time.Millisecond
	// DefaultConfirm is how long the caller must talk over the assistant for a barge-in
	// to cancel the reply; shorter sounds without words (a cough) let it resume.
	DefaultConfirm = 300 * time.Millisecond
	// DefaultThreshold is the speech probability of a confident VAD window (Silero's).
	DefaultThreshold = 0.5
	// DefaultFirstTokenTimeout bounds the wait for the model's first token.
	DefaultFirstTokenTimeout = 10 * time.Second
	// DefaultSTTTimeout bounds the wait for a turn's final transcript.
	DefaultSTTTimeout = 5 * time.Second
	// DefaultMaxClause flushes a clause this long without a sentence end to speech.
	DefaultMaxClause = 160

	// Apology is said when the model fails or times out; the call goes on listening.
	Apology = "Sorry, I had a problem there. Could you say that again?"
	// Missed is said when the recogniser fails.
	Missed = "Sorry, I didn't catch that. Could you say it again?"
)

// Config is what every call's conversation shares: the engines, loaded once when the
// worker starts, and the turn-taking settings.
type Config struct {
	// NewVAD makes a call's voice activity detector (it keeps per-call state).
	NewVAD     func() (VAD, error)
	Recognizer Recognizer
	Model      Model
	Voices     tts.Voices

	Threshold         float32       // default DefaultThreshold
	EndOfTurn         time.Duration // default DefaultEndOfTurn
	MaxTurn           time.Duration // default DefaultMaxTurn
	Padding           time.Duration // default DefaultPadding
	Confirm           time.Duration // default DefaultConfirm
	FirstTokenTimeout time.Duration // default DefaultFirstTokenTimeout
	STTTimeout        time.Duration // default DefaultSTTTimeout
	MaxClause         int           // default DefaultMaxClause characters
	Log               *slog.Logger
	// OnTurn, when set, is told the worker-side moments of every answered caller turn
	// whose reply started playing (benchmarks break the response time down with them).
	// It runs on the conversation's goroutine: it must return at once.
	OnTurn func(callID string, t TurnTiming)
}

// TurnTiming is when each stage of answering one caller turn finished, as the worker saw
// it: the stamps a benchmark needs to split the response time into its parts.
type TurnTiming struct {
	LastSpeech  time.Time // end of the turn's last speech window (its arrival)
	Decided     time.Time // the end-of-turn silence was complete: the turn is over
	Transcribed time.Time // the recogniser's final text
	FirstToken  time.Time // the model's first token (zero for a fixed reply)
	Synthesized time.Time // the first sentence synthesised and queued on the speaker
	FirstSent   time.Time // its first 20 ms frame sent to the room
}

// Engine holds conversations; it implements pipeline.Conversation.
type Engine struct {
	cfg Config
}

var _ pipeline.Conversation = (*Engine)(nil)

// New validates cfg and fills its defaults.
func New(cfg Config) (*Engine, error) {
	if cfg.NewVAD == nil || cfg.Recognizer == nil || cfg.Model == nil || cfg.Voices == nil {
		return nil, errors.New("conversation: NewVAD, Recognizer, Model and Voices are required")
	}
	if cfg.Threshold <= 0 || cfg.Threshold >= 1 {
		cfg.Threshold = DefaultThreshold
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.EndOfTurn, DefaultEndOfTurn)
	def(&cfg.MaxTurn, DefaultMaxTurn)
	def(&cfg.Padding, DefaultPadding)
	def(&cfg.Confirm, DefaultConfirm)
	def(&cfg.FirstTokenTimeout, DefaultFirstTokenTimeout)
	def(&cfg.STTTimeout, DefaultSTTTimeout)
	if cfg.MaxClause <= 0 {
		cfg.MaxClause = DefaultMaxClause
	}
	if cfg.MaxTurn <= cfg.EndOfTurn {
		return nil, fmt.Errorf("conversation: max turn %v must be longer than the end-of-turn silence %v", cfg.MaxTurn, cfg.EndOfTurn)
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Engine{cfg: cfg}, nil
}

// Converse holds the conversation of a call until it ends (ctx) or the model hangs up.
func (e *Engine) Converse(ctx context.Context, call *pipeline.Call) error {
	return e.run(ctx, callLine{call}, call.Job().Version, call.Job().CallID)
}

// Run holds the conversation on line for version v. It returns nil when the model ended
// the call, ctx's error when the call ended, or an error when it could not start.
func (e *Engine) Run(ctx context.Context, line Line, v persona.Version) error {
	return e.run(ctx, line, v, "")
}

func (e *Engine) run(ctx context.Context, line Line, v persona.Version, callID string) error {
	vad, err := e.cfg.NewVAD()
	if err != nil {
		return fmt.Errorf("conversation: vad: %w", err)
	}
	defer vad.Close()
	tr, err := e.cfg.Recognizer.NewTranscriber(ctx)
	if err != nil {
		return fmt.Errorf("conversation: transcriber: %w", err)
	}
	defer tr.Close()
	s := &session{cfg: &e.cfg, line: line, vad: vad, tr: tr, version: v, voice: persona.VoiceFor(v), log: e.cfg.Log, callID: callID}
	if v.SystemPrompt != "" {
		s.history = append(s.history, Message{Role: RoleSystem, Content: v.SystemPrompt})
	}
	if v.Greeting != "" {
		s.history = append(s.history, Message{Role: RoleAssistant, Content: v.Greeting})
	}
	return s.run(ctx)
}

// session is one call's conversation. Its fields belong to the goroutine running run;
// a reply runs in its own goroutine and hands its result back over a channel.
type session struct {
	cfg     *Config
	line    Line
	vad     VAD
	tr      Transcriber
	version persona.Version
	callID  string
	voice   string
	log     *slog.Logger
	history []Message
	stats   stats

	// Listening.
	pending    []int16   // samples toward the next VAD window
	pad        [][]int16 // the windows before onset, newest last
	inSpeech   bool      // a caller turn is open
	holdFloor  bool      // a turn was cut at MaxTurn: its speech goes on until a pause
	onset      time.Time // start of the turn's first speech window
	lastSpeech time.Time // end of its latest speech window
	turnLen    int       // samples since onset
	spokenLen  int       // samples from onset to the end of the latest speech window
	silence    int       // samples of silence since the latest speech window
	vadFailed  bool      // a VAD error was logged
	cur        *reply    // the reply being thought or spoken
	paused     bool      // the speaker is paused for a caller onset
	pausedLive bool      // something was playing when it was paused
	confirmed  bool      // the caller's speech over the assistant outlasted Confirm
}

func (s *session) samples(d time.Duration) int { return int(d.Seconds() * Rate) }

func (s *session) run(ctx context.Context) error {
	audio := s.line.Audio()
	for {
		var replied <-chan replyResult
		if s.cur != nil {
			replied = s.cur.done
		}
		select {
		case <-ctx.Done():
			if s.cur != nil {
				s.cur.cancel()
				s.finishReply(<-s.cur.done, false)
			}
			return ctx.Err()
		case f := <-audio:
			if err := s.hear(ctx, f, time.Now()); err != nil {
				return err
			}
		case res := <-replied:
			if s.finishReply(res, false) {
				return nil // the model ended the call and its goodbye played
			}
		}
	}
}

// hear takes one frame of caller audio that arrived at.
func (s *session) hear(ctx context.Context, frame []int16, at time.Time) error {
	s.pending = append(s.pending, frame...)
	n := s.vad.WindowSize()
	for len(s.pending) >= n {
		w := s.pending[:n:n]
		s.pending = s.pending[n:]
		if err := s.window(ctx, w, at); err != nil {
			return err
		}
	}
	if len(s.pending) == 0 {
		s.pending = nil // let the backing array go
	}
	return nil
}

// window decides on one VAD window that ended at.
func (s *session) window(ctx context.Context, w []int16, at time.Time) error {
	winDur := time.Duration(len(w)) * time.Second / Rate
	p, err := s.vad.Prob(w)
	if err != nil {
		if !s.vadFailed {
			s.log.Error("vad failed; treating audio as silence", "err", err)
			s.vadFailed = true
		}
		p = 0
	}
	// Hysteresis as Silero's own iterator: speech starts at the threshold and stops
	// below it by 0.15, so a wavering word does not end the turn.
	speech := p >= s.cfg.Threshold
	if s.inSpeech {
		speech = p >= s.cfg.Threshold-0.15
	}
	if s.holdFloor {
		if speech {
			return nil
		}
		s.holdFloor = false
	}
	if !s.inSpeech {
		if !speech {
			s.pad = append(s.pad, w)
			if keep := (s.samples(s.cfg.Padding) + len(w) - 1) / len(w); len(s.pad) > keep {
				s.pad = s.pad[len(s.pad)-keep:]
			}
			return nil
		}
		s.startTurn(w, at.Add(-winDur), at)
		return nil
	}
	if err := s.tr.Write(w); err != nil {
		s.log.Warn("transcriber write", "err", err)
	}
	s.turnLen += len(w)
	if speech {
		s.silence = 0
		s.lastSpeech = at
		s.spokenLen = s.turnLen
	} else {
		s.silence += len(w)
	}
	if s.paused && !s.confirmed && s.spokenLen >= s.samples(s.cfg.Confirm) {
		s.confirmed = true
		s.bargeIn()
	}
	switch {
	case s.silence >= s.samples(s.cfg.EndOfTurn):
		return s.endTurn(ctx, at)
	case s.turnLen >= s.samples(s.cfg.MaxTurn):
		s.holdFloor = true
		return s.endTurn(ctx, at)
	}
	return nil
}

// startTurn opens a caller turn at speech onset; over the assistant it pauses the
// assistant at once.
func (s *session) startTurn(w []int16, onset, at time.Time) {
	s.inSpeech, s.onset, s.lastSpeech = true, onset, at
	s.turnLen, s.spokenLen, s.silence = len(w), len(w), 0
	if err := s.tr.Begin(); err != nil {
		s.log.Warn("transcriber begin", "err", err)
	}
	for _, p := range s.pad {
		_ = s.tr.Write(p)
	}
	s.pad = nil
	_ = s.tr.Write(w)
	if s.cur != nil || s.line.Speaking() {
		s.pausedLive = s.line.Speaking()
		s.line.Pause()
		s.paused, s.confirmed = true, false
		if s.pausedLive {
			s.stats.bargeStop = append(s.stats.bargeStop, time.Since(onset))
			s.publish()
		}
	}
}

// bargeIn cancels what the assistant is saying: the caller talked over it for longer
// than a cough.
func (s *session) bargeIn() {
	if s.pausedLive {
		s.stats.bargeIns++
	}
	if s.cur != nil {
		s.cur.cancel()
		s.finishReply(<-s.cur.done, true)
	}
	s.line.CutAll()
	s.line.Resume()
	s.paused = false
	s.publish()
}

// endTurn closes the caller's turn: transcribe, and answer it unless it was noise.
func (s *session) endTurn(ctx context.Context, at time.Time) error {
	s.inSpeech = false
	sctx, cancel := context.WithTimeout(ctx, s.cfg.STTTimeout)
	text, err := s.tr.End(sctx)
	cancel()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	transcribed := time.Now()
	s.stats.stt = append(s.stats.stt, transcribed.Sub(at))
	text = strings.TrimSpace(text)
	if err != nil {
		s.log.Warn("transcription failed", "err", err)
		s.stats.error(errSTT)
	}
	if text == "" && err == nil {
		// Noise, or a cough over the assistant: it goes on where it paused.
		if s.paused {
			s.line.Resume()
			s.paused = false
		}
		s.publish()
		return nil
	}
	if s.paused { // words shorter than the confirm window ("no!") still interrupt
		s.bargeIn()
	}
	tm := TurnTiming{LastSpeech: s.lastSpeech, Decided: at, Transcribed: transcribed}
	if text != "" {
		s.line.AddTurn(persona.Turn{Speaker: persona.SpeakerCaller, Text: text,
			StartMS: s.line.Offset(s.onset), EndMS: s.line.Offset(s.lastSpeech)})
		s.history = append(s.history, Message{Role: RoleUser, Content: text})
		s.stats.turns++
		s.startReply(ctx, tm, "")
	} else {
		s.startReply(ctx, tm, Missed)
	}
	s.publish()
	return nil
}

// publish writes the figures so far into the call's metrics.
func (s *session) publish() { s.line.UpdateMetrics(s.stats.apply) }
