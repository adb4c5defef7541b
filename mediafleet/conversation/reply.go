package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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
	// rounds are the model requests of the reply, in order: more than one when the model
	// called the customer's tools and was asked again with their results. A fixed reply
	// has none (its sentences are one round).
	rounds  []round
	endCall bool // the model called end_call, or transfer_call (transferTo)
	// transferTo is the destination of the model's transfer_call.
	transferTo string
	llm        time.Duration
	tts        []time.Duration
	errs       []speech.FailureKind // failures recovered from
	// used is what the reply used: characters synthesised, the model's tokens.
	used speech.Used
}

// round is one model request of a reply: the sentences it queued, sentences[from:to]
// (a filler said while its tools ran included), and the tool calls it ended with.
type round struct {
	from, to int
	tools    []toolUse
}

// toolUse is one call of a customer's tool, or of look, and how it went.
type toolUse struct {
	call       speech.ToolCall
	result     speech.ToolResult
	start, end time.Time
	// pictures are what a call of look brought, for the model only.
	pictures []speech.Picture
}

var errFirstToken = errors.New("no first token in time")

// startReply answers the conversation so far, or says fixed when set.
func (s *session) startReply(ctx context.Context, tm speech.TurnTiming, fixed string) {
	rctx, cancel := context.WithCancel(ctx)
	r := &reply{cancel: cancel, msgs: make(chan replyMsg, 4)}
	s.cur = r
	g := &generation{
		cfg: s.cfg, log: s.log, line: s.line, synth: s.cfg.Voices(s.voice), phrases: s.say,
		queued: make(chan speech.Said, 8), res: replyResult{timing: tm}, destinations: s.version.TransferDestinations,
		viewer: s.viewer,
	}
	req := speech.Request{Model: s.version.Model, Messages: append([]speech.Message(nil), s.history...), Tools: s.tools}
	// The turn's pictures go with this request (and its tool rounds) only: the history
	// lets go of them, so a later request does not send them again.
	for i := range s.history {
		s.history[i].Pictures = nil
	}
	result := make(chan replyResult, 1)
	go func() {
		defer close(g.queued)
		if fixed != "" {
			g.say(rctx, fixed)
		} else {
			g.think(rctx, req, s.runner)
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
	// viewer answers the look tool; nil: vision is off.
	viewer speech.Viewer
	// phrases are what it says of its own (an apology, a filler), in the call's language.
	phrases phrases
}

// think streams the model's reply and speaks it sentence by sentence. When the reply
// ends with calls of the customer's tools, it runs them (runner), saying a filler if
// they take long, and asks the model again with their results, up to MaxToolRounds
// times. A call of look is answered here: the fresh pictures follow the tool results as
// a user message.
func (g *generation) think(ctx context.Context, req speech.Request, runner speech.ToolRunner) {
	for n := 0; ; n++ {
		from := len(g.res.sentences)
		calls, ok := g.stream(ctx, req, n == 0, from)
		switch {
		case !ok, g.res.endCall, len(calls) == 0, ctx.Err() != nil:
			g.res.rounds = append(g.res.rounds, round{from: from, to: len(g.res.sentences)})
			return
		case (runner == nil && !onlyLooks(calls)) || n >= g.cfg.MaxToolRounds:
			// Tools the line cannot run, or a model that keeps calling them: say so
			// rather than loop or go silent.
			g.log.Warn("model keeps calling tools; giving up on this turn", "rounds", n+1)
			g.res.errs = append(g.res.errs, speech.LLMError)
			g.say(ctx, g.phrases.apology)
			g.res.rounds = append(g.res.rounds, round{from: from, to: len(g.res.sentences)})
			return
		}
		uses := g.runTools(ctx, runner, calls)
		g.res.rounds = append(g.res.rounds, round{from: from, to: len(g.res.sentences), tools: uses})
		if ctx.Err() != nil {
			return
		}
		// Ask again with what was said and what the tools answered.
		req.Messages = append(req.Messages, speech.Message{Role: speech.RoleAssistant,
			Content: saidText(g.res.sentences[from:]), ToolCalls: calls})
		for _, u := range uses {
			req.Messages = append(req.Messages, speech.Message{Role: speech.RoleTool, ToolCallID: u.call.ID, Content: u.result.Content()})
		}
		for _, u := range uses {
			if len(u.pictures) > 0 {
				req.Messages = append(req.Messages, lookMessage(u.pictures, true))
			}
		}
	}
}

// onlyLooks: every call is of the look tool, which the conversation answers itself.
func onlyLooks(calls []speech.ToolCall) bool {
	for _, c := range calls {
		if c.Name != persona.LookTool {
			return false
		}
	}
	return true
}

// look answers a call of the look tool: a fresh frame of each source the version shows,
// asked for now and waited for up to LookWait. The result tells the model the pictures
// follow (a tool message carries no image); they go in the user message after it.
func (g *generation) look(ctx context.Context, c speech.ToolCall) toolUse {
	start := time.Now()
	u := toolUse{call: c, start: start}
	if g.viewer != nil {
		g.viewer.Refresh()
		lctx, cancel := context.WithTimeout(ctx, g.cfg.LookWait)
		u.pictures = g.viewer.Pictures(lctx, start)
		cancel()
	}
	u.end = time.Now()
	if len(u.pictures) == 0 {
		u.result = speech.ToolResult{Err: &speech.ToolError{Code: persona.ToolErrUnavailable,
			Message: "the caller shows no picture now (camera or screen off)"}}
		return u
	}
	sources := make([]string, len(u.pictures))
	for i, p := range u.pictures {
		sources[i] = p.Source
	}
	b, _ := json.Marshal(map[string]any{"pictures": sources, "note": "the pictures follow in the next message"})
	u.result = speech.ToolResult{Result: b}
	return u
}

// lookMessage is the user message that brings the model the pictures of a call of look;
// in the history (sent, withPictures false) it keeps only the note that they came.
func lookMessage(pictures []speech.Picture, withPictures bool) speech.Message {
	sources := make([]string, len(pictures))
	for i, p := range pictures {
		sources[i] = p.Source
	}
	m := speech.Message{Role: speech.RoleUser, Content: "[the caller's " + strings.Join(sources, " and ") + ", as look showed it]"}
	if withPictures {
		m.Pictures = pictures
	}
	return m
}

// stream asks the model once and speaks its text as it streams; it returns the calls of
// the customer's tools the reply ends with. ok is false when the model failed (the
// apology was said if this request had said nothing yet: from is where its sentences
// start). The first request of a reply stamps its first token.
func (g *generation) stream(ctx context.Context, req speech.Request, firstRequest bool, from int) (calls []speech.ToolCall, ok bool) {
	tctx, tcancel := context.WithCancelCause(ctx)
	defer tcancel(nil)
	start := time.Now()
	timer := time.AfterFunc(g.cfg.FirstTokenTimeout, func() { tcancel(errFirstToken) })
	defer timer.Stop()

	fail := func(err error) ([]speech.ToolCall, bool) {
		if ctx.Err() != nil {
			return nil, false // barge-in or the call ended: not a failure
		}
		kind := speech.LLMError
		if errors.Is(context.Cause(tctx), errFirstToken) {
			kind = speech.LLMTimeout
		}
		g.log.Warn("model failed", "kind", kind, "err", err)
		g.res.errs = append(g.res.errs, kind)
		if len(g.res.sentences) == from {
			g.say(ctx, g.phrases.apology)
		}
		return nil, false
	}
	stream, err := g.cfg.Model.Stream(tctx, req)
	if err != nil {
		return fail(err)
	}
	defer stream.Close()
	// The request is counted however it ends (a cut reply's prompt was read): by the
	// model's own report, else estimated from what was sent and what came back.
	var reported *speech.Tokens
	var got strings.Builder
	defer func() {
		if reported != nil {
			g.res.used.PromptTokens += reported.Prompt
			g.res.used.CompletionTokens += reported.Completion
			return
		}
		g.res.used.PromptTokens += speech.EstimatePrompt(req)
		g.res.used.CompletionTokens += speech.EstimateTokens(got.String())
		g.res.used.Estimated = true
	}()
	offered := map[string]bool{}
	for _, t := range req.Tools {
		offered[t.Name] = true
	}
	sp := splitter{maxLen: g.cfg.MaxClause}
	first := true
	for {
		c, err := stream.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(err)
		}
		if c.Usage != nil {
			reported = c.Usage
		}
		got.WriteString(c.Text)
		if tc := c.ToolCall; tc != nil {
			got.WriteString(tc.Name + tc.Arguments)
		}
		if c.ToolCall != nil && !offered[c.ToolCall.Name] {
			g.log.Warn("model called a tool it was not offered", "tool", c.ToolCall.Name)
			continue
		}
		if c.ToolCall != nil && c.ToolCall.Name == persona.TransferCallTool {
			to, ok := g.destination(c.ToolCall.Arguments)
			if !ok {
				g.log.Warn("model called transfer_call with no listed destination", "arguments", c.ToolCall.Arguments)
				continue
			}
			g.res.transferTo = to
		}
		if first && (c.Text != "" || c.ToolCall != nil) {
			first = false
			timer.Stop()
			if firstRequest {
				g.res.timing.FirstToken = time.Now()
				g.res.llm = g.res.timing.FirstToken.Sub(start)
			}
		}
		for _, sent := range sp.add(c.Text) {
			g.say(ctx, sent)
		}
		switch {
		case c.ToolCall == nil:
		case c.ToolCall.Name == persona.EndCallTool, c.ToolCall.Name == persona.TransferCallTool:
			g.res.endCall = true
		default:
			calls = append(calls, *c.ToolCall)
		}
		if g.res.endCall {
			// Finish what is being said, then hang up; the usage report, which a
			// server sends last, may be right behind.
			if c, err := stream.Next(); err == nil && c.Usage != nil {
				reported = c.Usage
			}
			break
		}
	}
	if rest := sp.flush(); rest != "" {
		g.say(ctx, rest)
	}
	if g.res.transferTo != "" && len(g.res.sentences) == from {
		g.say(ctx, g.phrases.handOver) // the caller is told before the line changes
	}
	if first && !g.res.endCall && ctx.Err() == nil {
		// A model that says nothing would leave the caller in silence.
		g.res.errs = append(g.res.errs, speech.LLMError)
		g.say(ctx, g.phrases.apology)
	}
	return calls, true
}

// runTools runs the tool calls of one model reply, together, and returns when every one
// is over. Should they still run FillerAfter after they started, and once what the
// reply already queued has played, the filler is said: once for the lot.
func (g *generation) runTools(ctx context.Context, runner speech.ToolRunner, calls []speech.ToolCall) []toolUse {
	uses := make([]toolUse, len(calls))
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for i, c := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if c.Name == persona.LookTool {
					uses[i] = g.look(ctx, c)
					return
				}
				res := runner.RunTool(ctx, c)
				uses[i] = toolUse{call: c, result: res, start: start, end: time.Now()}
			}()
		}
		wg.Wait()
	}()
	filler := time.NewTimer(g.cfg.FillerAfter)
	defer filler.Stop()
	var playing <-chan struct{}
	for {
		select {
		case <-done:
			return uses
		case <-filler.C:
			if n := len(g.res.sentences); n > 0 {
				if pb := g.res.sentences[n-1].Playback; !closedChan(pb.Done()) {
					playing = pb.Done() // the caller is still hearing the reply: after it
					continue
				}
			}
			g.say(ctx, g.phrases.filler)
		case <-playing:
			playing = nil
			g.say(ctx, g.phrases.filler)
		}
	}
}

