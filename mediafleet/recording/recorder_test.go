package recording

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tone is d of a sine at hz, at rate, from sample offset n0 (continuous across calls).
func tone(hz float64, rate int, n0, n int) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(10000 * math.Sin(2*math.Pi*hz*float64(n0+i)/float64(rate)))
	}
	return out
}

// level is the RMS in dBFS of pcm[from:to] (seconds at Rate).
func level(pcm []int16, from, to float64) float64 {
	a, b := int(from*Rate), min(int(to*Rate), len(pcm))
	var sum float64
	for _, v := range pcm[a:b] {
		x := float64(v) / 32768
		sum += x * x
	}
	return 10 * math.Log10(sum/float64(b-a)+1e-12)
}

// record writes a call: the assistant speaks (1 kHz) from 0.2 s to 1.0 s and sends
// silence every 20 ms from 0 to 3 s; the caller's track arrives at 1.2 s (nothing before)
// and speaks (440 Hz) from 1.5 s to 2.5 s, each 20 ms frame handed in up to 15 ms late.
func record(t *testing.T) ([]byte, Info) {
	t.Helper()
	t0 := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	r, err := New(&buf, t0)
	if err != nil {
		t.Fatal(err)
	}
	const out = 48000
	for i := range 150 { // 3 s of 20 ms at 48 kHz
		at := t0.Add(time.Duration(i) * 20 * time.Millisecond)
		f := make([]int16, 960)
		if s := at.Sub(t0).Seconds(); s >= 0.2 && s < 1.0 {
			f = tone(1000, out, i*960, 960)
		}
		r.Write(Assistant, f, out, at)
		if s := at.Sub(t0).Seconds(); s >= 1.2 {
			c := make([]int16, 320)
			if s >= 1.5 && s < 2.5 {
				c = tone(440, Rate, i*320, 320)
			}
			jitter := time.Duration(i%4) * 5 * time.Millisecond
			r.Write(Caller, c, Rate, at.Add(jitter))
		}
	}
	info, err := r.Close(t0.Add(3 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), info
}

func TestTwoChannelsAligned(t *testing.T) {
	file, info := record(t)
	if info.Duration != 3*time.Second || info.Bytes != int64(len(file)) {
		t.Errorf("info = %+v, want 3 s and %d bytes", info, len(file))
	}
	left, right, err := Decode(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if d := float64(len(left)) / Rate; math.Abs(d-3) > 0.03 {
		t.Errorf("decoded %.3f s, want 3", d)
	}
	// Each sound on its own channel at its own time, at least 30 dB above the other
	// channel and above its own silence (windows clear of the edges by 40 ms).
	for _, c := range []struct {
		name           string
		loud, quiet    []int16
		from, to       float64
		silentElsewhre [][2]float64
	}{
		{"assistant", right, left, 0.24, 0.96, [][2]float64{{0, 0.16}, {1.04, 3}}},
		{"caller", left, right, 1.54, 2.46, [][2]float64{{0, 1.46}, {2.54, 3}}},
	} {
		on := level(c.loud, c.from, c.to)
		if on < -20 {
			t.Errorf("%s channel at %.2f-%.2f s: %.1f dBFS, want the tone (about -13)", c.name, c.from, c.to, on)
		}
		if other := level(c.quiet, c.from, c.to); on-other < 30 {
			t.Errorf("%s's sound on the other channel: %.1f dBFS beside %.1f", c.name, other, on)
		}
		for _, w := range c.silentElsewhre {
			if off := level(c.loud, w[0], w[1]); on-off < 30 {
				t.Errorf("%s channel at %.2f-%.2f s: %.1f dBFS, want silence", c.name, w[0], w[1], off)
			}
		}
	}
}

// A sound's onset lands within 10 ms of its time (the codec's delay is taken out by the
// pre-skip).
func TestOnsetOffset(t *testing.T) {
	file, _ := record(t)
	left, right, err := Decode(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	onset := func(pcm []int16) float64 {
		for i, v := range pcm {
			if v > 3000 || v < -3000 {
				return float64(i) / Rate
			}
		}
		return -1
	}
	if got := onset(right); math.Abs(got-0.2) > 0.01 {
		t.Errorf("assistant's onset at %.3f s, want 0.200", got)
	}
	if got := onset(left); math.Abs(got-1.5) > 0.02 { // handed in up to 15 ms late
		t.Errorf("caller's onset at %.3f s, want 1.500", got)
	}
}

// ffmpeg, another implementation, reads the file as two channels of 3 s.
func TestFFmpegReadsIt(t *testing.T) {
	ffprobe, err := exec.LookPath("ffprobe")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("ffprobe is required in CI (make deps installs ffmpeg)")
		}
		t.Skip("no ffprobe (make run installs ffmpeg)")
	}
	file, _ := record(t)
	p := filepath.Join(t.TempDir(), "call.ogg")
	if err := os.WriteFile(p, file, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(ffprobe, "-v", "error", "-show_entries", "stream=codec_name,channels:format=duration",
		"-of", "default=noprint_wrappers=1", p).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{"codec_name=opus", "channels=2", "duration=3.0"} {
		if !strings.Contains(got, want) {
			t.Errorf("ffprobe says %q, want %s", got, want)
		}
	}
}

func TestBadFiles(t *testing.T) {
	file, _ := record(t)
	bad := append([]byte(nil), file...)
	bad[len(bad)/2] ^= 0xff
	if _, _, err := Decode(bytes.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "CRC") {
		t.Errorf("a damaged page: %v, want a CRC error", err)
	}
	if _, _, err := Decode(bytes.NewReader([]byte("not ogg at all, not at all"))); err == nil {
		t.Error("not an Ogg file: no error")
	}
}
