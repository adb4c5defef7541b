package assistant

import (
	"fmt"
	"strings"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Limits of a version's interruption settings; part of the contract in openapi.yaml.
const (
	DefaultInterruptionMinWords = 1
	MaxInterruptionMinWords     = 10
	MaxAcknowledgements         = 20
	MaxAcknowledgementLen       = 40
	// MaxAcknowledgementWords is the most words of one acknowledgement: the
	// conversation takes longer speech over the assistant as taking the floor.
	MaxAcknowledgementWords = 4
)

// DefaultInterruption is the interruption a version has when it sets none.
func DefaultInterruption() persona.Interruption {
	return persona.Interruption{Mode: persona.InterruptionAdaptive, MinWords: DefaultInterruptionMinWords}
}

// InterruptionOf is c's interruption settings, defaults filled in.
func (c CallSettings) InterruptionOf() persona.Interruption {
	if c.Interruption == nil {
		return DefaultInterruption()
	}
	in := *c.Interruption
	if in.Mode == "" {
		in.Mode = persona.InterruptionAdaptive
	}
	if in.MinWords == 0 {
		in.MinWords = DefaultInterruptionMinWords
	}
	return in
}

// validInterruption checks a version's interruption settings and normalises them: the
// mode and minimum filled in, acknowledgements trimmed and lower case, each once.
func validInterruption(in persona.Interruption) (persona.Interruption, error) {
	switch in.Mode {
	case "":
		in.Mode = persona.InterruptionAdaptive
	case persona.InterruptionAdaptive, persona.InterruptionOff:
	default:
		return in, apierr.Invalid("interruption.mode", "interruption.mode must be adaptive or off")
	}
	if in.MinWords == 0 {
		in.MinWords = DefaultInterruptionMinWords
	}
	if in.MinWords < 1 || in.MinWords > MaxInterruptionMinWords {
		return in, apierr.Invalid("interruption.min_words", fmt.Sprintf("interruption.min_words must be 1-%d", MaxInterruptionMinWords))
	}
	if len(in.Acknowledgements) > MaxAcknowledgements {
		return in, apierr.Invalid("interruption.acknowledgements", fmt.Sprintf("interruption.acknowledgements holds at most %d entries", MaxAcknowledgements))
	}
	seen := map[string]bool{}
	var acks []string
	for _, a := range in.Acknowledgements {
		a = strings.ToLower(strings.Join(strings.Fields(a), " "))
		n := len(strings.Fields(a))
		if n == 0 || n > MaxAcknowledgementWords || len([]rune(a)) > MaxAcknowledgementLen {
			return in, apierr.Invalid("interruption.acknowledgements",
				fmt.Sprintf("each of interruption.acknowledgements must be 1-%d words of at most %d characters", MaxAcknowledgementWords, MaxAcknowledgementLen))
		}
		if !seen[a] {
			seen[a] = true
			acks = append(acks, a)
		}
	}
	in.Acknowledgements = acks
	return in, nil
}
