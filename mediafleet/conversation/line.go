package conversation

import (
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/pipeline"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Line is what the conversation needs of a running call: *pipeline.Call through
// callLine, or a scripted line in tests.
type Line interface {
	// Audio delivers the caller's 16 kHz mono audio in 20 ms frames.
	Audio() <-chan []int16
	// Speak queues speech after what is queued; the speaker paces it out in real time.
	Speak(pcm tts.PCM) (Playback, error)
	// Speaking reports whether speech is queued or playing (the greeting included).
	Speaking() bool
	// Pause silences the speech at the next frame, keeping its place; Resume goes on.
	Pause()
	Resume()
	// CutAll drops all queued speech.
	CutAll()
	AddTurn(t persona.Turn)
	UpdateMetrics(f func(m *persona.Metrics))
	// Offset is t in milliseconds from answer.
	Offset(t time.Time) int64
}

// Playback is one queued piece of speech.
type Playback interface {
	Done() <-chan struct{}
	Progress() pipeline.Progress
	Cut()
}

// callLine adapts *pipeline.Call.
type callLine struct{ c *pipeline.Call }

func (l callLine) Audio() <-chan []int16 { return l.c.CallerAudio() }
func (l callLine) Speak(pcm tts.PCM) (Playback, error) {
	u, err := l.c.Speak(pcm)
	if err != nil {
		return nil, err
	}
	return u, nil
}
func (l callLine) Speaking() bool                           { return l.c.Speaking() }
func (l callLine) Pause()                                   { l.c.Pause() }
func (l callLine) Resume()                                  { l.c.Resume() }
func (l callLine) CutAll()                                  { l.c.CutAll() }
func (l callLine) AddTurn(t persona.Turn)                   { l.c.AddTurn(t) }
func (l callLine) UpdateMetrics(f func(m *persona.Metrics)) { l.c.UpdateMetrics(f) }
func (l callLine) Offset(t time.Time) int64                 { return l.c.Offset(t) }
