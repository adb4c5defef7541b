package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/resample"
	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Conversation is what happens on a call after the greeting. The real-time conversation
// (mediafleet/conversation, which the worker runs on the Call as its speech.Line)
// implements it. Converse runs until ctx ends (the call is over) or returns to hang up;
// an error ends the call with end reason "error".
type Conversation interface {
	Converse(ctx context.Context, call *Call) error
}

// Listen is the conversation of a worker without speech engines: it holds the line,
// draining the caller's audio, until the call ends.
type Listen struct{}

// Converse waits for the end of the call.
func (Listen) Converse(ctx context.Context, call *Call) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-call.Audio():
		}
	}
}

// Call is the running LiveKit call as a Conversation sees it: a speech.Line (the
// caller's decoded audio in, speech out through the call's speaker, events into the
// call's record) and the job it runs.
type Call struct {
	c *call
}

var _ speech.Line = (*Call)(nil)

// Job is the dispatch the call runs with (version snapshot, brand, caller).
func (k *Call) Job() persona.Job { return k.c.job }

// Audio delivers the caller's decoded audio: mono frames at speech.Rate, 20 ms each as
// the caller sends them, with the silence their client did not send filled in. Frames
// are dropped while nobody reads.
func (k *Call) Audio() <-chan []int16 { return k.c.listener.frames }

// Speaking reports whether the assistant is speaking (or has speech queued).
func (k *Call) Speaking() bool { return k.c.speaker.speaking() }

// Speak queues pcm after whatever is queued and returns at once; the speaker paces it
// out in real time.
func (k *Call) Speak(pcm tts.PCM) (speech.Playback, error) {
	out, err := resample.Mono(pcm.Samples, pcm.Rate, outRate)
	if err != nil {
		return nil, fmt.Errorf("resample speech: %w", err)
	}
	return playback{u: k.c.speaker.say(out), s: k.c.speaker}, nil
}

// Pause silences the assistant at the next 20 ms frame, keeping its place (barge-in
// onset); Resume carries on from there.
func (k *Call) Pause() { k.c.speaker.pause() }

// Resume undoes Pause.
func (k *Call) Resume() { k.c.speaker.resume() }

// CutAll drops all queued speech, the greeting included.
func (k *Call) CutAll() { k.c.speaker.cutAll() }

// Publish keeps what the conversation tells in the call's record (the ended report's
// transcript and metrics) and sends each side's words to the room as live captions
// (captions.go).
func (k *Call) Publish(e speech.Event) {
	k.c.mu.Lock()
	k.c.record.Add(e)
	caps := k.c.captions
	k.c.mu.Unlock()
	if w, ok := e.(speech.Words); ok && caps != nil {
		caps.add(w)
	}
}

// Say speaks text in the call's voice and records the turn. It returns when the speech
// has played, or early when ctx ends, cutting the rest (barge-in): the recorded turn then
// ends where it was cut.
func (k *Call) Say(ctx context.Context, text string) (persona.Turn, error) {
	pcm, err := k.c.r.cfg.Voices(persona.VoiceFor(k.c.job.Version)).Synthesize(ctx, text)
	if err != nil {
		return persona.Turn{}, fmt.Errorf("synthesize: %w", err)
	}
	pb, err := k.Speak(pcm)
	if err != nil {
		return persona.Turn{}, err
	}
	select {
	case <-pb.Done():
	case <-ctx.Done():
		pb.Cut()
		<-pb.Done()
	}
	w, played, _ := speech.HeardWords([]speech.Said{{Text: text, Playback: pb}})
	w.Final, w.Interrupted = true, pb.Progress().Cut
	if !played { // cut before a single frame played
		w.Start = time.Now()
		w.End = w.Start
	}
	k.Publish(w)
	return k.c.record.Turn(w), ctx.Err()
}

// playback is speech queued on the call's speaker.
type playback struct {
	u *utterance
	s *speaker
}

func (p playback) Started() <-chan struct{}  { return p.u.started }
func (p playback) Done() <-chan struct{}     { return p.u.done }
func (p playback) Progress() speech.Progress { return p.s.progress(p.u) }
func (p playback) Cut()                      { p.s.cut(p.u) }
