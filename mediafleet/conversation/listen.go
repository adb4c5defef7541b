package conversation

import (
	"log/slog"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
)

// heard is a message of the listener to the session: speechStarted, speechGoesOn or
// turnEnded.
type heard interface{ heard() }

// speechStarted: the caller started speaking. audio is what the recogniser gets first:
// the padding kept from before the onset, then the onset window.
type speechStarted struct {
	onset time.Time // start of the first speech window
	audio [][]int16
}

// speechGoesOn: a window of the open turn, speech or the silence that may end it.
// spoken is the turn's speech so far in samples, from onset to the end of its latest
// speech window; silence, the samples of silence since then (0 in a speech window).
type speechGoesOn struct {
	window  []int16
	spoken  int
	silence int
}

// turnEnded: the caller's turn is over, after enough silence or at the longest turn (the
// speech going on past it is no new turn until the caller pauses).
type turnEnded struct {
	at         time.Time // when it was decided
	onset      time.Time
	lastSpeech time.Time // end of its latest speech window
}

func (speechStarted) heard() {}
func (speechGoesOn) heard()  {}
func (turnEnded) heard()     {}

// listener is the first stage: it cuts the caller's audio into VAD windows and decides
// where the caller's turns start and end.
type listener struct {
	vad       speech.VAD
	threshold float32
	endOfTurn int // samples of silence
	maxTurn   int // samples
	padding   int // samples kept before onset
	log       *slog.Logger

	pending    []int16   // samples toward the next VAD window
	pad        [][]int16 // the windows before onset, newest last
	inSpeech   bool      // a caller turn is open
	holdFloor  bool      // a turn was cut at maxTurn: its speech goes on until a pause
	onset      time.Time // start of the turn's first speech window
	lastSpeech time.Time // end of its latest speech window
	turnLen    int       // samples since onset
	spokenLen  int       // samples from onset to the end of the latest speech window
	silence    int       // samples of silence since the latest speech window
	vadFailed  bool      // a VAD error was logged
	out        []heard
}

// hear takes one frame of caller audio that arrived at, and returns what it told: the
// messages of every window it completed, in order. The slice is reused by the next call.
func (l *listener) hear(frame []int16, at time.Time) []heard {
	l.out = l.out[:0]
	l.pending = append(l.pending, frame...)
	n := l.vad.WindowSize()
	for len(l.pending) >= n {
		w := l.pending[:n:n]
		l.pending = l.pending[n:]
		l.window(w, at)
	}
	if len(l.pending) == 0 {
		l.pending = nil // let the backing array go
	}
	return l.out
}

// window decides on one VAD window that ended at.
func (l *listener) window(w []int16, at time.Time) {
	p, err := l.vad.Prob(w)
	if err != nil {
		if !l.vadFailed {
			l.log.Error("vad failed; treating audio as silence", "err", err)
			l.vadFailed = true
		}
		p = 0
	}
	// Hysteresis as Silero's own iterator: speech starts at the threshold and stops
	// below it by 0.15, so a wavering word does not end the turn.
	speaking := p >= l.threshold
	if l.inSpeech {
		speaking = p >= l.threshold-0.15
	}
	if l.holdFloor {
		if speaking {
			return
		}
		l.holdFloor = false
	}
	if !l.inSpeech {
		if !speaking {
			l.pad = append(l.pad, w)
			if keep := (l.padding + len(w) - 1) / len(w); len(l.pad) > keep {
				l.pad = l.pad[len(l.pad)-keep:]
			}
			return
		}
		l.inSpeech, l.onset, l.lastSpeech = true, at.Add(-time.Duration(len(w))*time.Second/speech.Rate), at
		l.turnLen, l.spokenLen, l.silence = len(w), len(w), 0
		l.out = append(l.out, speechStarted{onset: l.onset, audio: append(l.pad, w)})
		l.pad = nil
		return
	}
	l.turnLen += len(w)
	if speaking {
		l.silence = 0
		l.lastSpeech = at
		l.spokenLen = l.turnLen
	} else {
		l.silence += len(w)
	}
	l.out = append(l.out, speechGoesOn{window: w, spoken: l.spokenLen, silence: l.silence})
	switch {
	case l.silence >= l.endOfTurn:
	case l.turnLen >= l.maxTurn:
		l.holdFloor = true
	default:
		return
	}
	l.inSpeech = false
	l.out = append(l.out, turnEnded{at: at, onset: l.onset, lastSpeech: l.lastSpeech})
}