func closedChan(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// saidText is the text of sentences as queued, one after the other.
func saidText(sentences []speech.Said) string {
	parts := make([]string, 0, len(sentences))
	for _, s := range sentences {
		parts = append(parts, s.Text)
	}
	return strings.Join(parts, " ")
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
	g.res.used.TTSCharacters += utf8.RuneCountInString(text) // the synthesizer read it, whatever came of it
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
// heard them (interrupted when a barge-in cut them), a turn for each model request of it
// with the tool calls between them, the history the model sees next, and the figures.
// It reports whether the call should now end (end_call, fully said).
func (s *session) finishReply(res replyResult, bargeIn bool) bool {
	s.cur = nil
	_, _, cut := speech.HeardWords(res.sentences)
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
	if res.used != (speech.Used{}) {
		s.line.Publish(res.used)
	}
	rounds := res.rounds
	if len(rounds) == 0 {
		rounds = []round{{from: 0, to: len(res.sentences)}} // a fixed reply
	}
	for _, r := range rounds {
		w, _, rcut := speech.HeardWords(res.sentences[r.from:r.to])
		if w.Text != "" {
			w.Final, w.Interrupted = true, bargeIn && rcut
			s.line.Publish(w)
		}
		for _, u := range r.tools {
			s.line.Publish(speech.ToolUsed{Call: u.call, Result: u.result, Start: u.start, End: u.end, Frames: len(u.pictures)})
		}
		switch {
		case len(r.tools) > 0:
			// The model sees its calls answered, whatever the caller heard around them.
			calls := make([]speech.ToolCall, len(r.tools))
			for i, u := range r.tools {
				calls[i] = u.call
			}
			s.history = append(s.history, speech.Message{Role: speech.RoleAssistant, Content: w.Text, ToolCalls: calls})
			for _, u := range r.tools {
				s.history = append(s.history, speech.Message{Role: speech.RoleTool, ToolCallID: u.call.ID, Content: u.result.Content()})
			}
			for _, u := range r.tools {
				if len(u.pictures) > 0 {
					s.history = append(s.history, lookMessage(u.pictures, false))
				}
			}
		case w.Text != "":
			s.history = append(s.history, speech.Message{Role: speech.RoleAssistant, Content: w.Text})
		}
	}
	return res.endCall && !cut
}
