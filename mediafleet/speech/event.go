package speech

import "time"

// Event is something that happened in a conversation, which it tells its Line
// (Line.Publish): one of the types below.
type Event interface{ event() }

// Speaker says whose Words they are.
type Speaker string

// Speakers.
const (
	Caller    Speaker = "caller"
	Assistant Speaker = "assistant"
)

// Words are one side's words in one turn, as far as they are known: what live captions
// show, and, once final, the transcript's turn.
//
// The caller's come while they speak from a recogniser that transcribes as it goes
// (Interimer), then final when their turn ends. The assistant's come as each sentence
// starts playing (Text is every sentence started so far), then final when the reply has
// played, was cut, or the call ended, with Text cut to what the caller heard. A turn
// that turned out to hold no words (noise, a reply cut before its first word) has no
// final words; the greeting's are final whenever it started playing.
type Words struct {
	Speaker Speaker
	Text    string
	Final   bool
	// Start is the caller's speech onset, or the assistant's first frame sent. End, on
	// final words, is the end of the caller's last speech, or of the assistant's last
	// frame sent.
	Start, End time.Time
	// Interrupted marks final assistant words the caller talked over (barge-in).
	Interrupted bool
	// Backchannel marks final caller words said over the assistant that did not take
	// the floor ("uh-huh", "right"): the reply went on, and they are no turn the model
	// answers.
	Backchannel bool
	// Frames is how many pictures of the caller (vision) went to the model with final
	// caller words.
	Frames int
}

// Answered is told when the reply to a caller turn started playing, with the moments
// of each stage of answering it.
type Answered struct{ Timing TurnTiming }

// TurnTiming is when each stage of answering one caller turn finished, as the worker saw
// it: the stamps that split the response time into its parts.
type TurnTiming struct {
	LastSpeech  time.Time // end of the turn's last speech window (its arrival)
	Decided     time.Time // the end-of-turn silence was complete: the turn is over
	Transcribed time.Time // the recogniser's final text
	FirstToken  time.Time // the model's first token (zero for a fixed reply)
	Synthesized time.Time // the first sentence synthesised and queued on the line
	FirstSent   time.Time // its first frame sent to the caller
}

// Response is the time from the end of the caller's speech to the first reply frame
// sent.
func (t TurnTiming) Response() time.Duration { return t.FirstSent.Sub(t.LastSpeech) }

// Step is a step of the conversation whose latency is measured.
type Step string

// Steps measured by Latency.
const (
	// STTFinal: the end of a caller's turn to its final text (noise and coughs included).
	STTFinal Step = "stt_final"
	// LLMFirstToken: the request sent to the model to its first token.
	LLMFirstToken Step = "llm_first_token"
	// TTSFirstAudio: a sentence handed to the synthesizer to its audio queued.
	TTSFirstAudio Step = "tts_first_audio"
	// BargeInStop: the caller's speech onset over the assistant to its speech pausing.
	BargeInStop Step = "barge_in_stop"
)

// Latency is how long one occurrence of a step took.
type Latency struct {
	Step Step
	Took time.Duration
}

// BargeIn is told when the caller cut the assistant off: speech over it that outlasted
// the confirmation time, or shorter speech with words.
type BargeIn struct{}

// TurnKind is a turn-taking decision TurnTaking tells.
type TurnKind string

// Turn-taking decisions.
const (
	// Backchanneled: the caller acknowledged over the assistant ("uh-huh"); the reply
	// went on.
	Backchanneled TurnKind = "backchannel"
	// FalseInterruption: sound over the assistant outlasted the confirmation time but
	// held no words (a cough, a door); the reply resumed where it stopped.
	FalseInterruption TurnKind = "false_interruption"
	// MidSentenceWait: the caller paused longer than the fixed end-of-turn silence
	// after unfinished words ("I'd like to book a") and went on: the longer wait kept
	// the turn whole.
	MidSentenceWait TurnKind = "mid_sentence_wait"
	// MidSentenceCut: a caller's turn ended on unfinished words and was answered: the
	// pause outlasted the longest wait.
	MidSentenceCut TurnKind = "mid_sentence_cut"
)

// TurnTaking is told of each turn-taking decision that differs from deciding by sound
// alone.
type TurnTaking struct{ Kind TurnKind }

func (TurnTaking) event() {}

// FailureKind is what failed.
type FailureKind string

// Failures the conversation recovers from (it apologises, or asks the caller to say it
// again).
const (
	LLMError   FailureKind = "llm_error"
	LLMTimeout FailureKind = "llm_timeout"
	STTError   FailureKind = "stt_error"
	TTSError   FailureKind = "tts_error"
)

// Failure is told of each failure the conversation recovered from.
type Failure struct{ Kind FailureKind }

// ToolUsed is told of each call of a customer's tool, once it is over: what the model
// asked, what came back, and when (Start: the model's call; End: the answer or the
// error).
type ToolUsed struct {
	Call       ToolCall
	Result     ToolResult
	Start, End time.Time
	// Frames is how many pictures the call brought the model (LookTool).
	Frames int
}

func (ToolUsed) event() {}

// Used is told of what a part of the call used, as it is known: caller audio handed to
// the recogniser (at each turn's end), characters synthesised, a model request's tokens
// (Estimated when the model reported none and they were counted by EstimateTokens). The
// call's record sums them for its usage.
type Used struct {
	STTAudio                       time.Duration
	TTSCharacters                  int
	PromptTokens, CompletionTokens int
	Estimated                      bool
}

func (Used) event() {}

func (Words) event()    {}
func (Answered) event() {}
func (Latency) event()  {}
func (BargeIn) event()  {}
func (Failure) event()  {}
