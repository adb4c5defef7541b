// Package amd is answering-machine detection: from the first seconds of a callee's audio
// after an outbound call is answered, it decides whether a person, a voicemail greeting,
// a call-screening assistant or nobody (silence) answered, and, on a voicemail box, when
// the greeting is over (its beep has ended, or it fell silent) so that a message left
// then is recorded whole.
//
// It hears the audio in 32 ms windows (512 samples at 16 kHz) and uses:
//
//   - cadence: a person answers with a short greeting ("Hello?", "Hi, this is Ann")
//     and then waits for the caller, so a short stretch of speech followed by a pause is
//     a person; a recorded greeting talks on ("Hi, you've reached Ann, I can't take your
//     call right now..."), so long speech without a long pause is a machine;
//   - the beep: a steady tone (300-2500 Hz, one frequency, at least 120 ms), found with
//     the Goertzel algorithm over candidate frequencies, is a voicemail box's "record
//     now" signal;
//   - silence: nothing said within the decision bound (3 s by default);
//   - words, when a recogniser gives them (Hint): "leave a message", "not available",
//     "after the tone" are a voicemail box; "say your name", "why you are calling" are a
//     call-screening assistant.
//
// Speech is told from quiet by level (RMS against an adaptive noise floor), or by a
// voice activity detector's probability when one is given (Config.Voice). The package
// reads no environment and starts no goroutine: the caller feeds audio (Write) and asks
// (Decision, Ready) on its own clock, which is the audio's: a detector's time is the
// number of samples written.
package amd

import (
	"math"
	"strings"
	"time"
)

// Result is what answered.
type Result string

// Results.
const (
	Human     Result = "human"
	Voicemail Result = "voicemail"
	Screening Result = "screening"
	Silence   Result = "silence"
	// Unknown: the bound passed with speech that fits neither a person nor a machine (it
	// began late, or is of middling length). Callers treat it as a person.
	Unknown Result = "unknown"
)

// Results are every result.
var Results = []Result{Human, Voicemail, Screening, Silence, Unknown}

// Reasons a decision was made, for logs and tests.
const (
	ReasonShortGreeting = "short_greeting" // short speech, then a pause
	ReasonLongGreeting  = "long_greeting"  // speech past LongGreeting
	ReasonBeep          = "beep"           // a steady tone
	ReasonWords         = "words"          // the recogniser's words
	ReasonNoSpeech      = "no_speech"      // nothing said within the bound
	ReasonBound         = "bound"          // the bound passed; the best guess
)

// Why the greeting counts as over (Ready).
const (
	ReadyBeep    = "beep"    // the beep ended
	ReadyQuiet   = "quiet"   // the greeting fell silent for GreetingEnd
	ReadyTimeout = "timeout" // MaxGreeting passed
)

// Rate is the audio's sample rate; Window the samples of one window (32 ms).
const (
	Rate   = 16000
	Window = 512
)

// Voice gives the probability, 0..1, that a window of Window samples holds speech (a
// voice activity detector such as mediafleet/vad's).
type Voice interface {
	Prob(window []int16) (float32, error)
}

// Config tunes a detector; the zero value is the defaults.
type Config struct {
	// Within bounds the decision from the first sample: default 3 s.
	Within time.Duration
	// ShortGreeting is the longest speech that still counts as a person's greeting when a
	// pause follows it; default 1.6 s.
	ShortGreeting time.Duration
	// HumanPause is the pause after a short greeting that makes it a person's; default
	// 640 ms.
	HumanPause time.Duration
	// LongGreeting is the speech that makes a machine; default 2.1 s.
	LongGreeting time.Duration
	// GreetingEnd is the silence after a voicemail greeting that ends it when no beep
	// comes; default 1.5 s.
	GreetingEnd time.Duration
	// MaxGreeting bounds the wait for a voicemail greeting's end from the first sample;
	// default 40 s.
	MaxGreeting time.Duration
	// Voice, when set, tells speech from quiet; else the level does.
	Voice Voice
	// VoiceThreshold is the probability from which Voice's window is speech; default 0.5.
	VoiceThreshold float32
}

