// Package conversation is the real-time conversation of an assistant call, after the
// greeting: it listens to the caller (voice activity detection), decides when the
// caller's turn is over, transcribes it, asks a language model, speaks the reply sentence
// by sentence as the model streams, and yields to the caller when they talk over it
// (barge-in).
//
// The engines it drives are the interfaces below; the worker plugs in Silero VAD
// (mediafleet/vad), pocketsphinx or a hosted recogniser (mediafleet/stt), an
// OpenAI-compatible model or the built-in responder (mediafleet/llm), and flite,
// espeak-ng or a hosted synthesizer (mediafleet/tts).
package conversation

import "context"

// VAD scores the caller's audio for speech, one fixed-size window at a time. It keeps
// state from one window to the next, so each call has its own.
type VAD interface {
	// WindowSize is the number of 16 kHz samples Prob takes (512, 32 ms, for Silero).
	WindowSize() int
	// Prob is the probability, 0..1, that the window holds speech.
	Prob(window []int16) (float32, error)
	// Reset forgets the state carried between windows.
	Reset()
	// Close frees the detector.
	Close() error
}

// Recognizer makes a Transcriber per call; it holds what calls share (a loaded model).
type Recognizer interface {
	NewTranscriber(ctx context.Context) (Transcriber, error)
}

// Transcriber transcribes one call's caller turns, one turn at a time, streaming: audio
// is written while the caller speaks, so the text is ready soon after the turn ends.
type Transcriber interface {
	// Begin starts a turn. The audio written next is the turn's (including the padding
	// before speech onset the conversation keeps).
	Begin() error
	// Write adds 16 kHz mono audio to the current turn.
	Write(pcm []int16) error
	// End finishes the turn and returns its text ("" when no words were recognised).
	End(ctx context.Context) (string, error)
	// Abort drops the current turn (it was noise or a cough).
	Abort()
	// Close frees the transcriber.
	Close() error
}

// Roles of a Message.
const (
	RoleSystem    = "system"
	RoleAssistant = "assistant"
	RoleUser      = "user"
)

// Message is one message of the conversation sent to the model.
type Message struct {
	Role    string
	Content string
}

// Request is one reply asked of the model.
type Request struct {
	// Model overrides the deployment's default model when set (a version's `model`).
	Model    string
	Messages []Message
	// EndCallTool offers the model the end_call tool.
	EndCallTool bool
}

// Model is a language model that streams its reply.
type Model interface {
	Stream(ctx context.Context, req Request) (Stream, error)
}

// Stream is a reply as it arrives. Cancelling the context given to Model.Stream stops it.
type Stream interface {
	// Next returns the next piece of the reply; io.EOF after the last.
	Next() (Chunk, error)
	Close() error
}

// Chunk is a piece of a streamed reply: text, or the model's call of the end_call tool
// (the assistant finishes what it is saying and hangs up).
type Chunk struct {
	Text    string
	EndCall bool
}
