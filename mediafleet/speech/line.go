package speech

import (
	"context"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/tts"
)

// Line is a running call as the conversation sees it. The persona worker adapts its
// LiveKit call to it (mediafleet/pipeline); the conversation's tests use a scripted one.
type Line interface {
	// Audio delivers the caller's audio, mono at Rate, in the order it was heard (20 ms
	// frames on a LiveKit call, with the silence a client did not send filled in).
	Audio() <-chan []int16
	// Speak queues speech after what is queued and returns at once; the line plays it
	// out in real time.
	Speak(pcm tts.PCM) (Playback, error)
	// Speaking reports whether speech is queued or playing (the greeting included).
	Speaking() bool
	// Pause silences the speech at the next frame, keeping its place; Resume goes on
	// from there.
	Pause()
	Resume()
	// CutAll drops all queued speech.
	CutAll()
	// Publish tells the call what happened in the conversation, in the order it
	// happened. It must not block (the conversation calls it between audio windows),
	// and is called from more than one goroutine (the greeting follows its own speech).
	Publish(e Event)
}

// Playback is one piece of speech queued on a Line.
type Playback interface {
	// Started is closed when its first frame has gone out to the caller.
	Started() <-chan struct{}
	// Done is closed when it has played to its end, was cut, or the call ended.
	Done() <-chan struct{}
	Progress() Progress
	// Cut drops what has not played yet.
	Cut()
}

// Progress is how much of a Playback has gone out to the caller.
type Progress struct {
	Played, Total int       // frames sent, and in all
	Start         time.Time // when the first frame went out; zero if none did
	End           time.Time // when the last frame sent ends playing
	Cut           bool      // dropped before its end (barge-in)
}

// Fraction is the share of the speech sent, 0..1.
func (p Progress) Fraction() float64 {
	if p.Total == 0 {
		return 1
	}
	return float64(p.Played) / float64(p.Total)
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

// Said is one piece of speech with the text it speaks.
type Said struct {
	Text     string
	Playback Playback
}

// HeardWords are the assistant's words as far as the caller heard them, over pieces of
// speech played one after the other (the sentences of a reply): each piece's text cut
// where its audio stopped (Heard), from the first frame of the first piece that played
// to the end of the last frame sent. It reports whether anything played, and whether a
// piece was cut before its end.
func HeardWords(pieces []Said) (w Words, played, cut bool) {
	w.Speaker = Assistant
	var parts []string
	for _, s := range pieces {
		p := s.Playback.Progress()
		if p.Played < p.Total {
			cut = true
		}
		if p.Played == 0 {
			continue
		}
		if !played {
			w.Start, played = p.Start, true
		}
		w.End = p.End
		if h := Heard(s.Text, p.Fraction()); h != "" {
			parts = append(parts, h)
		}
	}
	w.Text = strings.Join(parts, " ")
	return w, played, cut
}

// Keypad is a Line whose caller can press keys: a phone's DTMF, which LiveKit's SIP
// bridge sends into the room. Keys delivers each key as it is pressed. The conversation
// puts them in the caller's turn as KeyText: in the turn the caller is speaking, or in a
// turn of their own once the caller stops pressing (KeyGap).
type Keypad interface {
	Keys() <-chan Key
}

// Key is one key pressed: 0-9, *, #, A-D.
type Key struct {
	Digit string
	At    time.Time
}

// KeyText is how a key reads in the caller's turn, to the model and in the transcript.
func KeyText(digit string) string { return "[pressed " + digit + "]" }

// Transferrer is a Line whose call can be handed to another party (a SIP call, by
// REFER): Transfer returns once the destination answered (the caller then leaves the
// line), or with the failure, the call going on.
type Transferrer interface {
	Transfer(ctx context.Context, to string) error
}

// TransferWatcher is a Line that learns of its call's transfers that failed after they
// were asked for: an API transfer of a call the assistant handles, which the assistant
// did not ask for. The conversation tells the caller (TransferFailed).
type TransferWatcher interface {
	TransferFailures() <-chan TransferFailure
}

// TransferFailure is a transfer that did not go through; the call goes on.
type TransferFailure struct {
	To          string
	Failure     string // why, as the call record says
	ByAssistant bool   // the assistant's transfer_call asked for it (else the API)
}

// Viewer is a Line whose caller's picture the model may see (a version's vision): the
// latest frame of their camera or shared screen, as the version chooses. Frames go to
// the model only; nothing here is kept.
type Viewer interface {
	// Refresh asks for a fresh frame of every source without waiting for it (a key
	// frame from the caller's client): the conversation asks at the caller's speech
	// onset, so that a frame of the turn is ready when it ends.
	Refresh()
	// Pictures returns the latest picture of each source that has one, waiting until ctx
	// ends for a frame that arrived at or after since where the latest is older; a
	// source with no frame by then gives its latest, or none.
	Pictures(ctx context.Context, since time.Time) []Picture
}
