package conversation_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/conversation"
	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// The tests run in a testing/synctest bubble: time is simulated, and passes only while
// every goroutine of the test (the conversation, its replies, the scripted line, the fake
// model server on in-memory pipes) waits. A second of call takes no time, and what
// happens when is exact.

// Caller audio is scripted by sample value: the scripted VAD scores a window by its mean
// (speechLevel = 1.0), and the scripted recogniser hears words only in speechLevel
// samples; coughLevel is loud to the VAD but has no words.
const (
	speechLevel = 1000
	coughLevel  = 999
	frameLen    = 320 // 20 ms at 16 kHz
	frameDur    = 20 * time.Millisecond
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

// recognizer hands out the scripted texts, one per turn that held words. With interim
// set it is a streaming recogniser: the words of the open turn so far are its text's
// first word per 100 ms of speech written.
type recognizer struct {
	mu      sync.Mutex
	texts   []string
	interim bool
	begins  int
	ends    int
	// leading is how many samples of each turn came before its first speech sample (the
	// pre-speech padding).
	leading []int
	words   int // speech samples written in the open turn
	written int // samples written over the call
	seen    bool
	// stall makes End wait for its context (a recogniser that never answers); stalled
	// counts the Ends waiting.
	stall   bool
	stalled int
	// With flush set it is a speech.Flusher: flushes records, per Flush, the silent
	// samples written since the turn's latest speech sample (trailing counts them).
	flush    bool
	flushes  []int
	trailing int
	// languages are the languages transcribers were asked for (speech.Multilingual).
	languages []string
	// With lag set its interim words come as pocketsphinx's do (lagTranscriber): read
	// every 300 ms of audio, each word known 150 ms after its audio; catchUp makes it a
	// speech.InterimCatcher.
	lag, catchUp bool
}

func (r *recognizer) NewTranscriberIn(ctx context.Context, language string) (speech.Transcriber, error) {
	r.mu.Lock()
	r.languages = append(r.languages, language)
	r.mu.Unlock()
	return r.NewTranscriber(ctx)
}

func (r *recognizer) NewTranscriber(context.Context) (speech.Transcriber, error) {
	if r.lag {
		l := &lagTranscriber{recognizer: r}
		if r.catchUp {
			return catchingTranscriber{l}, nil
		}
		return l, nil
	}
	if r.interim {
		return interimTranscriber{r}, nil
	}
	if r.flush {
		return flushTranscriber{r}, nil
	}
	return r, nil
}
func (r *recognizer) Begin() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.begins++
	r.words, r.seen = 0, false
	r.leading = append(r.leading, 0)
	return nil
}
func (r *recognizer) Write(pcm []int16) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.written += len(pcm)
	for _, v := range pcm {
		if v != 0 {
			r.seen = true
		}
		if !r.seen {
			r.leading[len(r.leading)-1]++
		}
		if v == speechLevel {
			r.words++
		}
		r.trailing++
		if v != 0 {
			r.trailing = 0
		}
	}
	return nil
}
func (r *recognizer) End(ctx context.Context) (string, error) {
	r.mu.Lock()
	stall := r.stall
	if stall {
		r.stalled++
	}
	r.mu.Unlock()
	if stall {
		<-ctx.Done()
		return "", ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ends++
	if r.words == 0 || len(r.texts) == 0 {
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

// flushTranscriber is the recogniser as a speech.Flusher.
type flushTranscriber struct{ *recognizer }

func (r flushTranscriber) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushes = append(r.flushes, r.trailing)
	return nil
}

// interimTranscriber is the recogniser with interim results (speech.Interimer).
type interimTranscriber struct{ *recognizer }

func (r interimTranscriber) Interim() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.texts) == 0 {
		return ""
	}
	words := strings.Fields(r.texts[0])
	return strings.Join(words[:min(len(words), r.words/1600)], " ")
}

