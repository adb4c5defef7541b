// Package conversation is the real-time conversation of an assistant call: it listens
// to the caller (voice activity detection), decides when the caller's turn is over,
// transcribes it, asks a language model, speaks the reply sentence by sentence as the
// model streams, and yields to the caller when they talk over it (barge-in). It also
// plays the greeting (Greet) and keeps the call's transcript and figures (Record).
//
// It works on the contracts of mediafleet/speech, not on a room: the worker adapts its
// LiveKit call to speech.Line, and the tests run it on a scripted line on a simulated
// clock. It links no media stack (TestNoMediaImports).
//
// A call's conversation is a few stages passing typed messages, each owning its state:
//
//	line audio -> listener (VAD, end of turn) -> speechStarted, speechGoesOn, turnEnded
//	           -> session (transcriber, the floor: pause, resume, barge-in, history)
//	           -> reply: generation (model stream -> sentences -> synthesis -> line)
//	                     and playout (sentenceStarted as each plays, then replyDone)
//	everything that happened -> speech.Event on the line (Record keeps the transcript)
package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/redact"
)

// Defaults of Config.
const (
	// DefaultEndOfTurn is the silence that ends a caller's turn. 400 ms: Pipecat's 0.2 s
	// cuts callers off at the ordinary pauses inside a sentence (200-300 ms between
	// phrases), LiveKit Agents' 0.5 s adds a tenth of a second to every answer; 400 ms
	// clears those pauses and, with a 32 ms VAD window, decides within ~430 ms.
	DefaultEndOfTurn = 400 * time.Millisecond
	// DefaultFinishedTurn is the silence that ends a turn whose words so far end a
	// sentence or a question (the recogniser's full stop or question mark, or the
	// language's rules): the caller is done, and every 100 ms more is an answer later.
	DefaultFinishedTurn = 250 * time.Millisecond
	// DefaultUnfinishedTurn is the silence that ends a turn whose words so far stop
	// mid-phrase ("I'd like to book a") or read out digits ("four one five"): callers
	// pause there to think or to read, often longer than the fixed end of turn.
	DefaultUnfinishedTurn = 1500 * time.Millisecond
	// DefaultFlushAfter is the caller's silence after which a recogniser that can
	// (speech.Flusher: Deepgram) is asked for the words so far, while the turn stays
	// open: its own time to the final text (a round trip and the finalisation at the
	// service, 150 ms in the benchmark's stand-in) then runs inside the end-of-turn
	// silence instead of after it. 200 ms is the 7th VAD window (224 ms), which leaves
	// 190 ms before the end-of-turn decision (the 13th, 416 ms) for the answer; a
	// caller who goes on after such a pause costs one more Finalize and nothing else.
	// Earlier, the flush would land in the short stops inside words and phrases too.
	// When the end of turn is shorter than 400 ms the default is half of it.
	DefaultFlushAfter = 200 * time.Millisecond
	// NoFlush as Config.FlushAfter never flushes (PERSONA_STT_FLUSH_AFTER=off).
	NoFlush time.Duration = -1
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
	// DefaultKeyGap ends a turn of keys pressed (no speech) once none follows for this
	// long: a caller keying a number pauses between keys longer than between words.
	DefaultKeyGap = 1500 * time.Millisecond

	// HandOver is said before a transfer when the model gave no sentence of its own.
	HandOver = "One moment please, I am transferring your call."
	// TransferFailed is said when a transfer did not go through; the call goes on.
	TransferFailed = "I am sorry, I could not transfer your call. Can I help you with anything else?"

	// Apology is said when the model fails or times out; the call goes on listening.
	Apology = "Sorry, I had a problem there. Could you say that again?"
	// Missed is said when the recogniser fails.
	Missed = "Sorry, I didn't catch that. Could you say it again?"

	// DefaultFillerAfter is how long a tool call runs before the caller hears Filler.
	DefaultFillerAfter = time.Second
	// DefaultMaxToolRounds bounds how often one reply asks the model again with tool
	// results.
	DefaultMaxToolRounds = 4
	// DefaultIdleTimeout is a version's idle timeout when it names none.
	DefaultIdleTimeout = 30 * time.Second
	// DefaultStillThereWait is how long after StillThere the call waits for the caller
	// before it ends (silence_timeout).
	DefaultStillThereWait = 10 * time.Second
	// DefaultFrameWait is how long, at the end of a caller turn on a version with
	// vision, the conversation waits for a frame of the caller's video from the turn
	// (asked for at its onset) before it asks the model with the latest older one: a
	// key frame comes within a round trip and a frame interval, and the answer waits.
	DefaultFrameWait = 300 * time.Millisecond
	// DefaultLookWait bounds the look tool's wait for a fresh frame.
	DefaultLookWait = 2 * time.Second

	// Filler is said, once per round of tool calls, when the tools take over FillerAfter.
	Filler = "One moment."
	// StillThere is asked after a version's idle timeout of silence.
	StillThere = "Are you still there?"
	// TimeUp is said when the call reaches the version's max_duration_seconds.
	TimeUp = "I'm sorry, we've reached the time limit for this call. Thank you for calling. Goodbye."
)

