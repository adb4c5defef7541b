package llm

import (
	"context"
	"io"
	"strings"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
)

// Builtin is the responder of a deployment with no language model configured. It is
// honest about itself: it repeats what it heard and says no model is configured. It never
// touches the network.
type Builtin struct{}

var _ speech.Model = Builtin{}

// Stream replies to the last caller message.
func (Builtin) Stream(ctx context.Context, req speech.Request) (speech.Stream, error) {
	heard := ""
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == speech.RoleUser {
			heard = strings.TrimSpace(req.Messages[i].Content)
			break
		}
	}
	reply := "I didn't catch any words. No language model is configured for me, so I can only repeat what I hear."
	if heard != "" {
		reply = "I heard: " + heard + ". No language model is configured for me, so I can only repeat what I hear."
	}
	return &wordStream{ctx: ctx, words: strings.SplitAfter(reply, " ")}, nil
}

// wordStream hands out a fixed reply a word at a time, as a model streams.
type wordStream struct {
	ctx     context.Context
	words   []string
	counted bool // its zero usage was handed out
}

func (s *wordStream) Next() (speech.Chunk, error) {
	if err := s.ctx.Err(); err != nil {
		return speech.Chunk{}, err
	}
	if len(s.words) == 0 {
		if !s.counted {
			// No model: no tokens, and none to estimate.
			s.counted = true
			return speech.Chunk{Usage: &speech.Tokens{}}, nil
		}
		return speech.Chunk{}, io.EOF
	}
	w := s.words[0]
	s.words = s.words[1:]
	return speech.Chunk{Text: w}, nil
}

func (s *wordStream) Close() error { return nil }
