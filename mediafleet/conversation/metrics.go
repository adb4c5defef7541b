package conversation

import (
	"slices"
	"time"

	"github.com/bridgeline/bridgeline/shared/persona"
)

// stats are one call's measurements; the conversation goroutine owns them.
type stats struct {
	turns, bargeIns                       int
	response, bargeStop, stt, llm, ttsLat []time.Duration
	errors                                int
	lastError                             string
}

// Error kinds of persona.ErrorCount.
const (
	errLLM        = "llm_error"
	errLLMTimeout = "llm_timeout"
	errSTT        = "stt_error"
	errTTS        = "tts_error"
)

func (s *stats) error(kind string) {
	s.errors++
	s.lastError = kind
}

// percentiles are nearest-rank p50 and p95; nil without samples.
func percentiles(d []time.Duration) *persona.Percentiles {
	if len(d) == 0 {
		return nil
	}
	s := slices.Clone(d)
	slices.Sort(s)
	rank := func(p float64) int64 {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[max(0, min(i, len(s)-1))].Milliseconds()
	}
	return &persona.Percentiles{P50: rank(0.50), P95: rank(0.95)}
}

// apply writes the figures into the call's metrics.
func (s *stats) apply(m *persona.Metrics) {
	turns, barge := s.turns, s.bargeIns
	m.Turns, m.BargeIns = &turns, &barge
	m.ResponseMS = percentiles(s.response)
	m.BargeInStopMS = percentiles(s.bargeStop)
	m.STTFinalMS = percentiles(s.stt)
	m.LLMFirstTokenMS = percentiles(s.llm)
	m.TTSFirstAudioMS = percentiles(s.ttsLat)
	m.Errors = nil
	if s.errors > 0 {
		m.Errors = &persona.ErrorCount{Count: s.errors, LastKind: s.lastError}
	}
}