// HangUp is the error Run returns when the conversation itself ended the call for a
// reason of its own: persona.EndSilenceTimeout or persona.EndMaxDuration (a model's
// end_call is a nil error, as before).
type HangUp struct{ Reason string }

func (h *HangUp) Error() string { return "conversation: hung up: " + h.Reason }

// TurnTiming is speech.TurnTiming, under the name the stack benchmark knows it by.
type TurnTiming = speech.TurnTiming

// endCallTool is how hanging up is offered to the model: no arguments.
var endCallTool = speech.Tool{
	Name: persona.EndCallTool,
	Description: "End the phone call. Call it when the conversation is over (the caller said goodbye " +
		"or asked to hang up), after saying goodbye.",
	Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
}

// lookTool is how a fresh picture of the caller's video is offered to the model on a
// version with vision: no arguments; the picture follows the tool's result.
func lookTool(mode string) speech.Tool {
	what := map[string]string{persona.VisionCamera: "camera", persona.VisionScreen: "shared screen",
		persona.VisionCameraAndScreen: "camera and shared screen"}[mode]
	return speech.Tool{
		Name: persona.LookTool,
		Description: "Look at the caller's " + what + " right now. Each of the caller's turns already comes with " +
			"the latest picture; call this when you need a fresh one (the caller asks you to look, or shows you " +
			"something new). The picture follows the tool's result.",
		Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
	}
}

// transferCallTool is how transferring is offered to the model: one of the version's
// destinations, described.
func transferCallTool(ds []persona.TransferDestination) speech.Tool {
	var desc strings.Builder
	desc.WriteString("Transfer the phone call to a person or another line. First tell the caller in one short " +
		"sentence that you are transferring them, then call this tool. Destinations:")
	tos := make([]string, len(ds))
	for i, d := range ds {
		tos[i] = d.To
		fmt.Fprintf(&desc, " %s: %s.", d.To, d.Description)
	}
	params, _ := json.Marshal(map[string]any{
		"type": "object", "required": []string{"destination"},
		"properties": map[string]any{"destination": map[string]any{"type": "string", "enum": tos,
			"description": "where to transfer the call"}},
	})
	return speech.Tool{Name: persona.TransferCallTool, Description: desc.String(), Parameters: params}
}

// Config is what every call's conversation shares: the engines, loaded once when the
// worker starts, and the turn-taking settings.
type Config struct {
	// NewVAD makes a call's voice activity detector (it keeps per-call state).
	NewVAD func() (speech.VAD, error)
	// NewSuppressor makes a call's noise suppression, which the caller's audio passes
	// before the VAD and the recogniser unless the version turns it off; nil: none.
	NewSuppressor func() (speech.Suppressor, error)
	Recognizer    speech.Recognizer
	Model         speech.Model
	Voices        tts.Voices

	Threshold      float32       // default DefaultThreshold
	EndOfTurn      time.Duration // default DefaultEndOfTurn: the turn's words say nothing (or are unknown)
	FinishedTurn   time.Duration // default DefaultFinishedTurn (at most EndOfTurn)
	UnfinishedTurn time.Duration // default DefaultUnfinishedTurn (at least EndOfTurn)
	// FixedEndOfTurn ends every turn after EndOfTurn whatever its words (the rule before
	// end of turn by words; the benchmark's baseline).
	FixedEndOfTurn    bool
	FlushAfter        time.Duration // default DefaultFlushAfter (or EndOfTurn/2 when shorter); NoFlush: never
	MaxTurn           time.Duration // default DefaultMaxTurn
	Padding           time.Duration // default DefaultPadding
	Confirm           time.Duration // default DefaultConfirm
	FirstTokenTimeout time.Duration // default DefaultFirstTokenTimeout
	STTTimeout        time.Duration // default DefaultSTTTimeout
	MaxClause         int           // default DefaultMaxClause characters
	KeyGap            time.Duration // default DefaultKeyGap
	FillerAfter       time.Duration // default DefaultFillerAfter
	MaxToolRounds     int           // default DefaultMaxToolRounds
	StillThereWait    time.Duration // default DefaultStillThereWait
	FrameWait         time.Duration // default DefaultFrameWait
	LookWait          time.Duration // default DefaultLookWait
	Log               *slog.Logger
}

