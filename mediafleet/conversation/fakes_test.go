package conversation_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/conversation"
	"github.com/bridgeline/bridgeline/mediafleet/pipeline"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Caller audio is scripted by sample value: the scripted VAD scores a window by its mean
// (speechLevel = 1.0), and the scripted recogniser hears words only in speechLevel
// samples; coughLevel is loud to the VAD but has no words.
const (
	speechLevel = 1000
	coughLevel  = 999
	frameLen    = 320 // 20 ms at 16 kHz
)

type scriptedVAD struct{}

// scriptedWindow is the scripted VAD's window, Silero's at 16 kHz.
const scriptedWindow = 512

func (scriptedVAD) WindowSize() int { return scriptedWindow }
func (scriptedVAD) Prob(w []int16) (float32, error) {
	var sum float64
	for _, v := range w {
		sum += float64(v)
	}
	return float32(sum / float64(len(w)) / speechLevel), nil
}
func (scriptedVAD) Reset()       {}
func (scriptedVAD) Close() error { return nil }

// recognizer hands out the scripted texts, one per turn that held words.
type recognizer struct {
	mu     sync.Mutex
	texts  []string
	begins int
	ends   int
	// leading is how many samples of each turn came before its first speech sample (the
	// pre-speech padding).
	leading []int
	words   bool
	seen    bool
}

func (r *recognizer) NewTranscriber(context.Context) (conversation.Transcriber, error) { return r, nil }
func (r *recognizer) Begin() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.begins++
	r.words, r.seen = false, false
	r.leading = append(r.leading, 0)
	return nil
}
func (r *recognizer) Write(pcm []int16) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range pcm {
		if v != 0 {
			r.seen = true
		}
		if !r.seen {
			r.leading[len(r.leading)-1]++
		}
		if v == speechLevel {
			r.words = true
		}
	}
	return nil
}
func (r *recognizer) End(context.Context) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ends++
	if !r.words || len(r.texts) == 0 {
		return "", nil
	}
	t := r.texts[0]
	r.texts = r.texts[1:]
	return t, nil
}
func (r *recognizer) Abort()       {}
func (r *recognizer) Close() error { return nil }
func (r *recognizer) turns() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ends
}

// synth makes 100 ms of audio per word and records what it was asked to say.
type synth struct {
	mu    sync.Mutex
	texts []string
}

func (s *synth) Synthesize(_ context.Context, text string) (tts.PCM, error) {
	s.mu.Lock()
	s.texts = append(s.texts, text)
	s.mu.Unlock()
	n := len(strings.Fields(text)) * 1600
	pcm := make([]int16, n)
	for i := range pcm {
		pcm[i] = 1000
	}
	return tts.PCM{Rate: 16000, Samples: pcm}, nil
}
func (s *synth) said() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.texts...)
}

// playback is queued speech on the scripted line: it advances one 20 ms frame each time
// the test feeds the caller a frame, so time is the test's.
type playback struct {
	total, played int
	started, last time.Time
	cut           bool
	done          chan struct{}
	line          *line
}

func (p *playback) Done() <-chan struct{} { return p.done }
func (p *playback) Progress() pipeline.Progress {
	p.line.mu.Lock()
	defer p.line.mu.Unlock()
	return pipeline.Progress{Played: p.played, Total: p.total, StartedAt: p.started, LastAt: p.last, Cut: p.cut}
}
func (p *playback) Cut() {
	p.line.mu.Lock()
	defer p.line.mu.Unlock()
	p.line.drop(p)
}

// line is a scripted call.
type line struct {
	audio chan []int16
	fed   int // samples of caller audio handed to the conversation

	mu         sync.Mutex
	queue      []*playback
	paused     bool
	pauses     int
	resumes    int
	turns      []persona.Turn
	metrics    persona.Metrics
	framesSent int
}

func newLine() *line { return &line{audio: make(chan []int16)} }

func (l *line) Audio() <-chan []int16 { return l.audio }
func (l *line) Speak(pcm tts.PCM) (conversation.Playback, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := &playback{total: (len(pcm.Samples)*50 + pcm.Rate - 1) / pcm.Rate, done: make(chan struct{}), line: l}
	l.queue = append(l.queue, p)
	return p, nil
}
func (l *line) Speaking() bool { l.mu.Lock(); defer l.mu.Unlock(); return len(l.queue) > 0 }
func (l *line) Pause()         { l.mu.Lock(); l.paused = true; l.pauses++; l.mu.Unlock() }
func (l *line) Resume()        { l.mu.Lock(); l.paused = false; l.resumes++; l.mu.Unlock() }
func (l *line) CutAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.queue) > 0 {
		l.drop(l.queue[0])
	}
}
func (l *line) AddTurn(t persona.Turn) { l.mu.Lock(); l.turns = append(l.turns, t); l.mu.Unlock() }
func (l *line) UpdateMetrics(f func(*persona.Metrics)) {
	l.mu.Lock()
	f(&l.metrics)
	l.mu.Unlock()
}
func (l *line) Offset(t time.Time) int64 { return t.UnixMilli() }

// drop removes p from the queue, cut; l.mu held.
func (l *line) drop(p *playback) {
	for i, q := range l.queue {
		if q == p {
			l.queue = append(l.queue[:i], l.queue[i+1:]...)
			p.cut = true
			close(p.done)
			return
		}
	}
}

// tick plays one frame of the queue unless paused.
func (l *line) tick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.paused || len(l.queue) == 0 {
		return
	}
	p := l.queue[0]
	now := time.Now()
	if p.played == 0 {
		p.started = now
	}
	p.played++
	p.last = now
	l.framesSent++
	if p.played >= p.total {
		l.queue = l.queue[1:]
		close(p.done)
	}
}

func (l *line) snapshot() (turns []persona.Turn, m persona.Metrics, paused bool, pauses, resumes, sent int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]persona.Turn(nil), l.turns...), l.metrics, l.paused, l.pauses, l.resumes, l.framesSent
}

// feed sends the caller frames of level for d, ticking the speaker once per frame. It
// gives up when the conversation stops reading.
func (l *line) feed(t *testing.T, stopped <-chan struct{}, level int16, d time.Duration) {
	t.Helper()
	for i := 0; i < int(d/(20*time.Millisecond)); i++ {
		f := make([]int16, frameLen)
		for j := range f {
			f[j] = level
		}
		select {
		case l.audio <- f:
			l.fed += len(f)
		case <-stopped:
			return
		case <-time.After(5 * time.Second):
			t.Fatal("the conversation stopped reading caller audio")
		}
		l.tick()
	}
}

// alignToWindow feeds silence until at most half a VAD window of audio waits for the
// next window, so that speech fed next fills the first window it reaches at least half
// way, as any onset does within one window's time on a real call. How much is left over
// otherwise depends on how long an earlier eventually had to feed.
func (l *line) alignToWindow(t *testing.T, stopped <-chan struct{}) {
	t.Helper()
	for l.fed%scriptedWindow > scriptedWindow/2 {
		l.feed(t, stopped, 0, 20*time.Millisecond)
	}
}

// eventually polls cond, feeding silence (so speech plays) meanwhile.
func (l *line) eventually(t *testing.T, stopped <-chan struct{}, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		l.feed(t, stopped, 0, 20*time.Millisecond)
		time.Sleep(time.Millisecond)
	}
}
