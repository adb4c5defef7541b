// Package speech is the contract between a call's conversation and what it drives: the
// engines (voice activity detector, recogniser, language model; the synthesizer's is
// package tts) and the line (the call as the conversation sees it: the caller's audio in,
// the assistant's speech out, and the events the conversation tells the call).
//
// It imports no media stack, so the conversation (mediafleet/conversation) and the
// engines (vad, stt, llm) build and test without WebRTC, codecs or cgo; the persona worker
// adapts its LiveKit call to Line. TestNoMediaImports keeps it so.
//
// What comes next plugs in here without changing these interfaces:
//   - a streaming recogniser (a WebSocket API with interim and final results) is a
//     Transcriber: NewTranscriber opens the connection and keeps it alive between turns
//     (keep-alives, reconnects), Write streams the turn's audio, End asks for the final
//     result (Deepgram's Finalize) and waits for it; its interim results come through
//     Interimer, which the conversation already publishes as interim caller Words, and
//     it may finish the words heard so far in a pause before the turn ends (Flusher);
//   - live captions are the Words events: interim while the caller speaks, final per
//     turn, the assistant's words as each sentence starts playing and final when the
//     reply ends, cut at a barge-in;
//   - tools beyond end_call are Tools in the Request and ToolCalls in the Stream, with
//     their results sent back as RoleTool messages;
//   - keypad digits, recording, idle prompts, a maximum duration and usage counters are
//     new fields and Event types (the Line's Publish takes any Event).
package speech

import "context"

// Rate is the sample rate of the caller's audio on a Line, and of what VAD and
// Transcriber take.
const Rate = 16000

// VAD scores the caller's audio for speech, one fixed-size window at a time. It keeps
// state from one window to the next, so each call has its own.
type VAD interface {
	// WindowSize is the number of samples (at Rate) Prob takes: 512, 32 ms, for Silero.
	WindowSize() int
	// Prob is the probability, 0..1, that the window holds speech.
	Prob(window []int16) (float32, error)
	// Reset forgets the state carried between windows.
	Reset()
	// Close frees the detector.
	Close() error
}

// Suppressor takes noise out of the caller's audio, in pieces of any length, handing
// back as many samples as it is given (a stream that may run a little late). It keeps
// state (its estimate of the noise), so each call has its own.
type Suppressor interface {
	Process(pcm []int16) []int16
	Close()
}

// Recognizer makes a Transcriber per call; it holds what calls share (a loaded model, a
// pool of decoders, an API's configuration).
type Recognizer interface {
	NewTranscriber(ctx context.Context) (Transcriber, error)
}

// Multilingual is a Recognizer that hears more than one language (Deepgram's): the
// conversation asks it for a transcriber of the version's language, a BCP-47 tag ("" is
// the recogniser's own default). A Recognizer that is not one hears its own language
// only (pocketsphinx: English).
type Multilingual interface {
	NewTranscriberIn(ctx context.Context, language string) (Transcriber, error)
}

// NewTranscriber is r's transcriber for a call in language: r's NewTranscriberIn when it
// is Multilingual, else its one language's.
func NewTranscriber(ctx context.Context, r Recognizer, language string) (Transcriber, error) {
	if m, ok := r.(Multilingual); ok {
		return m.NewTranscriberIn(ctx, language)
	}
	return r.NewTranscriber(ctx)
}

// Transcriber transcribes one call's caller turns, one turn at a time. Audio is written
// while the caller speaks, so a recogniser that decodes as it goes has the text soon
// after the turn ends; one that takes whole files buffers the turn and sends it at End.
type Transcriber interface {
	// Begin starts a turn. The audio written next is the turn's (including the padding
	// before speech onset the conversation keeps).
	Begin() error
	// Write adds audio (mono, at Rate) to the current turn.
	Write(pcm []int16) error
	// End finishes the turn and returns its text ("" when no words were recognised).
	End(ctx context.Context) (string, error)
	// Abort drops the current turn.
	Abort()
	// Close frees the transcriber.
	Close() error
}

// Interimer is a Transcriber that knows the words of the open turn before it ends (a
// streaming recogniser's interim results). The conversation asks after every window it
// writes and publishes each change as interim caller Words (live captions).
type Interimer interface {
	// Interim is the text of the open turn so far; "" before any word.
	Interim() string
}

// InterimCatcher is an Interimer that reads its interim words at intervals (a few times
// a second: captions need no more) rather than as each audio window is written, so
// they can lag the last word by that interval. The conversation calls CatchUp at each
// window of a caller's pause before it asks Interim: whether the pause ends the turn is
// decided on how the words end, and a pause after "a table for" must be weighed with
// its "for".
type InterimCatcher interface {
	Interimer
	// CatchUp reads the open turn's words now, from all the audio written so far; the
	// next Interim returns them. It does not end the turn or change what End returns.
	CatchUp()
}

// Flusher is a Transcriber that can finish the words heard so far while the turn stays
// open (Deepgram's Finalize). The conversation calls Flush once per pause of the caller,
// part way into the silence that may end the turn, so the recogniser's own time to
// final text runs during that silence instead of after it: when the pause does end the
// turn, End has little or nothing left to wait for; when the caller goes on, the audio
// after the Flush is transcribed as before and the turn's text is all of it, in order.
type Flusher interface {
	// Flush asks for the final words of the turn's audio written so far. It does not
	// wait for them and does not end the turn: Write, Flush and End go on as before.
	Flush() error
}
