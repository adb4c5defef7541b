package callerbot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/resample"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/mediafleet/tts/flite"
)

// FrameDuration is how much audio each published packet carries; the bot paces its
// audio in real time, one frame every FrameDuration.
const FrameDuration = 20 * time.Millisecond

// frameSamples is one published frame at 48 kHz.
const frameSamples = 48000 / 50

// Utterance is one thing the bot was told to say (Say), with the moments its audio went
// out. Start is when its first 20 ms frame was sent; End is when its last frame's 20 ms
// were over (the send time of the last frame plus FrameDuration), which is when a live
// microphone would have finished capturing it. Both are zero until they happen.
type Utterance struct {
	Index    int
	Text     string
	Duration time.Duration // of the audio, silence at both ends trimmed
	Queued   time.Time
	Start    time.Time
	End      time.Time
}

// Spoken reports whether all of its audio has gone out.
func (u Utterance) Spoken() bool { return !u.End.IsZero() }

type utterance struct {
	Utterance
	pcm  []int16 // 48 kHz, a whole number of frames
	pos  int
	done chan struct{}
}

// ErrNoVoice is Say on a bot that publishes no audio track.
var ErrNoVoice = errors.New("callerbot: the bot publishes no audio")

// Say queues pcm, the speech of text, after anything the bot is already saying, and
// returns the utterance's index in Said. From then on the bot's looped Source is over
// for good: between utterances it sends silence, since a looped tone or phrase would be
// heard as the caller speaking. Silence at both ends of pcm is trimmed first, so the
// recorded times are the speech's own.
func (b *Bot) Say(text string, pcm tts.PCM) (int, error) {
	samples := pcm.Samples
	if pcm.Rate != 48000 {
		var err error
		if samples, err = resample.Mono(samples, pcm.Rate, 48000); err != nil {
			return 0, fmt.Errorf("callerbot say: %w", err)
		}
	}
	samples = TrimSilence(samples, 48000)
	if len(samples) == 0 {
		return 0, errors.New("callerbot say: the audio is silent")
	}
	dur := time.Duration(len(samples)) * time.Second / 48000
	if r := len(samples) % frameSamples; r != 0 {
		samples = append(samples, make([]int16, frameSamples-r)...)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.speaks {
		return 0, ErrNoVoice
	}
	if b.ctx.Err() != nil {
		return 0, errors.New("callerbot say: the bot has left")
	}
	u := &utterance{Utterance: Utterance{Index: len(b.said), Text: text, Duration: dur, Queued: time.Now()},
		pcm: samples, done: make(chan struct{})}
	b.said = append(b.said, u)
	b.spoke = true
	return u.Index, nil
}

// Said lists everything the bot was told to say, in order, with its times so far.
func (b *Bot) Said() []Utterance {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Utterance, len(b.said))
	for i, u := range b.said {
		out[i] = u.Utterance
	}
	return out
}

// WaitSaid waits until utterance i has gone out and returns it.
func (b *Bot) WaitSaid(ctx context.Context, i int) (Utterance, error) {
	b.mu.Lock()
	if i < 0 || i >= len(b.said) {
		b.mu.Unlock()
		return Utterance{}, fmt.Errorf("callerbot: no utterance %d", i)
	}
	u := b.said[i]
	b.mu.Unlock()
	select {
	case <-u.done:
	case <-ctx.Done():
		return Utterance{}, ctx.Err()
	case <-b.ctx.Done():
		return Utterance{}, errors.New("callerbot: left before saying it")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return u.Utterance, nil
}

// nextFrame fills frame with what goes out at now: the current utterance's next frame,
// else the looped Source (until the bot spoke or went quiet), else silence.
func (b *Bot) nextFrame(now time.Time, frame, loop []int16, loopPos *int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.next < len(b.said) {
		u := b.said[b.next]
		if u.pos == 0 {
			u.Start = now
		}
		copy(frame, u.pcm[u.pos:u.pos+frameSamples])
		u.pos += frameSamples
		if u.pos >= len(u.pcm) {
			u.End = now.Add(FrameDuration)
			u.pcm = nil
			close(u.done)
			b.next++
		}
		return
	}
	if b.spoke || b.hushed || len(loop) < frameSamples {
		clear(frame)
		return
	}
	copy(frame, loop[*loopPos:*loopPos+frameSamples])
	*loopPos = (*loopPos + frameSamples) % (len(loop) - len(loop)%frameSamples)
}

// TrimSilence drops the silence at both ends of pcm: everything before the first and
// after the last 10 ms window whose level is above trimRMS.
func TrimSilence(pcm []int16, rate int) []int16 {
	win := rate / 100
	if win == 0 {
		return pcm
	}
	first, last := -1, -1
	for i := 0; i+win <= len(pcm); i += win {
		if rms(pcm[i:i+win]) > trimRMS {
			if first < 0 {
				first = i
			}
			last = i + win
		}
	}
	if first < 0 {
		return nil
	}
	return pcm[first:last]
}

// trimRMS is the level (of full scale) below which a 10 ms window of synthesised speech
// is silence: well under the quietest consonant flite makes, well above its digital
// silence.
const trimRMS = 0.003

// Flite speaks text with the flite voice (slt, rms, awb, kal16) through the same
// in-process engine the persona worker speaks with (mediafleet/tts/flite), and returns its
// audio (16 kHz for those voices).
func Flite(ctx context.Context, voice, text string) (tts.PCM, error) {
	s, err := flite.New(voice, 0)
	if err != nil {
		return tts.PCM{}, err
	}
	return s.Synthesize(ctx, text)
}

// SpokenWAV is text spoken by the flite voice as a WAV file (48 kHz mono 16-bit), with
// lead of silence before it and tail after: what a browser's fake microphone plays
// (Chromium's --use-file-for-fake-audio-capture). The lead lets whatever the other side
// says first (a greeting) finish before the question starts.
func SpokenWAV(ctx context.Context, voice, text string, lead, tail time.Duration) ([]byte, error) {
	pcm, err := Flite(ctx, voice, text)
	if err != nil {
		return nil, err
	}
	s, err := resample.Mono(pcm.Samples, pcm.Rate, 48000)
	if err != nil {
		return nil, err
	}
	s = TrimSilence(s, 48000)
	out := make([]int16, 0, len(s)+int((lead+tail).Seconds()*48000))
	out = append(out, make([]int16, int(lead.Seconds()*48000))...)
	out = append(out, s...)
	out = append(out, make([]int16, int(tail.Seconds()*48000))...)
	return tts.EncodeWAV(tts.PCM{Rate: 48000, Samples: out}), nil
}