// lagTranscriber is the recogniser with interim words that lag the audio as
// pocketsphinx's do: a word is known lagKnown after its last sample, and the words
// known are read every lagRead of audio (CatchUp, on catchingTranscriber, reads them at
// once).
type lagTranscriber struct {
	*recognizer
	written  int   // samples of the open turn
	wordEnds []int // where each word's audio ended, in samples of the turn
	since    int   // samples since the latest read
	shown    string
}

const (
	lagKnown = 16000 * 150 / 1000
	lagRead  = 16000 * 300 / 1000
)

func (l *lagTranscriber) Begin() error {
	l.written, l.wordEnds, l.since, l.shown = 0, nil, 0, ""
	return l.recognizer.Begin()
}

func (l *lagTranscriber) Write(pcm []int16) error {
	if err := l.recognizer.Write(pcm); err != nil {
		return err
	}
	l.written += len(pcm)
	l.mu.Lock()
	for len(l.wordEnds) < l.words/1600 {
		l.wordEnds = append(l.wordEnds, l.written)
	}
	l.mu.Unlock()
	if l.since += len(pcm); l.since >= lagRead {
		l.read()
	}
	return nil
}

// read sets the interim words to the words known now.
func (l *lagTranscriber) read() {
	l.since = 0
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.texts) == 0 {
		return
	}
	known := 0
	for _, e := range l.wordEnds {
		if e+lagKnown <= l.written {
			known++
		}
	}
	words := strings.Fields(l.texts[0])
	l.shown = strings.Join(words[:min(len(words), known)], " ")
}

func (l *lagTranscriber) Interim() string { return l.shown }

// catchingTranscriber is lagTranscriber as a speech.InterimCatcher.
type catchingTranscriber struct{ *lagTranscriber }

func (c catchingTranscriber) CatchUp() { c.read() }

// synth makes 100 ms of audio per word and records what it was asked to say.
type synth struct {
	mu    sync.Mutex
	texts []string
}

func (s *synth) Synthesize(_ context.Context, text string) (tts.PCM, error) {
	s.mu.Lock()
	s.texts = append(s.texts, text)
	s.mu.Unlock()
	return words(text), nil
}
func (s *synth) said() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.texts...)
}

// words is 100 ms of loud audio per word of text.
func words(text string) tts.PCM {
	pcm := make([]int16, len(strings.Fields(text))*1600)
	for i := range pcm {
		pcm[i] = 1000
	}
	return tts.PCM{Rate: 16000, Samples: pcm}
}

// playback is queued speech on the scripted line.
type playback struct {
	line          *line
	total, played int
	start, last   time.Time
	cut           bool
	started, done chan struct{}
}

func (p *playback) Started() <-chan struct{} { return p.started }
func (p *playback) Done() <-chan struct{}    { return p.done }
func (p *playback) Progress() speech.Progress {
	p.line.mu.Lock()
	defer p.line.mu.Unlock()
	pr := speech.Progress{Played: p.played, Total: p.total, Start: p.start, Cut: p.cut}
	if p.played > 0 {
		pr.End = p.last.Add(frameDur)
	}
	return pr
}
func (p *playback) Cut() {
	p.line.mu.Lock()
	defer p.line.mu.Unlock()
	p.line.drop(p, true)
}

// line is a scripted call on the simulated clock. The caller's audio is what the test
// feeds, a 20 ms frame every 20 ms; queued speech goes out a 20 ms frame every 20 ms, as
// the worker's speaker sends it, 10 ms out of step with the caller's frames so that the
// order of the two is always the same.
type line struct {
	audio chan []int16
	keys  chan speech.Key // the caller's keypad (speech.Keypad)
	// transferFailures are the control plane's notices (speech.TransferWatcher).
	transferFailures chan speech.TransferFailure
	fed              int // samples of caller audio handed to the conversation

	mu         sync.Mutex
	queue      []*playback
	paused     bool
	pauses     int
	resumes    int
	framesSent int
	events     []speech.Event
	record     *conversation.Record
	transfers  []string
	// transferErr is what Transfer answers.
	transferErr error
}

