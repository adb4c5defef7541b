package pipeline

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/resample"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
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

// Voice is the catalogue voice the call speaks with (the version's, else its avatar's).
func (k *Call) Voice() string { return persona.VoiceFor(k.c.job.Version) }

// Offset is t as milliseconds from answer, as transcripts and metrics count.
func (k *Call) Offset(t time.Time) int64 { return k.c.sinceAnswer(t) }

// Utterance is speech queued on the call's speaker.
type Utterance struct {
	u *utterance
	s *speaker
}

// Done is closed when the utterance has played to its end or was cut.
func (u *Utterance) Done() <-chan struct{} { return u.u.done }

// Progress is how much of it has been sent.
func (u *Utterance) Progress() Progress { return u.s.progress(u.u) }

// Cut drops what has not played yet.
func (u *Utterance) Cut() { u.s.cut(u.u) }

// Speak queues pcm after whatever is queued and returns at once; the speaker paces it
// out in real time.
func (k *Call) Speak(pcm tts.PCM) (*Utterance, error) {
	out, err := resample.Mono(pcm.Samples, pcm.Rate, outRate)
	if err != nil {
		return nil, fmt.Errorf("resample speech: %w", err)
	}
	return &Utterance{u: k.c.speaker.say(out, nil), s: k.c.speaker}, nil
}

// Pause silences the assistant at the next 20 ms frame, keeping its place (barge-in
// onset); Resume carries on from there.
func (k *Call) Pause() { k.c.speaker.pause() }

// Resume undoes Pause.
func (k *Call) Resume() { k.c.speaker.resume() }

// CutAll drops all queued speech, the greeting included.
func (k *Call) CutAll() { k.c.speaker.cutAll() }

// UpdateMetrics changes the call's metrics under its lock; the ended report carries them.
func (k *Call) UpdateMetrics(f func(m *persona.Metrics)) {
	k.c.mu.Lock()
	f(&k.c.metrics)
	k.c.mu.Unlock()
}

// Heard is the part of text a listener heard when fraction (0..1) of its audio played:
// cut at the word boundary nearest that share of its characters. Speech runs roughly in
// proportion to letters, so this approximates the cut point within a sentence.
func Heard(text string, fraction float64) string {
	text = strings.TrimSpace(text)
	if fraction >= 1 {
		return text
	}
	if fraction <= 0 {
		return ""
	}
	target := int(fraction * float64(len(text)))
	best, bestDist := 0, target // cutting before the first word
	for i := 0; i <= len(text); i++ {
		if i == len(text) || text[i] == ' ' {
			d := i - target
			if d < 0 {
				d = -d
			}
			if d < bestDist {
				best, bestDist = i, d
			}
		}
	}
	return strings.TrimSpace(text[:best])
}

// Say speaks text in the call's voice and records the turn. It returns when the speech
// has played, or early when ctx ends, cutting the rest (barge-in): the recorded turn then
// ends where it was cut.
func (k *Call) Say(ctx context.Context, text string) (persona.Turn, error) {
	c := k.c
	pcm, err := c.r.cfg.Voices(k.Voice()).Synthesize(ctx, text)
	if err != nil {
		return persona.Turn{}, fmt.Errorf("synthesize: %w", err)
	}
	out, err := resample.Mono(pcm.Samples, pcm.Rate, outRate)
	if err != nil {
		return persona.Turn{}, err
	}
	u := c.speaker.say(out, nil)
	select {
	case <-u.done:
	case <-ctx.Done():
		c.speaker.cut(u)
		<-u.done
	}
	p := c.speaker.progress(u)
	turn := persona.Turn{Speaker: persona.SpeakerAssistant, Text: text, Interrupted: p.Cut}
	if p.Played > 0 {
		turn.StartMS, turn.EndMS = c.sinceAnswer(p.StartedAt), c.sinceAnswer(p.LastAt.Add(frameDur))
		turn.Text = Heard(text, p.Fraction())
	} else { // cut before a single frame played
		turn.StartMS = c.sinceAnswer(time.Now())
		turn.EndMS, turn.Text = turn.StartMS, ""
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
