package callerbot

import "time"

// Sound is one stretch of audio the bot heard from another participant: from the arrival
// of the first 20 ms packet whose decoded level rose above SoundRMS, to the arrival of the
// last such packet plus FrameDuration (when its audio was over, played as it arrived).
// Quieter packets shorter than SoundGap inside a stretch (the dips between words) do not
// end it. The times are those of arrival at the bot, so they include the whole transport.
type Sound struct {
	Participant string
	Start, End  time.Time
	// Ongoing is true while the stretch may still go on: its last loud packet arrived
	// less than SoundGap ago.
	Ongoing bool
}

// SoundRMS is the level (of full scale) above which a decoded 20 ms packet counts as
// sound for Sounds. Opus-coded digital silence decodes far below it; speech's quietest
// voiced parts are above it. A soft start (the breath of an "h") can stay under it for
// its first packet, which then reads one frame late; a lower level would make the
// decoder's tail after the last words read a frame long instead
// (BenchmarkSpeechToHearing shows both).
const SoundRMS = 0.01

// SoundGap is how long the audio must stay below SoundRMS for a stretch of sound to end.
const SoundGap = 250 * time.Millisecond

type sound struct {
	Sound
	lastLoud time.Time // arrival of the last loud packet
}

// Sounds lists the stretches of sound the bot has heard, in order of onset.
func (b *Bot) Sounds() []Sound {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Sound, len(b.sounds))
	for i, s := range b.sounds {
		out[i] = s.Sound
		out[i].Ongoing = b.ctx.Err() == nil && now.Sub(s.lastLoud) < SoundGap
	}
	return out
}

// noteLevel records one decoded packet of participant's audio, of level lvl, arrived at
// at, into the stretches of sound; cur is that track's open stretch. Called with b.mu
// held.
func (b *Bot) noteLevel(cur **sound, participant string, at time.Time, lvl float64) {
	if lvl <= SoundRMS {
		return
	}
	if s := *cur; s != nil && at.Sub(s.lastLoud) < SoundGap {
		s.lastLoud, s.End = at, at.Add(FrameDuration)
		return
	}
	s := &sound{Sound: Sound{Participant: participant, Start: at, End: at.Add(FrameDuration)}, lastLoud: at}
	b.sounds = append(b.sounds, s)
	*cur = s
}

// SoundAfter is the first stretch of sound from participant ("" for anyone) that began
// at or after t: the reply to something that ended at t. ok is false while there is none.
func (b *Bot) SoundAfter(participant string, t time.Time) (s Sound, ok bool) {
	for _, s := range b.Sounds() {
		if (participant == "" || s.Participant == participant) && !s.Start.Before(t) {
			return s, true
		}
	}
	return Sound{}, false
}

// SoundAt is the stretch of sound from participant ("" for anyone) that was going on at t:
// what was talked over at t. Its End, once it is no longer Ongoing, is when it stopped
// reaching the bot. ok is false when nothing was heard at t.
func (b *Bot) SoundAt(participant string, t time.Time) (s Sound, ok bool) {
	for _, s := range b.Sounds() {
		// Dips shorter than SoundGap inside a stretch are part of it.
		if (participant == "" || s.Participant == participant) && !s.Start.After(t) && t.Before(s.End.Add(SoundGap)) {
			return s, true
		}
	}
	return Sound{}, false
}
