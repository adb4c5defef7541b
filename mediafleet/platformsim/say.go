package platformsim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform"
)

// The sim party speaks (POST /sim/calls/{id}/say): the text is spoken with flite in the
// party's own voice, persona.SimCallerVoice, which no avatar uses by default, and queued
// after anything the party is already saying. Its audio goes out in real time; the call
// lists each utterance with when it started and ended going out (said), and each stretch
// of sound the party heard from the room (heard), so a test or benchmark can time the
// conversation from the caller's side: end of its question to the first reply audio
// reaching it, or its speech onset to the assistant's audio stopping.
//
// The party publishes a 440 Hz tone until it has something to say, except on calls where
// an assistant (a LiveKit agent participant) is in the room: an assistant listens, and
// would hear the tone as the caller talking. There, and on every call once the party has
// been told to say something, it is silent between utterances, though its audio track
// still carries packets, as a real caller's microphone does.

// MaxSayRunes is the longest text the party says at once.
const MaxSayRunes = 1000

// Errors of Say besides platform.ErrUnknownCall.
var (
	// ErrNotInRoom: the call's party is not a bot in the room (ringing, over, or a
	// browser page, which speaks through its own microphone).
	ErrNotInRoom = errors.New("sim: the call's party is not in the room")
	// ErrText: the text is empty or too long.
	ErrText = errors.New("sim: text must be 1 to 1000 characters")
)

// Utterance is something the sim party was told to say, as the sim API shows it. Times
// are RFC 3339 with milliseconds, null until they happen; the *_ms fields are the same
// moments in milliseconds from the call's answer.
type Utterance struct {
	Object     string `json:"object"` // sim_utterance
	Index      int    `json:"index"`
	Text       string `json:"text"`
	Status     string `json:"status"` // queued | speaking | spoken
	DurationMS int64  `json:"duration_ms"`
	QueuedAt   Stamp  `json:"queued_at"`
	StartedAt  Stamp  `json:"started_at"`
	EndedAt    Stamp  `json:"ended_at"`
	StartMS    *int64 `json:"start_ms"`
	EndMS      *int64 `json:"end_ms"`
}

// Utterance statuses.
const (
	UtteranceQueued   = "queued"
	UtteranceSpeaking = "speaking"
	UtteranceSpoken   = "spoken"
)

// Sound is a stretch of audio the sim party heard from another participant (see
// callerbot.Sound): its onset and end as they reached the party.
type Sound struct {
	Participant string `json:"participant"`
	StartedAt   Stamp  `json:"started_at"`
	EndedAt     Stamp  `json:"ended_at"`
	StartMS     *int64 `json:"start_ms"`
	EndMS       *int64 `json:"end_ms"`
	Ongoing     bool   `json:"ongoing"`
}

// Stamp is a moment shown as RFC 3339 with milliseconds in UTC, or null when zero.
type Stamp struct{ time.Time }

// StampFormat is how Stamp writes a moment.
const StampFormat = "2006-01-02T15:04:05.000Z07:00"

// MarshalJSON writes the moment or null.
func (s Stamp) MarshalJSON() ([]byte, error) {
	if s.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + s.UTC().Format(StampFormat) + `"`), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Stamp) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		s.Time = time.Time{}
		return nil
	}
	t, err := time.Parse(`"`+time.RFC3339Nano+`"`, string(b))
	if err != nil {
		return err
	}
	s.Time = t
	return nil
}

// Say makes the party of a live bot call speak text, after anything it is already
// saying, and returns the queued utterance.
func (s *Sim) Say(ctx context.Context, id, text string) (Utterance, error) {
	text = strings.TrimSpace(text)
	if text == "" || utf8.RuneCountInString(text) > MaxSayRunes {
		return Utterance{}, ErrText
	}
	bot, err := s.speaker(id)
	if err != nil {
		return Utterance{}, err
	}
	pcm, err := callerbot.Flite(ctx, persona.SimCallerVoice, text)
	if err != nil {
		return Utterance{}, fmt.Errorf("sim say: %w", err)
	}
	i, err := bot.Say(text, pcm)
	if err != nil {
		return Utterance{}, fmt.Errorf("sim say: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls[id]
	said := bot.Said()
	return utteranceOf(said[i], c.answered()), nil
}

// speaker is the call's bot, while it is in the room.
func (s *Sim) speaker(id string) (*callerbot.Bot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls[id]
	switch {
	case c == nil:
		return nil, platform.ErrUnknownCall
	case c.bot == nil || c.Status != StatusAnswered:
		return nil, ErrNotInRoom
	}
	return c.bot, nil
}

func (c *call) answered() time.Time {
	if c.AnsweredAt == nil {
		return time.Time{}
	}
	return *c.AnsweredAt
}

// offset is t in milliseconds from the answer, nil when either is unknown.
func offset(t, answered time.Time) *int64 {
	if t.IsZero() || answered.IsZero() {
		return nil
	}
	ms := t.Sub(answered).Milliseconds()
	return &ms
}

func utteranceOf(u callerbot.Utterance, answered time.Time) Utterance {
	status := UtteranceQueued
	switch {
	case u.Spoken():
		status = UtteranceSpoken
	case !u.Start.IsZero():
		status = UtteranceSpeaking
	}
	return Utterance{Object: "sim_utterance", Index: u.Index, Text: u.Text, Status: status,
		DurationMS: u.Duration.Milliseconds(), QueuedAt: Stamp{u.Queued}, StartedAt: Stamp{u.Start},
		EndedAt: Stamp{u.End}, StartMS: offset(u.Start, answered), EndMS: offset(u.End, answered)}
}

func soundOf(s callerbot.Sound, answered time.Time) Sound {
	return Sound{Participant: s.Participant, StartedAt: Stamp{s.Start}, EndedAt: Stamp{s.End},
		StartMS: offset(s.Start, answered), EndMS: offset(s.End, answered), Ongoing: s.Ongoing}
}

// conversation fills the call's said and heard from its bot, or keeps what it held when
// the bot left.
func (c *call) conversation(out *Call) {
	said, heard := c.said, c.heard
	if c.bot != nil {
		said, heard = c.bot.Said(), c.bot.Sounds()
	}
	answered := c.answered()
	out.Said = make([]Utterance, len(said))
	for i, u := range said {
		out.Said[i] = utteranceOf(u, answered)
	}
	out.Sounds = make([]Sound, len(heard))
	for i, h := range heard {
		out.Sounds[i] = soundOf(h, answered)
	}
}