func (c *Config) defaults() {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&c.Within, 3*time.Second)
	set(&c.ShortGreeting, 1600*time.Millisecond)
	set(&c.HumanPause, 640*time.Millisecond)
	set(&c.LongGreeting, 2100*time.Millisecond)
	set(&c.GreetingEnd, 1500*time.Millisecond)
	set(&c.MaxGreeting, 40*time.Second)
	if c.VoiceThreshold <= 0 {
		c.VoiceThreshold = 0.5
	}
}

// Decision is what a detector decided, and when: At is the audio's time (from the first
// sample) of the window that decided it.
type Decision struct {
	Result Result
	Reason string
	At     time.Duration
	// Speech is how much speech was heard by then; Beep, whether a beep was.
	Speech time.Duration
	Beep   bool
}

// Revisable says the decision is a voicemail box by the greeting's length alone, which
// words naming a screening assistant may still revise (Hint).
func (d Decision) Revisable() bool {
	return d.Result == Voicemail && (d.Reason == ReasonLongGreeting || d.Reason == ReasonBound)
}

// Detector decides for one call. It is not safe for concurrent use.
type Detector struct {
	cfg     Config
	pending []int16 // samples short of a window
	windows int     // windows heard

	floor  float64   // the noise floor's RMS
	levels []float64 // the last floorWindows windows' RMS, a ring

	onset    bool // speech was heard
	speech   int  // speech windows heard (gaps shorter than bridge count as speech)
	quiet    int  // windows since the last speech window
	lastLoud int  // windows since the last speech or tone window
	gap      int  // a pause under way inside speech, not counted yet

	tone      toneRun
	beep      bool // a beep was heard
	beepEnded int  // windows since the beep ended; -1 while none has

	hint   Result
	dec    *Decision
	ready  string
	readyW int
}

// toneRun follows consecutive windows of one steady tone.
type toneRun struct {
	freq float64
	n    int
	// early: the tone was under way when the detector started listening (in its first
	// earlyTone windows): a tone before the answer, not a greeting's beep.
	early bool
}

// New makes a detector.
func New(cfg Config) *Detector {
	cfg.defaults()
	return &Detector{cfg: cfg, floor: 30, beepEnded: -1}
}

func (d *Detector) dur(windows int) time.Duration {
	return time.Duration(windows) * Window * time.Second / Rate
}

func (d *Detector) windowsOf(t time.Duration) int {
	return int((t*Rate/time.Second + Window - 1) / Window)
}

// Elapsed is the audio heard so far, in whole windows.
func (d *Detector) Elapsed() time.Duration { return d.dur(d.windows) }

// Write hears audio (mono, 16 kHz), in pieces of any length.
func (d *Detector) Write(pcm []int16) {
	d.pending = append(d.pending, pcm...)
	for len(d.pending) >= Window {
		d.window(d.pending[:Window])
		d.pending = d.pending[Window:]
	}
	if len(d.pending) == 0 {
		d.pending = d.pending[:0:0]
	}
}

// Hint gives the recogniser's words so far (a partial or final transcript of the callee,
// from the answer on). Words that name a voicemail box or a screening assistant decide
// at the next window, if nothing was decided before.
//
// A voicemail decision by the greeting's length alone is revised to Screening by words
// that name a screening assistant, up to the greeting's end (the caller gives its final
// words then): on a phone line the words of a screening prompt come later than its
// length says "voicemail", and both wait for the greeting's end before acting, so the
// revision costs nothing. It reports whether it revised the decision.
func (d *Detector) Hint(words string) bool {
	r := Classify(words)
	if r == "" {
		return false
	}
	if d.hint == "" {
		d.hint = r
	}
	if r == Screening && d.dec != nil && d.dec.Revisable() {
		d.dec.Result, d.dec.Reason = Screening, ReasonWords
		return true
	}
	return false
}

// Decision is the decision, once made.
func (d *Detector) Decision() (Decision, bool) {
	if d.dec == nil {
		return Decision{}, false
	}
	return *d.dec, true
}

// Ready reports, after a voicemail or screening decision, that the greeting is over: the
// beep has ended (a moment ago), or the greeting fell silent for GreetingEnd, or
// MaxGreeting passed. why is one of the Ready* values.
func (d *Detector) Ready() (why string, ok bool) { return d.ready, d.ready != "" }

// ReadyAt is the audio's time at which Ready became true.
func (d *Detector) ReadyAt() time.Duration { return d.dur(d.readyW) }

