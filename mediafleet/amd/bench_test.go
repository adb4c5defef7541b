package amd

import (
	"slices"
	"testing"
	"time"
)

// BenchmarkAMD runs the labelled clips (persons, voicemail boxes with and without a beep,
// silence; flite and espeak-ng voices) through a detector and reports the share decided
// right (accuracy, goal at least 0.95), the decision's time from the answer (p50 and
// p95, goal at most 3 s) and the time to hear one second of audio.
func BenchmarkAMD(b *testing.B) {
	cs := clips()
	audio := make([][]int16, len(cs))
	var total time.Duration
	for i, c := range cs {
		audio[i] = render(b, c)
		total += time.Duration(len(audio[i])) * time.Second / Rate
	}
	b.ResetTimer()
	var right, all int
	var at []time.Duration
	for b.Loop() {
		right, all, at = 0, 0, at[:0]
		for i, c := range cs {
			d := New(Config{})
			d.Write(audio[i])
			dec, ok := d.Decision()
			all++
			if ok && dec.Result == c.want && dec.At <= 3*time.Second {
				right++
			}
			at = append(at, dec.At)
		}
	}
	slices.Sort(at)
	b.ReportMetric(float64(right)/float64(all), "accuracy")
	b.ReportMetric(float64(at[len(at)/2].Milliseconds()), "decision_p50_ms")
	b.ReportMetric(float64(at[len(at)*95/100].Milliseconds()), "decision_p95_ms")
	b.ReportMetric(float64(b.Elapsed())/float64(b.N)/total.Seconds()/1e3, "us_per_audio_s")
	b.ReportMetric(float64(len(cs)), "clips")
}
