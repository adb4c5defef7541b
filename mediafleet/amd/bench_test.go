package amd

import (
	"slices"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/vad"
)

// BenchmarkAMD runs the labelled clips (persons, voicemail boxes with and without a beep,
// silence; flite and espeak-ng voices) through a detector and reports the share decided
// right within 3 s (accuracy, goal at least 0.95) and the decision's time from the
// answer (p50 and p95, goal at most 3 s), on clean audio by level (the baseline), and on
// a street 20 dB under the speech by level and 10 dB under it with Silero VAD; and the
// time to hear one second of audio by level.
func BenchmarkAMD(b *testing.B) {
	model, err := vad.Load(vad.Config{})
	if err != nil {
		b.Fatalf("Silero VAD: %v (run make deps)", err)
	}
	cs := clips()
	for _, tc := range []struct {
		name   string
		snr    float64 // 0: clean
		silero bool
	}{{"clean", 0, false}, {"street_20dB", 20, false}, {"street_10dB_silero", 10, true}} {
		b.Run(tc.name, func(b *testing.B) {
			audio := make([][]int16, len(cs))
			var total time.Duration
			for i, c := range cs {
				audio[i] = render(b, c)
				if tc.snr > 0 {
					audio[i] = street(b, audio[i], tc.snr, uint64(i))
				}
				total += time.Duration(len(audio[i])) * time.Second / Rate
			}
			b.ResetTimer()
			var right int
			var at []time.Duration
			for b.Loop() {
				right, at = 0, at[:0]
				for i, c := range cs {
					var cfg Config
					if tc.silero {
						v, err := model.NewDetector()
						if err != nil {
							b.Fatal(err)
						}
						defer v.Close()
						cfg.Voice = v
					}
					d := New(cfg)
					d.Write(audio[i])
					dec, ok := d.Decision()
					if ok && dec.Result == c.want && dec.At <= 3*time.Second {
						right++
					}
					at = append(at, dec.At)
				}
			}
			slices.Sort(at)
			b.ReportMetric(float64(right)/float64(len(cs)), "accuracy")
			b.ReportMetric(float64(at[len(at)/2].Milliseconds()), "decision_p50_ms")
			b.ReportMetric(float64(at[len(at)*95/100].Milliseconds()), "decision_p95_ms")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/total.Seconds(), "us_per_audio_s")
			b.ReportMetric(float64(len(cs)), "clips")
		})
	}
}
