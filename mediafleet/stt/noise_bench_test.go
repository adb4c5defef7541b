package stt

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/bridgeline/bridgeline/mediafleet/denoise"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest"
)

// BenchmarkNoiseSuppression: pocketsphinx's word error rate on the flite question set
// (three voices, 24 questions) clean and with babble or street noise mixed in at 10 dB
// below the voice, without and with the caller's noise suppression (mediafleet/denoise),
// which runs over the whole call as in a conversation: each question follows a second of
// the same noise alone, and one suppressor hears them all.
func BenchmarkNoiseSuppression(b *testing.B) {
	s := loadSphinx(b)
	type said struct {
		text string
		pcm  []int16
	}
	var set []said
	for _, voice := range []string{"awb", "slt", "rms"} {
		for _, q := range questions {
			set = append(set, said{q, speechtest.Flite(b, voice, q)})
		}
	}
	const snr = 10
	noises := []struct {
		name string
		pcm  []int16
	}{
		{"clean", nil},
		{"babble", speechtest.Babble(b, 60*Rate, 1)},
		{"street", speechtest.StreetNoise(60*Rate, 1)},
	}
	for range b.N {
		for _, n := range noises {
			for _, on := range []bool{false, true} {
				// A transcriber of its own: pocketsphinx adapts to what it heard before.
				tr, err := s.NewTranscriber(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				var sup *denoise.Suppressor
				if on {
					if sup, err = denoise.New(Rate, 0); err != nil {
						b.Fatal(err)
					}
				}
				var errs, total, at int
				for _, q := range set {
					// A second of the room, then the turn as the conversation sends it,
					// the noise leveled snr dB under the voice.
					lead, t := make([]int16, Rate), turn(q.pcm)
					if n.pcm != nil {
						level := speechtest.RMS(q.pcm) / math.Pow(10, snr/20.0)
						lead = speechtest.AddNoise(lead, n.pcm, at, level)
						t = speechtest.AddNoise(t, n.pcm, at+len(lead), level)
					}
					at += len(lead) + len(t)
					if sup != nil {
						sup.Process(lead)
						t = sup.Process(t)
					}
					got := transcribe(b, tr, t)
					errs += wordErrors(words(q.text), words(got))
					total += len(words(q.text))
				}
				tr.Close()
				if sup != nil {
					sup.Close()
				}
				mode := "off"
				if on {
					mode = "on"
				}
				b.ReportMetric(100*float64(errs)/float64(total), fmt.Sprintf("wer_%s_%s_%%", n.name, mode))
			}
		}
	}
}
