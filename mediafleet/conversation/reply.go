package conversation

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/pipeline"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// reply is one answer being thought and spoken, in its own goroutine.
type reply struct {
	cancel context.CancelFunc
	done   chan replyResult // one result, when the goroutine is finished
}

// sentence is one sentence handed to the speaker.
type sentence struct {
	text string
	pb   Playback
}

// replyResult is what a reply did; the session folds it into the call.
type replyResult struct {
	eos       time.Time  // end of the caller's speech it answers
	timing    TurnTiming // its stages, for Config.OnTurn
	sentences []sentence
	endCall   bool // the model called end_call
	llm       time.Duration
	tts       []time.Duration
	errs      []string // error kinds recovered from
}

var errFirstToken = errors.New("no first token in time")

// startReply answers the conversation so far, or says fixed when set.
func (s *session) startReply(ctx context.Context, tm TurnTiming, fixed string) {
	rctx, cancel := context.WithCancel(ctx)
	r := &reply{cancel: cancel, done: make(chan replyResult, 1)}
	s.cur = r
	req := Request{Model: s.version.Model, Messages: append([]Message(nil), s.history...), EndCallTool: true}
	go func() {
		res := replyResult{eos: tm.LastSpeech, timing: tm}
		if fixed != "" {
			s.say(rctx, &res, fixed)
		} else {
			s.think(rctx, &res, req)
		}
		// Wait until what was queued has played; cancelled, cut what has not.
		for _, sn := range res.sentences {
			select {
			case <-sn.pb.Done():
			case <-rctx.Done():
				sn.pb.Cut()
			}
		}
		cancel()
		r.done <- res
	}()
}

// think streams the model's reply and speaks it sentence by sentence.
func (s *session) think(ctx context.Context, res *replyResult, req Request) {
	tctx, tcancel := context.WithCancelCause(ctx)
	defer tcancel(nil)
	start := time.Now()
	timer := time.AfterFunc(s.cfg.FirstTokenTimeout, func() { tcancel(errFirstToken) })
	defer timer.Stop()

	fail := func(err error) {
		if ctx.Err() != nil {
			return // barge-in or the call ended: not a failure
		}
		kind := errLLM
		if errors.Is(context.Cause(tctx), errFirstToken) {
			kind = errLLMTimeout
		}
		s.log.Warn("model failed", "kind", kind, "err", err)
		res.errs = append(res.errs, kind)
		if len(res.sentences) == 0 {
			s.say(ctx, res, Apology)
		}
	}
	stream, err := s.cfg.Model.Stream(tctx, req)
	if err != nil {
		fail(err)
		return
	}
	defer stream.Close()
	sp := splitter{maxLen: s.cfg.MaxClause}
	first := true
	for {
		c, err := stream.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fail(err)
			return
		}
		if first && (c.Text != "" || c.EndCall) {
			first = false
			timer.Stop()
			res.timing.FirstToken = time.Now()
			res.llm = res.timing.FirstToken.Sub(start)
		}
		for _, sent := range sp.add(c.Text) {
			s.say(ctx, res, sent)
		}
		if c.EndCall {
			res.endCall = true
			break // finish what is being said, then hang up
		}
	}
	if rest := sp.flush(); rest != "" {
		s.say(ctx, res, rest)
	}
	if first && !res.endCall && ctx.Err() == nil {
		// A model that says nothing would leave the caller in silence.
		res.errs = append(res.errs, errLLM)
		s.say(ctx, res, Apology)
	}
}

// say synthesizes one sentence and queues it on the speaker.
func (s *session) say(ctx context.Context, res *replyResult, text string) {
	if ctx.Err() != nil {
		return
	}
	start := time.Now()
	pcm, err := s.cfg.Voices(s.voice).Synthesize(ctx, text)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("synthesis failed", "err", err)
			res.errs = append(res.errs, errTTS)
		}
		return
	}
	pb, err := s.line.Speak(pcm)
	res.tts = append(res.tts, time.Since(start))
	if len(res.sentences) == 0 {
		res.timing.Synthesized = time.Now()
	}
	if err != nil {
		s.log.Warn("speak", "err", err)
		res.errs = append(res.errs, errTTS)
		return
	}
	res.sentences = append(res.sentences, sentence{text: text, pb: pb})
}

// finishReply records a finished or cancelled reply: the assistant turn with what the
// caller heard (interrupted when a barge-in cut it), the history the model sees next,
// and the figures. It reports whether the call should now end (end_call, fully said).
func (s *session) finishReply(res replyResult, bargeIn bool) bool {
	s.cur = nil
	var heard []string
	var first, last pipeline.Progress
	cut := false
	for i, sn := range res.sentences {
		p := sn.pb.Progress()
		if p.Played < p.Total {
			cut = true
		}
		if p.Played == 0 {
			continue
		}
		if len(heard) == 0 {
			first = p
			if i == 0 {
				s.stats.response = append(s.stats.response, p.StartedAt.Sub(res.eos))
				if s.cfg.OnTurn != nil && !res.timing.Decided.IsZero() {
					tm := res.timing
					tm.FirstSent = p.StartedAt
					s.cfg.OnTurn(s.callID, tm)
				}
			}
		}
		last = p
		if h := pipeline.Heard(sn.text, p.Fraction()); h != "" {
			heard = append(heard, h)
		}
	}
	if res.llm > 0 {
		s.stats.llm = append(s.stats.llm, res.llm)
	}
	s.stats.ttsLat = append(s.stats.ttsLat, res.tts...)
	for _, k := range res.errs {
		s.stats.error(k)
	}
	if len(heard) > 0 {
		text := strings.Join(heard, " ")
		s.line.AddTurn(persona.Turn{
			Speaker: persona.SpeakerAssistant, Text: text,
			StartMS: s.line.Offset(first.StartedAt), EndMS: s.line.Offset(last.LastAt.Add(20 * time.Millisecond)),
			Interrupted: bargeIn && cut,
		})
		s.history = append(s.history, Message{Role: RoleAssistant, Content: text})
	}
	s.publish()
	return res.endCall && !cut
}
