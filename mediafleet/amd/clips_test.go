package amd

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/speechtest"
)

// The test clips are real audio: speech synthesised by the flite and espeak-ng commands,
// tones and resampling by ffmpeg, with a quiet line's noise added, at 16 kHz.

// part is one piece of a clip.
type part struct {
	engine, voice, text string        // speech: engine flite or espeak-ng
	silence             time.Duration // or silence
	toneHz              int           // or a tone of toneFor
	toneFor             time.Duration
}

func say(engine, voice, text string) part { return part{engine: engine, voice: voice, text: text} }
func quiet(d time.Duration) part          { return part{silence: d} }
func beep(hz int, d time.Duration) part   { return part{toneHz: hz, toneFor: d} }

// clip is a labelled recording: what answered, and the audio.
type clip struct {
	name string
	want Result
	// wantReady: a voicemail box's greeting end the detector must find (ReadyBeep or
	// ReadyQuiet), and beepEnd the audio's time at which the beep ends.
	wantReady string
	beepEnd   time.Duration
	parts     []part
}

var (
	toolsOnce sync.Once
	toolsErr  error
)

func needTools(t testing.TB) {
	t.Helper()
	toolsOnce.Do(func() {
		for _, tool := range []string{"flite", "espeak-ng", "ffmpeg"} {
			if _, err := exec.LookPath(tool); err != nil {
				toolsErr = fmt.Errorf("%s is not installed: %w", tool, err)
				return
			}
		}
	})
	if toolsErr != nil {
		t.Fatal(toolsErr)
	}
}

var (
	renderedMu sync.Mutex
	rendered   = map[string][]int16{}
)

// render makes a clip's audio, once per run of the package's tests.
func render(t testing.TB, c clip) []int16 {
	t.Helper()
	key := fmt.Sprintf("%+v", c.parts)
	renderedMu.Lock()
	pcm, ok := rendered[key]
	renderedMu.Unlock()
	if !ok {
		pcm = renderParts(t, c)
		renderedMu.Lock()
		rendered[key] = pcm
		renderedMu.Unlock()
	}
	return slices.Clone(pcm)
}

// street is pcm with street noise (traffic, engines, tyres, a horn) under it, at snr dB
// below the level of a spoken sentence (so a clip of silence gets the same noise as the
// others).
func street(t testing.TB, pcm []int16, snr float64, seed uint64) []int16 {
	t.Helper()
	ref := render(t, clip{parts: []part{say("flite", "slt", "Hello there, how are you today?")}})
	return speechtest.AddNoise(pcm, speechtest.StreetNoise(len(pcm), seed), 0, speechtest.RMS(ref)/math.Pow(10, snr/20))
}

func renderParts(t testing.TB, c clip) []int16 {
	t.Helper()
	needTools(t)
	dir := t.TempDir()
	var out []int16
	for i, p := range c.parts {
		switch {
		case p.text != "":
			wav := filepath.Join(dir, fmt.Sprintf("p%d.wav", i))
			var cmd *exec.Cmd
			if p.engine == "flite" {
				cmd = exec.Command("flite", "-voice", p.voice, "-t", p.text, "-o", wav)
			} else {
				cmd = exec.Command("espeak-ng", "-v", p.voice, "-w", wav, p.text)
			}
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v: %s", p.engine, err, b)
			}
			out = append(out, ffmpeg(t, "-i", wav)...)
		case p.toneHz > 0:
			out = append(out, ffmpeg(t, "-f", "lavfi", "-i",
				fmt.Sprintf("sine=frequency=%d:duration=%.3f", p.toneHz, p.toneFor.Seconds()))...)
		default:
			out = append(out, make([]int16, int(p.silence.Seconds()*Rate))...)
		}
	}
	// A quiet line: white noise at about -60 dBFS.
	r := rand.New(rand.NewPCG(uint64(len(out)), 7))
	for i := range out {
		v := int(out[i]) + int(r.NormFloat64()*30)
		out[i] = int16(max(min(v, 32767), -32768))
	}
	return out
}