// Engine holds conversations.
type Engine struct {
	cfg Config
}

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
	if cfg.FlushAfter == 0 {
		cfg.FlushAfter = min(DefaultFlushAfter, cfg.EndOfTurn/2)
	}
	if cfg.FlushAfter >= cfg.EndOfTurn {
		return nil, fmt.Errorf("conversation: flush after %v must be shorter than the end-of-turn silence %v", cfg.FlushAfter, cfg.EndOfTurn)
	}
	def(&cfg.FinishedTurn, min(DefaultFinishedTurn, cfg.EndOfTurn))
	def(&cfg.UnfinishedTurn, max(DefaultUnfinishedTurn, cfg.EndOfTurn))
	cfg.FinishedTurn = min(cfg.FinishedTurn, cfg.EndOfTurn)
	cfg.UnfinishedTurn = max(cfg.UnfinishedTurn, cfg.EndOfTurn)
	def(&cfg.MaxTurn, DefaultMaxTurn)
	def(&cfg.Padding, DefaultPadding)
	def(&cfg.Confirm, DefaultConfirm)
	def(&cfg.FirstTokenTimeout, DefaultFirstTokenTimeout)
	def(&cfg.STTTimeout, DefaultSTTTimeout)
	def(&cfg.KeyGap, DefaultKeyGap)
	def(&cfg.FillerAfter, DefaultFillerAfter)
	def(&cfg.StillThereWait, DefaultStillThereWait)
	def(&cfg.FrameWait, DefaultFrameWait)
	def(&cfg.LookWait, DefaultLookWait)
	if cfg.MaxClause <= 0 {
		cfg.MaxClause = DefaultMaxClause
	}
	if cfg.MaxToolRounds <= 0 {
		cfg.MaxToolRounds = DefaultMaxToolRounds
	}
	if cfg.MaxTurn <= cfg.EndOfTurn {
		return nil, fmt.Errorf("conversation: max turn %v must be longer than the end-of-turn silence %v", cfg.MaxTurn, cfg.EndOfTurn)
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Engine{cfg: cfg}, nil
}

// RunOption sets how one call's conversation runs.
type RunOption func(*session)

// AnsweredAt is when the call was answered: the version's max_duration_seconds counts
// from it (default: from Run).
func AnsweredAt(t time.Time) RunOption {
	return func(s *session) {
		if !t.IsZero() {
			s.answered = t
		}
	}
}

