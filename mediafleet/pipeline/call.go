package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/avatar"
	"github.com/bridgeline/bridgeline/mediafleet/resample"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Conversation is what happens on a call after the greeting. The real-time conversation
// (speech recognition, a language model, speech, barge-in) implements it. Converse runs
// until ctx ends (the call is over) or returns to hang up; an error ends the call with
// end reason "error".
type Conversation interface {
	Converse(ctx context.Context, call *Call) error
}

// Listen is the conversation of this stage: it holds the line, draining the caller's
// audio, until the call ends.
type Listen struct{}

// Converse waits for the end of the call.
func (Listen) Converse(ctx context.Context, call *Call) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-call.CallerAudio():
		}
	}
}

// Call is a Conversation's handle on the running call.
type Call struct {
	c *call
}

// Job is the dispatch the call runs with (version snapshot, brand, caller).
func (k *Call) Job() persona.Job { return k.c.job }

// SinceAnswer is the time since the call was answered.
func (k *Call) SinceAnswer() time.Duration { return time.Since(k.c.answered) }

// CallerAudio delivers the caller's decoded audio: mono frames at ListenRate, 20 ms each
// as the caller sends them. Frames are dropped while nobody reads.
func (k *Call) CallerAudio() <-chan []int16 { return k.c.listener.frames }

// Speaking reports whether the assistant is speaking (or has speech queued).
func (k *Call) Speaking() bool { return k.c.speaker.speaking() }

// Say speaks text in the avatar's voice and records the turn. It returns when the speech
// has played, or early when ctx ends, cutting the rest (barge-in): the recorded turn then
// ends where it was cut.
func (k *Call) Say(ctx context.Context, text string) (persona.Turn, error) {
	c := k.c
	av, ok := avatar.Lookup(c.job.Version.AvatarID)
	if !ok {
		av = avatar.Default()
	}
	pcm, err := c.r.cfg.Voices(av.Voice).Synthesize(ctx, text)
	if err != nil {
		return persona.Turn{}, fmt.Errorf("synthesize: %w", err)
	}
	out, err := resample.Mono(pcm.Samples, pcm.Rate, outRate)
	if err != nil {
		return persona.Turn{}, err
	}
	var startedAt time.Time
	started := make(chan struct{})
	u := c.speaker.say(out, func(at time.Time) { startedAt = at; close(started) })
	select {
	case <-u.done:
	case <-ctx.Done():
		c.speaker.cut(u)
		<-u.done
	}
	turn := persona.Turn{Speaker: "assistant", Text: text}
	select {
	case <-started:
		turn.StartMS, turn.EndMS = c.sinceAnswer(startedAt), c.sinceAnswer(u.endedAt)
	default: // cut before a single frame played
		turn.StartMS = c.sinceAnswer(u.endedAt)
		turn.EndMS = turn.StartMS
	}
	k.AddTurn(turn)
	return turn, ctx.Err()
}

// AddTurn appends a turn (a recognised caller utterance, say) to the call's transcript.
func (k *Call) AddTurn(t persona.Turn) {
	k.c.mu.Lock()
	k.c.transcript = append(k.c.transcript, t)
	k.c.mu.Unlock()
}
