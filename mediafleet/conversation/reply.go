package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// A reply is two stages in goroutines of their own. The generation streams the model's
// reply, cuts it into sentences, synthesises each and queues it on the line, handing
// each queued sentence to the playout; the playout follows the sentences as they play
// (sentenceStarted to the session as each starts), cuts them when the reply is
// cancelled, and hands the session the reply's result last (replyDone).
type reply struct {
	cancel context.CancelFunc
	msgs   chan replyMsg // sentenceStarted..., then one replyDone
}

// replyMsg is a message of a reply to the session: sentenceStarted or replyDone.
type replyMsg interface{ replyMsg() }

// sentenceStarted: a sentence of the reply started playing; words are the reply's as far
// as it has started (interim assistant words).
type sentenceStarted struct{ words speech.Words }

// replyDone: the reply is over (played, cancelled, or the call ended).
type replyDone struct{ res replyResult }

func (sentenceStarted) replyMsg() {}
func (replyDone) replyMsg()       {}

// replyResult is what a reply did; the session folds it into the call.
type replyResult struct {
	timing    speech.TurnTiming // the caller turn it answers, and its stages
	sentences []speech.Said
	endCall   bool // the model called end_call, or transfer_call (transferTo)
	// transferTo is the destination of the model's transfer_call.
	transferTo string
	llm        time.Duration
	tts        []time.Duration
	errs       []speech.FailureKind // failures recovered from
}

var errFirstToken = errors.New("no first token in time")

// startReply answers the conversation so far, or says fixed when set.
func (s *session) startReply(ctx context.Context, tm speech.TurnTiming, fixed string) {
	rctx, cancel := context.WithCancel(ctx)
	r := &reply{cancel: cancel, msgs: make(chan replyMsg, 4)}
	s.cur = r
	g := &generation{
		cfg: s.cfg, log: s.log, line: s.line, synth: s.cfg.Voices(s.voice),
		queued: make(chan speech.Said, 8), res: replyResult{timing: tm}, destinations: s.version.TransferDestinations,
	}
	tools := []speech.Tool{endCallTool}
	if len(s.version.TransferDestinations) > 0 {
		tools = append(tools, transferCallTool(s.version.TransferDestinations))
	}
	req := speech.Request{Model: s.version.Model, Messages: append([]speech.Message(nil), s.history...), Tools: tools}
	result := make(chan replyResult, 1)
	go func() {
		defer close(g.queued)
		if fixed != "" {
			g.say(rctx, fixed)
		} else {
			g.think(rctx, req)
		}
		result <- g.res
	}()
	go func() {
		playout(rctx, g.queued, r.msgs)
		res := <-result
		cancel()
		r.msgs <- replyDone{res}
	}()
}

// replyMsg takes a message of the current reply: it publishes the words of a sentence
// that started, and returns the result when the reply is done.
func (s *session) replyMsg(m replyMsg) (replyDone, bool) {
	switch m := m.(type) {
	case sentenceStarted:
		s.line.Publish(m.words)
	case replyDone:
		return m, true
	}
	return replyDone{}, false
}

// waitReply waits for the current reply to be over (after cancelling it).
func (s *session) waitReply() replyResult {
	for m := range s.cur.msgs {
		if done, ok := s.replyMsg(m); ok {
			return done.res
		}
	}
	panic("reply messages closed before the reply was done")
}

// playout follows the queued sentences of a reply until the generation stops queueing
// and every sentence has played or, the reply cancelled, was cut.
func playout(ctx context.Context, queued <-chan speech.Said, msgs chan<- replyMsg) {
	var texts []string
	var start time.Time
	for sd := range queued {
		select {
		case <-sd.Playback.Started():
			if texts == nil {
				start = sd.Playback.Progress().Start
			}
			texts = append(texts, sd.Text)
			msgs <- sentenceStarted{speech.Words{Speaker: speech.Assistant, Text: strings.Join(texts, " "), Start: start}}
		case <-sd.Playback.Done():
		case <-ctx.Done():
		}
		select {
		case <-sd.Playback.Done():
		case <-ctx.Done():
			sd.Playback.Cut()
		}
	}
}

// generation thinks and speaks one reply. It owns res until it hands it on.
type generation struct {
	cfg    *Config
	log    *slog.Logger
	line   speech.Line
	synth  tts.Synthesizer
	queued chan speech.Said
	res    replyResult
	// destinations are where transfer_call may go.
	destinations []persona.TransferDestination
}