// Run holds the conversation of version v on line, after its greeting, until ctx ends
// (the call is over: it returns ctx's error), the model ends the call and its goodbye
// has played (nil), or the conversation hangs up for a reason of its own (*HangUp: the
// caller stayed silent, the version's longest call was reached). It returns another
// error only when it could not start.
//
// The version's tools are offered to the model beside end_call when line can run them
// (speech.ToolRunner), and transfer_call when the version has transfer destinations.
//
// On a version with vision, when line shows the caller's video (speech.Viewer), each
// caller turn goes to the model with the latest frame of the sources the version names,
// and the look tool is offered for a fresh one. Only the request that answers a turn
// (and its tool rounds) carries the turn's pictures: the history keeps none, so older
// turns' pictures are not sent again, and nothing of them outlives the request.
func (e *Engine) Run(ctx context.Context, line speech.Line, v persona.Version, opts ...RunOption) error {
	vad, err := e.cfg.NewVAD()
	if err != nil {
		return fmt.Errorf("conversation: vad: %w", err)
	}
	defer vad.Close()
	if _, ok := e.cfg.Recognizer.(speech.Multilingual); !ok && !persona.SameLanguage(v.Language, persona.DefaultLanguage) {
		// The control plane refuses to publish a language STT_LANGUAGES does not list:
		// this worker's recogniser is not the one the deployment says it runs.
		e.cfg.Log.Warn("the recogniser hears English only; the version's language is another", "language", v.Language)
	}
	tr, err := speech.NewTranscriber(ctx, e.cfg.Recognizer, v.Language)
	if err != nil {
		return fmt.Errorf("conversation: transcriber: %w", err)
	}
	defer tr.Close()
	var quiet speech.Suppressor
	if e.cfg.NewSuppressor != nil && !v.NoiseSuppressionOff {
		// Before the VAD and the recogniser: what the caller's room sounds like is
		// neither speech nor words. The call's recording keeps the audio as it came.
		if quiet, err = e.cfg.NewSuppressor(); err != nil {
			return fmt.Errorf("conversation: noise suppression: %w", err)
		}
		defer quiet.Close()
	}
	s := &session{
		cfg: &e.cfg, log: e.cfg.Log, line: line, tr: tr, version: v, voice: persona.VoiceFor(v), quiet: quiet,
		rules: rulesFor(v.Language), say: phrasesFor(v.Language), interruption: newInterruptRule(v.Interruption),
		listen: listener{vad: vad, threshold: e.cfg.Threshold, endOfTurn: samples(e.cfg.EndOfTurn),
			maxTurn: samples(e.cfg.MaxTurn), padding: samples(e.cfg.Padding), log: e.cfg.Log},
	}
	s.answered, s.idleFor = time.Now(), DefaultIdleTimeout
	if v.IdleTimeoutSeconds > 0 {
		s.idleFor = time.Duration(v.IdleTimeoutSeconds) * time.Second
	}
	s.tools = []speech.Tool{endCallTool}
	if len(v.TransferDestinations) > 0 {
		s.tools = append(s.tools, transferCallTool(v.TransferDestinations))
	}
	if vw, ok := line.(speech.Viewer); ok && persona.VisionOrOff(v.Vision) != persona.VisionOff {
		s.viewer = vw
		s.tools = append(s.tools, lookTool(v.Vision))
	}
	if r, ok := line.(speech.ToolRunner); ok && len(v.Tools) > 0 {
		s.runner = r
		for _, t := range v.Tools {
			s.tools = append(s.tools, speech.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
		}
	}
	for _, o := range opts {
		o(s)
	}
	if v.SystemPrompt != "" {
		s.history = append(s.history, speech.Message{Role: speech.RoleSystem, Content: v.SystemPrompt})
	}
	if v.Greeting != "" {
		s.history = append(s.history, speech.Message{Role: speech.RoleAssistant, Content: v.Greeting})
	}
	return s.run(ctx)
}

// samples is d in samples at speech.Rate.
func samples(d time.Duration) int { return int(d.Seconds() * speech.Rate) }

// session is one call's conversation: it takes the listener's messages, runs the
// transcriber, holds the floor, keeps the history the model sees and starts replies.
// Its fields belong to the goroutine running run; a reply's goroutines hand their
// messages back over its channel.
type session struct {
	cfg     *Config
	log     *slog.Logger
	line    speech.Line
	tr      speech.Transcriber
	version persona.Version
	voice   string
	history []speech.Message

	quiet  speech.Suppressor // nil: none (the version turned it off, or no Config.NewSuppressor)
	listen listener
	turn   openTurn
	// rules are the version's language's turn-taking words; interruption, the
	// version's tuning of barge-in.
	rules        *turnRules
	interruption interruptRule
	// say are the version's language's own phrases (the apology, "are you still there?").
	say   phrases
	floor floor
	cur   *reply // the reply being thought or spoken
	// keys are keys pressed with no caller turn open: a turn of their own once the caller
	// stops pressing (keyGap).
	keys   []speech.Key
	keyGap *time.Timer

	// tools are offered to the model (end_call and the version's); runner runs the
	// version's, nil when the line cannot.
	tools  []speech.Tool
	runner speech.ToolRunner
	// viewer shows the model the caller's video (the version's vision); nil: off.
	viewer speech.Viewer

	answered time.Time // max_duration_seconds counts from here
	// idleFor is the version's idle timeout; idleSince is when the call last went
	// quiet (nobody speaking, no reply under way); asked says StillThere was asked.
	idleFor   time.Duration
	idleSince time.Time
	asked     bool
	// closing is the reason the conversation is hanging up, set while its last words
	// (TimeUp) play; the call ends when they are over.
	closing string
}

// openTurn is the caller's turn being transcribed.
type openTurn struct {
	onset   time.Time
	interim string // the interim words published last
	samples int    // the audio handed to the recogniser
	keys    []string
	// flushed: the recogniser was flushed in the caller's current pause, whose later
	// windows are held until the caller speaks again.
	flushed bool
	held    [][]int16
	// pause is the silence (samples) of the caller's current pause, as far as it went.
	pause int
}

// floor is who speaks when the caller talks over the assistant. The assistant pauses at
// the caller's onset; then the caller's words decide, as they come (a streaming
// recogniser's interim words) or at the turn's end:
//   - words that take the floor (a stop word, a question, words other than
//     acknowledgements) are a barge-in: the reply is cancelled;
//   - an acknowledgement ("uh-huh") is a backchannel: the assistant goes on at once and
//     the words are no turn;
//   - no words at all (a cough, a door) resume the assistant where it paused; when the
//     sound outlasted Confirm, it counts as a false interruption.
//
// Until words decide, the paused reply is held, not cancelled: the caller hears the
// same silence as after a cut, and the reply can still go on. With the version's
// interruption off, speech that outlasts Confirm, or has words, cuts it at once.
type floor struct {
	over      bool    // the caller's open turn started over the assistant
	paused    bool    // the assistant is paused for the caller
	live      bool    // it was speaking when paused, not only about to
	confirmed bool    // the caller's speech over it outlasted Confirm
	verdict   verdict // what the caller's words over it are, so far
}

func (s *session) run(ctx context.Context) error {
	// However the conversation ends, a reply under way stops, and what the caller heard
	// of it is recorded.
	defer func() {
		if s.cur != nil {
			s.cur.cancel()
			s.finishReply(s.waitReply(), false)
		}
		s.countAudio() // a turn the call's end cut short
	}()
	audio := s.line.Audio()
	var keys <-chan speech.Key
	if kp, ok := s.line.(speech.Keypad); ok {
		keys = kp.Keys()
	}
	var transferFailures <-chan speech.TransferFailure
	if tw, ok := s.line.(speech.TransferWatcher); ok {
		transferFailures = tw.TransferFailures()
	}
	s.keyGap = time.NewTimer(time.Hour)
	s.keyGap.Stop()
	defer s.keyGap.Stop()
	var timeUp <-chan time.Time
	if m := s.version.MaxDurationSeconds; m > 0 {
		t := time.NewTimer(time.Until(s.answered.Add(time.Duration(m) * time.Second)))
		defer t.Stop()
		timeUp = t.C
	}
	s.idleSince = time.Now()
	for {
		var replied <-chan replyMsg
		if s.cur != nil {
			replied = s.cur.msgs
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case k := <-keys:
			s.keyPressed(k)
		case <-s.keyGap.C:
			s.keysDone(ctx)
		case f := <-transferFailures:
			s.transferFailed(ctx, f)
		case f := <-audio:
			now := time.Now()
			if s.quiet != nil {
				f = s.quiet.Process(f)
			}
			for _, m := range s.listen.hear(f, now) {
				if err := s.handle(ctx, m); err != nil {
					return err
				}
			}
			if err := s.checkIdle(ctx, now); err != nil {
				return err
			}
		case m := <-replied:
			done, ok := s.replyMsg(m)
			if !ok {
				break
			}
			res := done.res
			if s.finishReply(res, false) {
				if res.transferTo == "" {
					return nil // the model ended the call and its goodbye played
				}
				if s.transfer(ctx, res.transferTo) {
					return nil // transferred: the caller is with the destination
				}
			}
			if s.closing != "" {
				return &HangUp{Reason: s.closing} // the last words are over
			}
		case <-timeUp:
			timeUp = nil
			s.close(ctx, persona.EndMaxDuration, s.say.timeUp)
		}
	}
}

// checkIdle follows the call's silence, at each frame of caller audio (the line sends
// them, silence included, every 20 ms): after the version's idle timeout with nobody
// speaking and no reply under way, it asks whether the caller is still there, once; a
// caller silent for StillThereWait after the question is gone (silence_timeout). Any
// speech from the caller starts the count again.
func (s *session) checkIdle(ctx context.Context, now time.Time) error {
	if s.closing != "" {
		return nil
	}
	if s.listen.inSpeech || s.cur != nil || s.line.Speaking() || len(s.keys) > 0 {
		s.idleSince = now
		return nil
	}
	quiet := now.Sub(s.idleSince)
	switch {
	case !s.asked && quiet >= s.idleFor:
		s.asked = true
		s.idleSince = now
		s.startReply(ctx, speech.TurnTiming{}, s.say.stillThere)
	case s.asked && quiet >= s.cfg.StillThereWait:
		return &HangUp{Reason: persona.EndSilenceTimeout}
	}
	return nil
}

// close hangs up for reason after saying last: what is under way stops (what the
// caller heard of it is recorded), last is said, and the call ends once it has played.
// The caller's speech no longer interrupts.
func (s *session) close(ctx context.Context, reason, last string) {
	s.closing = reason
	if s.cur != nil {
		s.cur.cancel()
		s.finishReply(s.waitReply(), false)
	}
	s.line.CutAll()
	s.line.Resume()
	s.floor = floor{}
	s.startReply(ctx, speech.TurnTiming{}, last)
}

// handle takes one message of the listener.
func (s *session) handle(ctx context.Context, m heard) error {
	if s.closing != "" {
		return nil // hanging up: the last words play out
	}
	switch m := m.(type) {
	case speechStarted:
		s.speechStarted(m)
	case speechGoesOn:
		s.speechGoesOn(m)
	case turnEnded:
		return s.turnEnded(ctx, m)
	}
	return nil
}

// speechStarted opens a caller turn at speech onset; over the assistant it pauses the
// assistant at once.
func (s *session) speechStarted(m speechStarted) {
	s.turn = openTurn{onset: m.onset}
	s.asked = false // the caller is there
	if s.viewer != nil {
		s.viewer.Refresh() // a frame of this turn, ready when it ends
	}
	if err := s.tr.Begin(); err != nil {
		s.log.Warn("transcriber begin", "err", err)
	}
	for _, a := range m.audio {
		_ = s.tr.Write(a)
		s.turn.samples += len(a)
	}
	s.listen.endOfTurn = samples(s.cfg.EndOfTurn)
	s.floor = floor{}
	if s.cur != nil || s.line.Speaking() {
		live := s.line.Speaking()
		s.line.Pause()
		s.floor = floor{over: true, paused: true, live: live}
		if live {
			s.line.Publish(speech.Latency{Step: speech.BargeInStop, Took: time.Since(m.onset)})
		}
	}
	s.publishInterim()
	s.weigh(0, 0)
}

// speechGoesOn takes a window of the open turn.
func (s *session) speechGoesOn(m speechGoesOn) {
	if m.silence == 0 {
		if !s.cfg.FixedEndOfTurn && s.turn.pause >= samples(s.cfg.EndOfTurn) {
			// The caller went on after a pause the fixed silence would have ended the
			// turn at.
			s.line.Publish(speech.TurnTaking{Kind: speech.MidSentenceWait})
		}
		s.turn.pause = 0
	} else {
		s.turn.pause = m.silence
	}
	s.feed(m)
	if c, ok := s.tr.(speech.InterimCatcher); ok && m.silence > 0 {
		c.CatchUp() // the pause is weighed with the words up to its start
	}
	s.publishInterim()
	s.weigh(m.spoken, m.silence)
}

// weigh decides, at each window of a turn started over the assistant, what the
// caller's speech so far is (floor), and sets the silence that will end the turn by the
// words so far. spoken is the turn's speech so far, silence the caller's current pause
// (samples).
func (s *session) weigh(spoken, silence int) {
	if !s.cfg.FixedEndOfTurn {
		switch s.rules.ending(s.turn.interim) {
		case finished:
			s.listen.endOfTurn = samples(s.cfg.FinishedTurn)
		case unfinished:
			s.listen.endOfTurn = samples(s.cfg.UnfinishedTurn)
		default:
			s.listen.endOfTurn = samples(s.cfg.EndOfTurn)
		}
	}
	if !s.floor.over || s.floor.verdict == cutIn {
		return
	}
	confirmed := spoken >= samples(s.cfg.Confirm)
	if s.interruption.off {
		if confirmed || s.turn.interim != "" {
			s.floor.confirmed = confirmed
			s.bargeIn()
		}
		return
	}
	switch s.rules.judge(s.turn.interim, s.interruption, false) {
	case cutIn:
		s.bargeIn()
	case backchannel:
		if silence == 0 && s.floor.paused {
			// Acknowledgements so far, but the caller is still speaking: "yeah, but..."
			// may follow. The assistant goes on when they pause.
			break
		}
		s.floor.verdict = backchannel
		if s.floor.paused { // the assistant goes on at once
			s.line.Resume()
			s.floor.paused = false
		}
	default:
		// No words yet: held while the caller makes sound; the words, or their
		// absence at the turn's end, decide.
		s.floor.confirmed = s.floor.confirmed || confirmed
	}
}

// feed gives the recogniser a window of the open turn. A recogniser that can flush
// (speech.Flusher) is flushed once per pause of the caller, at the window whose silence
// reaches FlushAfter, and the pause's later windows are held back: when the caller
// speaks again they go first, so the recogniser hears the whole turn in order; when the
// pause ends the turn, it never gets them and End waits for nothing but the flush's
// answer, which came during the pause.
func (s *session) feed(m speechGoesOn) {
	f, flusher := s.tr.(speech.Flusher)
	if flusher && s.cfg.FlushAfter > 0 {
		switch {
		case m.silence == 0:
			for _, w := range s.turn.held {
				s.write(w)
			}
			s.turn.held, s.turn.flushed = nil, false
		case s.turn.flushed:
			s.turn.held = append(s.turn.held, m.window)
			return
		case m.silence >= min(samples(s.cfg.FlushAfter), s.listen.endOfTurn/2) && m.silence < s.listen.endOfTurn:
			s.write(m.window)
			if err := f.Flush(); err != nil {
				s.log.Warn("transcriber flush", "err", err)
			}
			s.turn.flushed = true
			return
		}
	}
	s.write(m.window)
}

// write hands the recogniser audio of the open turn.
func (s *session) write(w []int16) {
	if err := s.tr.Write(w); err != nil {
		s.log.Warn("transcriber write", "err", err)
	}
	s.turn.samples += len(w)
}

// publishInterim publishes the words of the open turn when a streaming recogniser has
// new ones.
func (s *session) publishInterim() {
	ir, ok := s.tr.(speech.Interimer)
	if !ok {
		return
	}
	if text := ir.Interim(); text != "" && text != s.turn.interim {
		s.turn.interim = text
		s.line.Publish(speech.Words{Speaker: speech.Caller, Text: text, Start: s.turn.onset})
	}
}

// bargeIn cancels what the assistant is saying: the caller took the floor.
func (s *session) bargeIn() {
	if s.floor.live && (s.cur != nil || s.line.Speaking()) {
		s.line.Publish(speech.BargeIn{})
	}
	if s.cur != nil {
		s.cur.cancel()
		s.finishReply(s.waitReply(), true)
	}
	s.line.CutAll()
	s.line.Resume()
	s.floor.paused, s.floor.verdict = false, cutIn
}

// resume gives the floor back to the assistant, paused for the caller's sound.
func (s *session) resume() {
	if s.floor.paused {
		s.line.Resume()
		s.floor.paused = false
	}
}

// turnEnded closes the caller's turn: transcribe, and answer it unless it was noise.
func (s *session) turnEnded(ctx context.Context, m turnEnded) error {
	sctx, cancel := context.WithTimeout(ctx, s.cfg.STTTimeout)
	text, err := s.tr.End(sctx)
	cancel()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	transcribed := time.Now()
	s.line.Publish(speech.Latency{Step: speech.STTFinal, Took: transcribed.Sub(m.at)})
	s.countAudio()
	text = strings.TrimSpace(text)
	if err != nil {
		s.log.Warn("transcription failed", "err", err)
		s.line.Publish(speech.Failure{Kind: speech.STTError})
	}
	if len(s.turn.keys) > 0 { // keys pressed while the caller spoke are in the turn
		text = strings.TrimSpace(text + " " + keyTexts(s.turn.keys))
		err = nil
	}
	held := s.floor.over && s.floor.verdict != cutIn
	if text == "" && err == nil {
		// Noise, or a cough over the assistant: it goes on where it paused.
		s.closeTurn(text, m, 0)
		if held && s.floor.confirmed && !s.interruption.off && (s.cur != nil || s.line.Speaking()) {
			s.line.Publish(speech.TurnTaking{Kind: speech.FalseInterruption})
		}
		s.resume()
		s.floor = floor{}
		return nil
	}
	if held && err == nil && len(s.turn.keys) == 0 && !s.interruption.off && (s.cur != nil || s.line.Speaking()) &&
		s.rules.judge(text, s.interruption, true) == backchannel {
		// An acknowledgement over the assistant: it goes on; the words are marked, and
		// no turn. Once the assistant has nothing left to say ("yes" over the end of its
		// question), the words are a turn like any other.
		s.line.Publish(speech.Words{Speaker: speech.Caller, Text: text, Final: true, Start: m.onset, End: m.lastSpeech, Backchannel: true})
		s.line.Publish(speech.TurnTaking{Kind: speech.Backchanneled})
		s.resume()
		s.floor = floor{}
		return nil
	}
	if held { // words ("no!", "wait") take the floor
		s.bargeIn()
	}
	if text != "" && len(s.turn.keys) == 0 && s.rules.ending(text) == unfinished {
		// The turn ends on unfinished words: the caller's pause outlasted even the
		// longer wait (or, with FixedEndOfTurn, the fixed silence).
		s.line.Publish(speech.TurnTaking{Kind: speech.MidSentenceCut})
	}
	s.floor = floor{}
	var pictures []speech.Picture
	if text != "" && s.viewer != nil {
		fctx, cancel := context.WithTimeout(ctx, s.cfg.FrameWait)
		pictures = s.viewer.Pictures(fctx, s.turn.onset)
		cancel()
	}
	s.closeTurn(text, m, len(pictures))
	tm := speech.TurnTiming{LastSpeech: m.lastSpeech, Decided: m.at, Transcribed: transcribed}
	if text == "" {
		s.startReply(ctx, tm, s.say.missed)
		return nil
	}
	s.history = append(s.history, speech.Message{Role: speech.RoleUser, Content: text, Pictures: pictures})
	s.startReply(ctx, tm, "")
	return nil
}

// countAudio tells the caller audio the recogniser got in the open turn, once.
func (s *session) countAudio() {
	if n := s.turn.samples; n > 0 {
		s.turn.samples = 0
		s.line.Publish(speech.Used{STTAudio: time.Duration(n) * time.Second / speech.Rate})
	}
}

// transfer hands the call to to, after the handover sentence played; it reports whether
// the call went. A transfer that fails is said to the caller, and the call goes on.
func (s *session) transfer(ctx context.Context, to string) bool {
	tl, ok := s.line.(speech.Transferrer)
	var err error
	if !ok {
		err = errors.New("the line cannot transfer calls")
	} else {
		err = tl.Transfer(ctx, to)
	}
	if err == nil {
		return true
	}
	if ctx.Err() != nil {
		return true // the call ended meanwhile
	}
	s.log.Warn("transfer failed", "to", redact.Number(to), "err", err)
	s.startReply(ctx, speech.TurnTiming{}, s.say.transferFailed)
	return false
}

// transferFailed tells the caller that a transfer the assistant did not wait for failed
// (an API transfer of the call): what is being said stops, and TransferFailed is said.
// A caller who is being hung up on hears the last words instead.
func (s *session) transferFailed(ctx context.Context, f speech.TransferFailure) {
	s.log.Warn("transfer failed", "to", redact.Number(f.To), "failure", f.Failure, "by_assistant", f.ByAssistant)
	if s.closing != "" {
		return
	}
	s.interrupt()
	s.idleSince, s.asked = time.Now(), false
	s.startReply(ctx, speech.TurnTiming{}, s.say.transferFailed)
}

// interrupt stops what the assistant is saying or about to say (what the caller heard
// of it is recorded) and gives the floor back.
func (s *session) interrupt() {
	if s.cur != nil {
		s.cur.cancel()
		s.finishReply(s.waitReply(), true)
	}
	s.line.CutAll()
	s.line.Resume()
	s.floor = floor{}
}

// keyPressed takes a key the caller pressed: it joins the caller's turn under way, or
// starts (or extends) a turn of keys, which interrupts the assistant at once.
func (s *session) keyPressed(k speech.Key) {
	if s.closing != "" {
		return // hanging up: the last words play out
	}
	s.idleSince, s.asked = time.Now(), false // a key pressed: the caller is there
	if s.listen.inSpeech {
		s.turn.keys = append(s.turn.keys, k.Digit)
		return
	}
	if len(s.keys) == 0 && (s.cur != nil || s.line.Speaking()) {
		s.line.Publish(speech.BargeIn{})
		s.interrupt()
	}
	s.keys = append(s.keys, k)
	s.keyGap.Reset(s.cfg.KeyGap)
}

// keysDone closes a turn of keys: the caller's words are the keys (KeyText each), and
// the model answers them.
func (s *session) keysDone(ctx context.Context) {
	if len(s.keys) == 0 || s.closing != "" {
		return
	}
	digits := make([]string, len(s.keys))
	for i, k := range s.keys {
		digits[i] = k.Digit
	}
	first, last := s.keys[0].At, s.keys[len(s.keys)-1].At
	s.keys = nil
	text := keyTexts(digits)
	s.line.Publish(speech.Words{Speaker: speech.Caller, Text: text, Final: true, Start: first, End: last})
	if s.cur != nil { // a reply to speech that ended meanwhile: the keys come after it
		s.cur.cancel()
		s.finishReply(s.waitReply(), true)
	}
	s.history = append(s.history, speech.Message{Role: speech.RoleUser, Content: text})
	now := time.Now()
	s.startReply(ctx, speech.TurnTiming{LastSpeech: last, Decided: now, Transcribed: now}, "")
}

// keyTexts is keys as they read in a turn: "[pressed 1] [pressed #]".
func keyTexts(digits []string) string {
	parts := make([]string, len(digits))
	for i, d := range digits {
		parts[i] = speech.KeyText(d)
	}
	return strings.Join(parts, " ")
}

// closeTurn publishes the caller's final words, if the turn had any, with the number of
// pictures of the caller that go to the model with them.
func (s *session) closeTurn(text string, m turnEnded, frames int) {
	if text != "" {
		s.line.Publish(speech.Words{Speaker: speech.Caller, Text: text, Final: true, Start: m.onset, End: m.lastSpeech, Frames: frames})
	}
}
