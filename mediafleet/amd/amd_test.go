package amd

import (
	"math"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/vad"
)

// The three cases of the issue, each decided right within 3 s of answer.
func TestClassifiesWithinBound(t *testing.T) {
	for _, c := range []clip{
		{name: "person", want: Human, parts: []part{quiet(300 * time.Millisecond), say("flite", "slt", "Hello?"), quiet(4 * time.Second)}},
		{name: "voicemail with beep", want: Voicemail, wantReady: ReadyBeep, parts: []part{quiet(300 * time.Millisecond),
			say("espeak-ng", "en-us", "Hi, you've reached Ann Parker. I can't take your call right now, so please leave a message after the tone."),
			quiet(400 * time.Millisecond), beep(1000, 500*time.Millisecond), quiet(2 * time.Second)}},
		{name: "silence", want: Silence, parts: []part{quiet(5 * time.Second)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pcm := render(t, c)
			d, dec, ok := hear(pcm, "", 0)
			if !ok {
				t.Fatalf("no decision in %v of audio", d.Elapsed())
			}
			t.Logf("%+v", dec)
			if dec.Result != c.want || dec.At > 3*time.Second {
				t.Fatalf("decided %s (%s) at %v; want %s within 3 s", dec.Result, dec.Reason, dec.At, c.want)
			}
			if c.want == Human && dec.At > 2*time.Second {
				t.Errorf("a person's short greeting decided at %v; want by 2 s (the greeting waits on it)", dec.At)
			}
			if c.wantReady == "" {
				return
			}
			why, ok := d.Ready()
			if !ok || why != c.wantReady {
				t.Fatalf("greeting end %q (%v); want %q", why, ok, c.wantReady)
			}
			// The message starts after the beep, and soon after it.
			end := beepEnd(t, c)
			if at := d.ReadyAt(); at < end || at > end+300*time.Millisecond {
				t.Fatalf("ready at %v; the beep ends at %v", at, end)
			}
		})
	}
}

// Every clip of the labelled set, in flite's and espeak-ng's voices, is decided right
// within 3 s, and a voicemail box's greeting end is found after its beep or in its
// silence.
func TestClips(t *testing.T) {
	if testing.Short() {
		t.Skip("44 clips rendered with flite, espeak-ng and ffmpeg (make unit)")
	}
	for _, c := range clips() {
		t.Run(c.name, func(t *testing.T) {
			pcm := render(t, c)
			d, dec, ok := hear(pcm, "", 0)
			if !ok || dec.Result != c.want || dec.At > 3*time.Second {
				t.Fatalf("decided %+v (%v); want %s within 3 s", dec, ok, c.want)
			}
			if c.wantReady == "" {
				return
			}
			if why, _ := d.Ready(); why != c.wantReady {
				t.Fatalf("greeting end %q at %v; want %q", why, d.ReadyAt(), c.wantReady)
			}
		})
	}
}

// The same clips on a street (traffic, engines, tyres, a horn), noisy from the first
// window: 20 dB under the speech, the level against a noise floor learnt from the
// quietest moments tells them all; 10 dB under, Silero VAD (Config.Voice) does. Every
// voicemail box's greeting end is still found.
func TestStreetNoise(t *testing.T) {
	if testing.Short() {
		t.Skip("44 clips rendered with flite, espeak-ng and ffmpeg, twice, and Silero (make unit)")
	}
	model, err := vad.Load(vad.Config{})
	if err != nil {
		t.Fatalf("Silero VAD: %v (run make deps)", err)
	}
	for _, tc := range []struct {
		name   string
		snr    float64
		silero bool
	}{{"level at 20 dB", 20, false}, {"silero at 10 dB", 10, true}} {
		t.Run(tc.name, func(t *testing.T) {
			for i, c := range clips() {
				var cfg Config
				if tc.silero {
					v, err := model.NewDetector()
					if err != nil {
						t.Fatal(err)
					}
					cfg.Voice = v
					t.Cleanup(func() { v.Close() })
				}
				d := New(cfg)
				pcm := street(t, render(t, c), tc.snr, uint64(i))
				for j := 0; j < len(pcm); j += 320 {
					d.Write(pcm[j:min(j+320, len(pcm))])
					if _, ok := d.Ready(); ok {
						break
					}
				}
				dec, ok := d.Decision()
				if !ok || dec.Result != c.want || dec.At > 3*time.Second {
					t.Errorf("%s: decided %+v (%v); want %s within 3 s", c.name, dec, ok, c.want)
				}
				if _, ok := d.Ready(); c.wantReady != "" && !ok {
					t.Errorf("%s: no greeting end in %v of audio", c.name, d.Elapsed())
				}
			}
		})
	}
}