// think streams the model's reply and speaks it sentence by sentence.
func (g *generation) think(ctx context.Context, req speech.Request) {
	tctx, tcancel := context.WithCancelCause(ctx)
	defer tcancel(nil)
	start := time.Now()
	timer := time.AfterFunc(g.cfg.FirstTokenTimeout, func() { tcancel(errFirstToken) })
	defer timer.Stop()

	fail := func(err error) {
		if ctx.Err() != nil {
			return // barge-in or the call ended: not a failure
		}
		kind := speech.LLMError
		if errors.Is(context.Cause(tctx), errFirstToken) {
			kind = speech.LLMTimeout
		}
		g.log.Warn("model failed", "kind", kind, "err", err)
		g.res.errs = append(g.res.errs, kind)
		if len(g.res.sentences) == 0 {
			g.say(ctx, Apology)
		}
	}
	stream, err := g.cfg.Model.Stream(tctx, req)
	if err != nil {
		fail(err)
		return
	}
	defer stream.Close()
	sp := splitter{maxLen: g.cfg.MaxClause}
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
		if c.ToolCall != nil && c.ToolCall.Name == speech.TransferCallTool {
			to, ok := g.destination(c.ToolCall.Arguments)
			if !ok {
				g.log.Warn("model called transfer_call with no listed destination", "arguments", c.ToolCall.Arguments)
				continue
			}
			g.res.transferTo = to
		} else if c.ToolCall != nil && c.ToolCall.Name != speech.EndCallTool {
			g.log.Warn("model called a tool it was not offered", "tool", c.ToolCall.Name)
			continue
		}
		if first && (c.Text != "" || c.ToolCall != nil) {
			first = false
			timer.Stop()
			g.res.timing.FirstToken = time.Now()
			g.res.llm = g.res.timing.FirstToken.Sub(start)
		}
		for _, sent := range sp.add(c.Text) {
			g.say(ctx, sent)
		}
		if c.ToolCall != nil {
			g.res.endCall = true
			break // finish what is being said, then hang up
		}
	}
	if rest := sp.flush(); rest != "" {
		g.say(ctx, rest)
	}
	if g.res.transferTo != "" && len(g.res.sentences) == 0 {
		g.say(ctx, HandOver) // the caller is told before the line changes
	}
	if first && !g.res.endCall && ctx.Err() == nil {
		// A model that says nothing would leave the caller in silence.
		g.res.errs = append(g.res.errs, speech.LLMError)
		g.say(ctx, Apology)
	}
}

// destination reads transfer_call's arguments: the destination, when it is one of the
// version's.
func (g *generation) destination(args string) (string, bool) {
	var a struct {
		Destination string `json:"destination"`
	}
	if json.Unmarshal([]byte(args), &a) != nil {
		return "", false
	}
	for _, d := range g.destinations {
		if d.To == a.Destination {
			return d.To, true
		}
	}
	return "", false
}

// say synthesizes one sentence, queues it on the line and hands it to the playout.
func (g *generation) say(ctx context.Context, text string) {
	if ctx.Err() != nil {
		return
	}
	start := time.Now()
	pcm, err := g.synth.Synthesize(ctx, text)
	if err != nil {
		if ctx.Err() == nil {
			g.log.Warn("synthesis failed", "err", err)
			g.res.errs = append(g.res.errs, speech.TTSError)
		}
		return
	}
	pb, err := g.line.Speak(pcm)
	g.res.tts = append(g.res.tts, time.Since(start))
	if len(g.res.sentences) == 0 {
		g.res.timing.Synthesized = time.Now()
	}
	if err != nil {
		g.log.Warn("speak", "err", err)
		g.res.errs = append(g.res.errs, speech.TTSError)
		return
	}
	sd := speech.Said{Text: text, Playback: pb}
	g.res.sentences = append(g.res.sentences, sd)
	g.queued <- sd
}

// finishReply records a finished or cancelled reply: the assistant's words as the caller
// heard them (interrupted when a barge-in cut them), the history the model sees next, and
// the figures. It reports whether the call should now end (end_call, fully said).
func (s *session) finishReply(res replyResult, bargeIn bool) bool {
	s.cur = nil
	w, _, cut := speech.HeardWords(res.sentences)
	if len(res.sentences) > 0 {
		if p := res.sentences[0].Playback.Progress(); p.Played > 0 && !res.timing.Decided.IsZero() {
			tm := res.timing
			tm.FirstSent = p.Start
			s.line.Publish(speech.Answered{Timing: tm})
		}
	}
	if !res.timing.FirstToken.IsZero() {
		s.line.Publish(speech.Latency{Step: speech.LLMFirstToken, Took: res.llm})
	}
	for _, d := range res.tts {
		s.line.Publish(speech.Latency{Step: speech.TTSFirstAudio, Took: d})
	}
	for _, k := range res.errs {
		s.line.Publish(speech.Failure{Kind: k})
	}
	if w.Text != "" {
		w.Final, w.Interrupted = true, bargeIn && cut
		s.line.Publish(w)
		s.history = append(s.history, speech.Message{Role: speech.RoleAssistant, Content: w.Text})
	}
	return res.endCall && !cut
}