const (
	minSpeechRMS = 300.0 // -40 dBFS: quieter is never speech
	minToneRMS   = 250.0
	toneShare    = 0.6 // the share of a window's energy at one frequency that is a tone
	beepWindows  = 4   // 128 ms of one tone is a beep
	bridge       = 10  // a pause of fewer windows (320 ms) is inside one stretch of speech
	afterBeep    = 3   // windows after the beep ends before Ready (96 ms)
	earlyTone    = 3   // a tone that starts in the first 96 ms is no beep
	floorWindows = 47  // the noise floor is the quietest window of the last 1.5 s
	// By level, a window of speech starts at speechOverFloor times the noise floor (14
	// dB) and goes on down to speechGoesOn (9.5 dB). On a street 20 dB under the speech
	// that tells every clip of the tests right; at 10 dB it takes a voice activity
	// detector (Config.Voice).
	speechOverFloor = 5.0
	speechGoesOn    = 3.0
)

func (d *Detector) window(w []int16) {
	d.windows++
	rms := level(w)
	freq, tone := 0.0, false
	if rms >= minToneRMS {
		freq, tone = steadyTone(w)
	}
	if tone && d.tone.n > 0 && math.Abs(freq-d.tone.freq) <= 30 {
		d.tone.n++
	} else if tone {
		d.tone = toneRun{freq: freq, n: 1, early: d.windows <= earlyTone}
	} else {
		if d.beep && d.beepEnded < 0 && d.tone.n >= beepWindows {
			d.beepEnded = 0
		}
		d.tone = toneRun{}
	}
	if d.tone.n >= beepWindows && !d.tone.early {
		d.beep = true
	}
	if d.beepEnded >= 0 {
		d.beepEnded++
	}

	d.follow(rms)
	prob := float32(-1)
	if d.cfg.Voice != nil {
		// Every window, so a detector that carries state from one to the next hears
		// them all.
		if p, err := d.cfg.Voice.Prob(w); err == nil {
			prob = p
		}
	}
	speech := false
	if !tone {
		speech = d.isSpeech(rms, prob)
	}
	if speech {
		if d.onset && d.gap > 0 && d.gap < bridge {
			d.speech += d.gap // a short pause inside speech
		}
		d.onset = true
		d.speech++
		d.quiet, d.gap = 0, 0
	} else {
		d.quiet++
		if d.onset {
			d.gap++
		}
	}
	if speech || tone {
		d.lastLoud = 0
	} else {
		d.lastLoud++
	}

	if d.dec == nil {
		d.decide()
	}
	if d.dec != nil && d.ready == "" && (d.dec.Result == Voicemail || d.dec.Result == Screening) {
		switch {
		case d.beepEnded >= afterBeep:
			d.ready = ReadyBeep
		case d.onset && !d.inBeep() && d.lastLoud >= d.windowsOf(d.cfg.GreetingEnd):
			d.ready = ReadyQuiet
		case d.dur(d.windows) >= d.cfg.MaxGreeting:
			d.ready = ReadyTimeout
		}
		if d.ready != "" {
			d.readyW = d.windows
		}
	}
}

// follow estimates the noise floor by minimum statistics: the quietest window of the
// last floorWindows (speech has pauses between words, noise has none), so a line that is
// noisy from the first window (a street) does not count as speech for long, and speech
// that goes on does not raise the floor above its own pauses.
func (d *Detector) follow(rms float64) {
	if len(d.levels) < floorWindows {
		d.levels = append(d.levels, rms)
	} else {
		d.levels[d.windows%floorWindows] = rms
	}
	d.floor = math.Inf(1)
	for _, l := range d.levels {
		d.floor = min(d.floor, l)
	}
	d.floor = max(d.floor, 5)
}

func (d *Detector) inBeep() bool { return d.tone.n > 0 }

// isSpeech tells a window's speech by its level against the noise floor, or by the
// voice activity detector's probability (prob; -1 without one).
func (d *Detector) isSpeech(rms float64, prob float32) bool {
	if rms < minSpeechRMS {
		return false
	}
	if prob >= 0 {
		return prob >= d.cfg.VoiceThreshold
	}
	if d.onset && d.quiet == 0 {
		return rms >= speechGoesOn*d.floor // speech goes on at a lower level, as it starts
	}
	return rms >= speechOverFloor*d.floor
}

