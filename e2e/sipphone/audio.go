package sipphone

import (
	"math"
	"os"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/tts"
)

// Rate is the sample rate of the WAV files the phone speaks and records: G.711's.
const Rate = 8000

// WriteTone writes a WAV file of a sine at hz Hz, at half of full scale, lasting d, for
// a phone to speak.
func WriteTone(path string, hz float64, d time.Duration) error {
	n := int(d.Seconds() * Rate)
	pcm := make([]int16, n)
	for i := range pcm {
		pcm[i] = int16(16000 * math.Sin(2*math.Pi*hz*float64(i)/Rate))
	}
	return os.WriteFile(path, tts.EncodeWAV(tts.PCM{Rate: Rate, Samples: pcm}), 0o600)
}

// Level is the RMS of samples as a share of full scale (0 is digital silence; a sine
// at half of full scale is 0.35).
func Level(samples []int16) float64 {
	if len(samples) == 0 {
		return 0
	}
	var sum float64
	for _, s := range samples {
		v := float64(s) / 32768
		sum += v * v
	}
	return math.Sqrt(sum / float64(len(samples)))
}

// ToneLevel is the amplitude of the hz component of p as a share of full scale
// (Goertzel over the whole signal): a sine at half of full scale gives 0.5 at its own
// frequency and about 0 elsewhere, whatever else is mixed in.
func ToneLevel(p tts.PCM, hz float64) float64 {
	n := len(p.Samples)
	if n == 0 || p.Rate == 0 {
		return 0
	}
	w := 2 * math.Pi * hz / float64(p.Rate)
	coeff := 2 * math.Cos(w)
	var s1, s2 float64
	for _, x := range p.Samples {
		s0 := float64(x)/32768 + coeff*s1 - s2
		s2, s1 = s1, s0
	}
	power := s1*s1 + s2*s2 - coeff*s1*s2
	return 2 * math.Sqrt(math.Max(power, 0)) / float64(n)
}

// Loudest is the highest Level over windows of d in p: whether anything was heard at
// all, however short.
func Loudest(p tts.PCM, d time.Duration) float64 {
	win := int(d.Seconds() * float64(p.Rate))
	if win <= 0 {
		return 0
	}
	var best float64
	for i := 0; i+win <= len(p.Samples); i += win {
		best = math.Max(best, Level(p.Samples[i:i+win]))
	}
	return best
}
