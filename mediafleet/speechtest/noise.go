package speechtest

import (
	"math"
	"math/rand/v2"
	"testing"
)

// babbleLines are what the crowd in Babble says: none of them a caller question.
var babbleLines = []struct{ voice, text string }{
	{"awb", "So I told him the train leaves at half past seven, and he still missed it."},
	{"slt", "The garden looks lovely this year, the roses came out early after all that rain."},
	{"rms", "We should try the new place on the corner, everyone says the soup is good."},
	{"kal16", "Have you seen the match last night? The second half was something else."},
	{"slt", "My sister moved to the coast in the spring and she loves it there."},
	{"awb", "If the meeting runs late I will call you from the office before I leave."},
}

// Babble is n samples of a room of people talking at once: six flite voices, each
// saying its own sentences over and over from its own offset (seed picks them), summed.
// Its level is whatever the voices give; MixAt sets it.
func Babble(t testing.TB, n int, seed uint64) []int16 {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	sum := make([]float64, n)
	for _, l := range babbleLines {
		talk := Flite(t, l.voice, l.text)
		gap := Rate / 4 // a breath between sentences
		period := len(talk) + gap
		off := r.IntN(period)
		for i := range sum {
			if j := (i + off) % period; j < len(talk) {
				sum[i] += float64(talk[j])
			}
		}
	}
	return clip(sum, 8000/peak(sum))
}

// StreetNoise is n samples of a street (seed makes it repeatable): a rumble of traffic
// (brown noise), engines idling (low harmonics whose pitch wanders), tyres hissing (high
// noise that swells as cars pass every few seconds) and now and then a horn.
func StreetNoise(n int, seed uint64) []int16 {
	r := rand.New(rand.NewPCG(seed, 2))
	out := make([]float64, n)
	var brown, hiss, prev float64
	for i := range out {
		t := float64(i) / Rate
		w := r.NormFloat64()
		brown = 0.995*brown + 0.05*w
		hp := w - prev // a first difference: the hiss is high
		prev = w
		hiss = 0.6*hiss + 0.4*hp
		pass := 0.5 + 0.5*math.Sin(2*math.Pi*t/4.3) // a car every 4.3 s
		f0 := 38 + 6*math.Sin(2*math.Pi*t/7.1)
		engine := math.Sin(2*math.Pi*f0*t) + 0.5*math.Sin(2*math.Pi*2*f0*t) + 0.25*math.Sin(2*math.Pi*3*f0*t)
		v := 3*brown + 0.4*engine + 0.6*pass*pass*hiss
		if math.Mod(t, 11) > 9.6 && math.Mod(t, 11) < 9.9 { // a horn, 300 ms every 11 s
			v += 0.8 * math.Copysign(1, math.Sin(2*math.Pi*415*t))
		}
		out[i] = v
	}
	return clip(out, 8000/peak(out))
}

// MixAt adds noise (repeated as needed) under speech so that speech's level stands snr
// dB above the noise's, and returns the mix: the way tests put a caller in a noisy room.
func MixAt(speech, noise []int16, snr float64) []int16 {
	return AddNoise(speech, noise, 0, RMS(speech)/math.Pow(10, snr/20))
}

// AddNoise adds noise under pcm at the level (RMS) given, from noise's sample from on,
// repeated as needed, and returns the mix.
func AddNoise(pcm, noise []int16, from int, level float64) []int16 {
	nz := RMS(noise)
	if nz == 0 {
		return append([]int16(nil), pcm...)
	}
	gain := level / nz
	out := make([]float64, len(pcm))
	for i := range out {
		out[i] = float64(pcm[i]) + gain*float64(noise[(from+i)%len(noise)])
	}
	return clip(out, 1)
}

func peak(x []float64) float64 {
	var p float64
	for _, v := range x {
		p = max(p, math.Abs(v))
	}
	if p == 0 {
		return 1
	}
	return p
}

func clip(x []float64, gain float64) []int16 {
	out := make([]int16, len(x))
	for i, v := range x {
		out[i] = int16(max(min(v*gain, math.MaxInt16), math.MinInt16))
	}
	return out
}