// A person who talks on past a greeting's length ("Hello, this is Ann Parker speaking,
// who is calling please?") sounds like a machine; the recogniser's words, when they come
// in time, decide first for a voicemail box or a screening assistant.
func TestWords(t *testing.T) {
	screen := clip{parts: []part{quiet(300 * time.Millisecond),
		say("flite", "slt", "Hi, if you record your name and reason for calling, I'll see if this person is available."), quiet(2 * time.Second)}}
	pcm := render(t, screen)
	_, dec, _ := hear(pcm, "if you record your name and reason for calling", 1500*time.Millisecond)
	if dec.Result != Screening || dec.Reason != ReasonWords {
		t.Fatalf("screening prompt with words: %+v", dec)
	}
	_, dec, _ = hear(pcm, "", 0)
	if dec.Result != Voicemail {
		t.Fatalf("screening prompt without words: %+v; want a machine (voicemail)", dec)
	}
	// Words that come after the greeting's length decided voicemail (a phone line's
	// delay) revise it, up to the greeting's end, where its final words come; a beep's
	// voicemail stays.
	late := dec.At + 300*time.Millisecond
	if _, dec, _ = hear(pcm, "if you record your name and reason for calling", late); dec.Result != Screening || dec.Reason != ReasonWords {
		t.Fatalf("screening words %v after a voicemail decision by length: %+v; want it revised to screening", late, dec)
	}
	d, _, _ := hear(pcm, "", 0) // to the greeting's end
	if _, ok := d.Ready(); !ok || !d.Hint("say your name and why you are calling") {
		t.Fatal("the greeting's final words at its end did not revise a voicemail by its length")
	}
	box := render(t, clip{parts: []part{say("flite", "slt", "Hi, this is Ann."), quiet(300 * time.Millisecond), beep(1000, 500*time.Millisecond), quiet(2 * time.Second)}})
	d = New(Config{})
	for i := 0; i < len(box); i += 320 {
		d.Write(box[i:min(i+320, len(box))])
		if dec, ok := d.Decision(); ok && dec.Reason == ReasonBeep {
			break
		}
	}
	if d.Hint("state your name") {
		t.Fatal("a beep's voicemail revised by words")
	}
	for words, want := range map[string]Result{
		"Please leave a message after the tone":       Voicemail,
		"You've reached the voicemail of":             Voicemail,
		"the person you're calling is NOT AVAILABLE":  Voicemail,
		"Please say your name and why you're calling": Screening,
		"Go ahead and state your name":                Screening,
		"please take your name and why you're going":  Screening,
		"hello who is this":                           "",
		"Yes, this is Ann speaking, who's this?":      "",
	} {
		if got := Classify(words); got != want {
			t.Errorf("Classify(%q) = %q; want %q", words, got, want)
		}
	}
}

// A tone under way when the detector starts listening (a ringback, the sim's test tone)
// is no beep: silence after it is silence. The same tone after a greeting is a beep.
func TestEarlyToneIsNoBeep(t *testing.T) {
	pcm := render(t, clip{parts: []part{beep(440, 700*time.Millisecond), quiet(4 * time.Second)}})
	if _, dec, _ := hear(pcm, "", 0); dec.Result != Silence || dec.Beep {
		t.Fatalf("a tone from the start, then quiet: %+v; want silence, no beep", dec)
	}
	pcm = render(t, clip{parts: []part{quiet(time.Second), beep(440, 700*time.Millisecond), quiet(4 * time.Second)}})
	if _, dec, _ := hear(pcm, "", 0); dec.Result != Voicemail || !dec.Beep {
		t.Fatalf("a tone after a second: %+v; want a beep (voicemail)", dec)
	}
}

// A beep is a steady tone: a 1 kHz sine is one, at several levels; a chord of two tones
// and a sweep are not.
func TestSteadyTone(t *testing.T) {
	sine := func(hz, amp float64) []int16 {
		w := make([]int16, Window)
		for i := range w {
			w[i] = int16(amp * math.Sin(2*math.Pi*hz*float64(i)/Rate))
		}
		return w
	}
	for _, amp := range []float64{1000, 4000, 20000} {
		for _, hz := range []float64{440, 1000, 1013, 1400, 2100} {
			if f, ok := steadyTone(sine(hz, amp)); !ok || math.Abs(f-hz) > 10 {
				t.Errorf("%v Hz at %v: tone %v at %v", hz, amp, ok, f)
			}
		}
	}
	chord := sine(600, 4000)
	for i, s := range sine(1700, 4000) {
		chord[i] += s
	}
	if _, ok := steadyTone(chord); ok {
		t.Error("a chord of 600 and 1700 Hz counted as one tone")
	}
	if _, ok := steadyTone(make([]int16, Window)); ok {
		t.Error("silence counted as a tone")
	}
}