// decide makes the decision when the audio so far allows one.
func (d *Detector) decide() {
	now := d.windows
	speech := d.dur(d.speech)
	decided := func(r Result, why string) {
		d.dec = &Decision{Result: r, Reason: why, At: d.dur(now), Speech: speech, Beep: d.beep}
	}
	switch {
	case d.beep:
		decided(Voicemail, ReasonBeep)
	case d.hint != "":
		decided(d.hint, ReasonWords)
	case speech >= d.cfg.LongGreeting:
		decided(Voicemail, ReasonLongGreeting)
	case d.onset && speech <= d.cfg.ShortGreeting && d.quiet >= d.windowsOf(d.cfg.HumanPause):
		decided(Human, ReasonShortGreeting)
	case d.dur(now+1) > d.cfg.Within: // the last window that ends within the bound
		switch {
		case !d.onset:
			decided(Silence, ReasonNoSpeech)
		case speech >= d.cfg.ShortGreeting:
			// Talking on past a person's greeting, and still at it.
			decided(Voicemail, ReasonBound)
		case d.quiet >= bridge:
			// A short greeting, and a pause shorter than HumanPause so far.
			decided(Human, ReasonBound)
		default:
			decided(Unknown, ReasonBound)
		}
	}
}

// Classify names what words say answered: Voicemail, Screening, or "" when they say
// neither.
func Classify(words string) Result {
	w := " " + strings.Join(strings.Fields(strings.ToLower(strings.Map(func(r rune) rune {
		if r == '\'' || r == '’' {
			return -1
		}
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return ' '
	}, words))), " ") + " "
	for _, p := range screeningPhrases {
		if strings.Contains(w, " "+p+" ") {
			return Screening
		}
	}
	for _, p := range voicemailPhrases {
		if strings.Contains(w, " "+p+" ") {
			return Voicemail
		}
	}
	return ""
}

// The phrases, lower case, without apostrophes.
var (
	voicemailPhrases = []string{
		"leave a message", "leave your message", "leave me a message", "leave a brief message",
		"not available", "unavailable", "after the tone", "after the beep", "at the tone",
		"at the beep", "voicemail", "voice mail", "mailbox", "cant take your call",
		"cannot take your call", "cant come to the phone", "cannot come to the phone",
		"record your message", "youve reached", "you have reached", "away from the phone",
	}
	screeningPhrases = []string{
		"say your name", "state your name", "why you are calling", "why youre calling",
		"reason for your call", "reason for calling", "screening", "whos calling",
		"who is calling", "what youre calling about", "what you are calling about",
		// "Please state your name and why you're calling", however its verb is heard
		// ("take your name and why you're going" through a phone line's codec).
		"your name and why", "your name and the reason",
	}
)

// level is a window's RMS.
func level(w []int16) float64 {
	var sum float64
	for _, s := range w {
		f := float64(s)
		sum += f * f
	}
	return math.Sqrt(sum / float64(len(w)))
}

// steadyTone looks for one frequency holding most of the window's energy: the Goertzel
// algorithm at every candidate frequency, coarse then fine around the strongest.
func steadyTone(w []int16) (float64, bool) {
	var energy float64
	for _, s := range w {
		f := float64(s)
		energy += f * f
	}
	if energy == 0 {
		return 0, false
	}
	best, bestP := 0.0, 0.0
	for f := 300.0; f <= 2500; f += 25 {
		if p := goertzel(w, f); p > bestP {
			best, bestP = f, p
		}
	}
	for f := best - 12; f <= best+12; f += 4 {
		if p := goertzel(w, f); p > bestP {
			best, bestP = f, p
		}
	}
	// A sine of amplitude A over N samples: power (AN/2)^2, energy A^2 N/2.
	share := 2 * bestP / (float64(len(w)) * energy)
	return best, share >= toneShare
}

// goertzel is the power of w at freq Hz.
func goertzel(w []int16, freq float64) float64 {
	coeff := 2 * math.Cos(2*math.Pi*freq/Rate)
	var s1, s2 float64
	for _, x := range w {
		s := float64(x) + coeff*s1 - s2
		s2, s1 = s1, s
	}
	return s1*s1 + s2*s2 - coeff*s1*s2
}