// ffmpeg converts its input to 16 kHz mono 16-bit samples.
func ffmpeg(t testing.TB, in ...string) []int16 {
	t.Helper()
	args := append([]string{"-hide_banner", "-loglevel", "error"}, in...)
	args = append(args, "-ar", "16000", "-ac", "1", "-f", "s16le", "-")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("ffmpeg", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ffmpeg %v: %v: %s", in, err, stderr.String())
	}
	pcm := make([]int16, stdout.Len()/2)
	if err := binary.Read(&stdout, binary.LittleEndian, pcm); err != nil {
		t.Fatal(err)
	}
	return pcm
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// clips are the labelled set: persons, voicemail boxes with and without a beep, screening
// prompts (told by their words), and silence, in flite's and espeak-ng's voices.
func clips() []clip {
	var cs []clip
	voices := []struct{ engine, voice string }{
		{"flite", "slt"}, {"flite", "rms"}, {"flite", "awb"}, {"flite", "kal"},
		{"espeak-ng", "en-us"}, {"espeak-ng", "en-us+f3"}, {"espeak-ng", "en-gb"},
	}
	persons := []string{"Hello?", "Hi.", "Yes?", "Hello, this is Ann.", "Hey there.", "Good morning."}
	greetings := []string{
		"Hi, you've reached Ann Parker. I can't take your call right now, so please leave a message after the tone.",
		"The person you are calling is not available. Please record your message after the tone.",
		"Hello, this is Tom. Sorry I missed you. Leave your name and number and I will call you back.",
	}
	for i, v := range voices {
		for j, p := range persons {
			if (i+j)%2 == 1 { // half the pairs keep the set small
				continue
			}
			lead := seconds(0.2 + 0.1*float64(j%4))
			cs = append(cs, clip{name: fmt.Sprintf("person %s %s %q", v.engine, v.voice, p), want: Human,
				parts: []part{quiet(lead), say(v.engine, v.voice, p), quiet(4 * time.Second)}})
		}
		for j, g := range greetings {
			lead := seconds(0.3 + 0.2*float64(j))
			name := fmt.Sprintf("voicemail %s %s %d", v.engine, v.voice, j)
			if (i+j)%3 == 2 {
				cs = append(cs, clip{name: name + " no beep", want: Voicemail, wantReady: ReadyQuiet,
					parts: []part{quiet(lead), say(v.engine, v.voice, g), quiet(4 * time.Second)}})
				continue
			}
			hz := []int{1000, 850, 1400}[(i+j)%3]
			cs = append(cs, clip{name: fmt.Sprintf("%s beep %d Hz", name, hz), want: Voicemail, wantReady: ReadyBeep,
				parts: []part{quiet(lead), say(v.engine, v.voice, g), quiet(400 * time.Millisecond),
					beep(hz, 500*time.Millisecond), quiet(3 * time.Second)}})
		}
	}
	cs = append(cs,
		clip{name: "silence", want: Silence, parts: []part{quiet(5 * time.Second)}},
		clip{name: "silence then a late word", want: Silence, parts: []part{quiet(3200 * time.Millisecond), say("flite", "slt", "Hello?"), quiet(time.Second)}},
	)
	return cs
}

// hear runs a clip through a detector window by window, as 20 ms frames arrive on a call,
// asking for the decision and the greeting's end after each; words are the recogniser's
// transcript of the clip, given once the audio passes wordsAt (never when wordsAt is 0).
func hear(pcm []int16, words string, wordsAt time.Duration) (*Detector, Decision, bool) {
	d := New(Config{})
	for i := 0; i < len(pcm); i += 320 {
		d.Write(pcm[i:min(i+320, len(pcm))])
		if wordsAt > 0 && d.Elapsed() >= wordsAt {
			d.Hint(words)
			wordsAt = 0
		}
		if _, ok := d.Ready(); ok {
			break
		}
	}
	dec, ok := d.Decision()
	return d, dec, ok
}

// beepEnd is where a clip's beep ends, from its parts' lengths as rendered.
func beepEnd(t testing.TB, c clip) time.Duration {
	var at time.Duration
	for _, p := range c.parts {
		switch {
		case p.text != "":
			at += time.Duration(len(render(t, clip{parts: []part{p}}))) * time.Second / Rate
		case p.toneHz > 0:
			return at + p.toneFor
		default:
			at += p.silence
		}
	}
	return 0
}