// Transfer records a transfer (speech.Transferrer).
func (l *line) Transfer(_ context.Context, to string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.transfers = append(l.transfers, to)
	return l.transferErr
}

func (l *line) transferred() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.transfers...)
}

func newLine() *line {
	return &line{audio: make(chan []int16), keys: make(chan speech.Key), transferFailures: make(chan speech.TransferFailure),
		record: conversation.NewRecord(time.Now())}
}

func (l *line) Audio() <-chan []int16   { return l.audio }
func (l *line) Keys() <-chan speech.Key { return l.keys }
func (l *line) TransferFailures() <-chan speech.TransferFailure {
	return l.transferFailures
}
func (l *line) Speak(pcm tts.PCM) (speech.Playback, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := &playback{total: (len(pcm.Samples)*50 + pcm.Rate - 1) / pcm.Rate, started: make(chan struct{}), done: make(chan struct{}), line: l}
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
		l.drop(l.queue[0], true)
	}
}
func (l *line) Publish(e speech.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
	l.record.Add(e)
}

// drop removes p from the queue; l.mu held.
func (l *line) drop(p *playback, cut bool) {
	for i, q := range l.queue {
		if q == p {
			l.queue = append(l.queue[:i], l.queue[i+1:]...)
			p.cut = cut
			close(p.done)
			return
		}
	}
}

// play sends the queue's frames until ctx ends; then the call is over and what did not
// play ends uncut.
func (l *line) play(ctx context.Context) {
	time.Sleep(10 * time.Millisecond)
	tick := time.NewTicker(frameDur)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			l.mu.Lock()
			for len(l.queue) > 0 {
				l.drop(l.queue[0], false)
			}
			l.mu.Unlock()
			return
		case now := <-tick.C:
			l.tick(now)
		}
	}
}

// tick sends one frame of the queue unless paused.
func (l *line) tick(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.paused || len(l.queue) == 0 {
		return
	}
	p := l.queue[0]
	if p.played == 0 {
		p.start = now
		close(p.started)
	}
	p.played++
	p.last = now
	l.framesSent++
	if p.played >= p.total {
		l.queue = l.queue[1:]
		close(p.done)
	}
}

type lineState struct {
	turns           []persona.Turn
	metrics         persona.Metrics
	usage           persona.Usage
	events          []speech.Event
	paused          bool
	pauses, resumes int
	sent            int // frames sent
}

func (l *line) state() lineState {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := lineState{turns: l.record.Transcript(), events: append([]speech.Event(nil), l.events...),
		paused: l.paused, pauses: l.pauses, resumes: l.resumes, sent: l.framesSent}
	l.record.Metrics(&s.metrics)
	s.usage = l.record.Usage()
	return s
}

// feed sends the caller frames of level for d, one every 20 ms, and returns once the
// conversation has done what they make it do.
func (l *line) feed(t *testing.T, stopped <-chan struct{}, level int16, d time.Duration) {
	t.Helper()
	for range int(d / frameDur) {
		f := make([]int16, frameLen)
		for j := range f {
			f[j] = level
		}
		time.Sleep(frameDur)
		select {
		case l.audio <- f:
			l.fed += len(f)
		case <-stopped:
			return
		}
	}
	synctest.Wait()
}

// alignToWindow feeds silence until at most half a VAD window of audio waits for the
// next window, so that speech fed next fills the first window it reaches at least half
// way, as any onset does within one window's time on a real call.
func (l *line) alignToWindow(t *testing.T, stopped <-chan struct{}) {
	t.Helper()
	for l.fed%scriptedWindow > scriptedWindow/2 {
		l.feed(t, stopped, 0, frameDur)
	}
}

// eventually feeds silence (so speech plays) until cond holds, for at most 30 s of
// call.
func (l *line) eventually(t *testing.T, stopped <-chan struct{}, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 30 s of call", what)
		}
		l.feed(t, stopped, 0, frameDur)
	}
}
