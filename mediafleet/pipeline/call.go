package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/resample"
	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/redact"
)

// Conversation is what happens on a call after the greeting. The real-time conversation
// (mediafleet/conversation, which the worker runs on the Call as its speech.Line)
// implements it. Converse runs until ctx ends (the call is over) or returns to hang up;
// an error ends the call with end reason "error".
type Conversation interface {
	Converse(ctx context.Context, call *Call) error
}

// Listen is the conversation of a worker without speech engines: it holds the line,
// draining the caller's audio, until the call ends.
type Listen struct{}

// Converse waits for the end of the call.
func (Listen) Converse(ctx context.Context, call *Call) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-call.Audio():
		}
	}
}

// Call is the running LiveKit call as a Conversation sees it: a speech.Line (the
// caller's decoded audio in, speech out through the call's speaker, events into the
// call's record) and the job it runs.
type Call struct {
	c *call
}

var (
	_ speech.Line            = (*Call)(nil)
	_ speech.Keypad          = (*Call)(nil)
	_ speech.Transferrer     = (*Call)(nil)
	_ speech.TransferWatcher = (*Call)(nil)
	_ speech.ToolRunner      = (*Call)(nil)
	_ speech.Viewer          = (*Call)(nil)
)

// Refresh asks the caller's client for fresh key frames of the video the version's
// vision shows (speech.Viewer); nothing when vision is off.
func (k *Call) Refresh() { k.c.viewer.Refresh() }

// Pictures are the latest stills of the caller's video the version's vision shows,
// waiting until ctx ends for ones from since (speech.Viewer); none when vision is off or
// the caller shows nothing.
func (k *Call) Pictures(ctx context.Context, since time.Time) []speech.Picture {
	return k.c.viewer.Pictures(ctx, since)
}

// transferTimeout bounds a transfer: the destination rings (LiveKit's 30 s), and the
// control plane answers.
const transferTimeout = 45 * time.Second

// Transfer has the control plane hand the call to to, one of the version's transfer
// destinations, and returns once the destination answered. It is not cut short when the
// call ends meanwhile: the caller leaving is how a transfer completes. Where the control
// plane queues the transfer (AWS), it waits in the room for the outcome: the call's end
// (ctx done: the caller left for the destination), or the control plane's notice that it
// failed; one that never comes within transferTimeout is a failure.
func (k *Call) Transfer(ctx context.Context, to string) error {
	tr, ok := k.c.r.cfg.Reporter.(Transferer)
	if !ok {
		return fmt.Errorf("this worker cannot transfer calls")
	}
	start := time.Now()
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), transferTimeout)
	defer cancel()
	pending, err := tr.Transfer(tctx, persona.TransferRequest{CallID: k.c.job.CallID, To: to})
	if err != nil || !pending {
		return err
	}
	wait := time.NewTimer(transferTimeout - time.Since(start))
	defer wait.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case f := <-k.c.transferFailures:
			if f.To == to {
				return fmt.Errorf("transfer to %s failed: %s", to, f.Failure)
			}
			k.c.log.Warn("notice of another transfer's failure while one is pending", "to", redact.Number(f.To))
		case <-wait.C:
			return fmt.Errorf("transfer to %s: no outcome in %v", to, transferTimeout)
		}
	}
}

// TransferFailures delivers the control plane's notices of the call's transfers that
// failed (persona.TransferNotice), whoever asked for them.
func (k *Call) TransferFailures() <-chan speech.TransferFailure { return k.c.transferFailures }

// Keys delivers the keys the caller presses (a phone's DTMF through LiveKit's SIP
// bridge).
func (k *Call) Keys() <-chan speech.Key { return k.c.keys }

// Job is the dispatch the call runs with (version snapshot, brand, caller).
func (k *Call) Job() persona.Job {
	j := k.c.job
	k.c.mu.Lock()
	silent := k.c.silentAnswer
	k.c.mu.Unlock()
	if silent && (j.Version.IdleTimeoutSeconds <= 0 || j.Version.IdleTimeoutSeconds > silentIdle) {
		// Answered by silence (answering-machine detection): a short idle timeout.
		j.Version.IdleTimeoutSeconds = silentIdle
	}
	if k.c.viewer == nil {
		// An audio call has no video to see: the model is not offered look.
		j.Version.Vision = ""
	}
	return j
}

// Audio delivers the caller's decoded audio: mono frames at speech.Rate, 20 ms each as
// the caller sends them, with the silence their client did not send filled in. Frames
// are dropped while nobody reads.
func (k *Call) Audio() <-chan []int16 { return k.c.listener.frames }

// Speaking reports whether the assistant is speaking (or has speech queued).
func (k *Call) Speaking() bool { return k.c.speaker.speaking() }

// Speak queues pcm after whatever is queued and returns at once; the speaker paces it
// out in real time.
func (k *Call) Speak(pcm tts.PCM) (speech.Playback, error) {
	out, err := resample.Mono(pcm.Samples, pcm.Rate, outRate)
	if err != nil {
		return nil, fmt.Errorf("resample speech: %w", err)
	}
	return playback{u: k.c.speaker.say(out), s: k.c.speaker}, nil
}

// Pause silences the assistant at the next 20 ms frame, keeping its place (barge-in
// onset); Resume carries on from there.
func (k *Call) Pause() { k.c.speaker.pause() }

// Resume undoes Pause.
func (k *Call) Resume() { k.c.speaker.resume() }

// CutAll drops all queued speech, the greeting included.
func (k *Call) CutAll() { k.c.speaker.cutAll() }

// Publish keeps what the conversation tells in the call's record (the ended report's
// transcript and metrics) and sends each side's words to the room as live captions
// (captions.go). When the job asks for it (an endpoint of the account listens to
// call.transcript), each final turn of either side is also reported as it happens.
func (k *Call) Publish(e speech.Event) {
	k.c.mu.Lock()
	k.c.record.Add(e)
	caps := k.c.captions
	w, words := e.(speech.Words)
	final := words && w.Final && w.Text != "" && k.c.job.TranscriptEvents
	var rep persona.Report
	if final {
		k.c.turns++
		t := k.c.record.Turn(w)
		rep = persona.Report{Kind: persona.ReportTurn, CallID: k.c.job.CallID, SessionID: k.c.job.SessionID,
			At: time.Now().UTC(), Turn: &t, Sequence: k.c.turns}
	}
	k.c.mu.Unlock()
	if words && caps != nil {
		caps.add(w)
	}
	if final {
		k.c.enqueue(rep)
	}
}

// RunTool runs one call of the version's tools through the control plane
// (speech.ToolRunner), waiting the tool's timeout and a margin for the hop. The answer
// (a result or the tool's error) goes to the model; when the control plane gives none,
// or ctx ends first (a barge-in: interrupted), the model is told that instead.
func (k *Call) RunTool(ctx context.Context, tc speech.ToolCall) speech.ToolResult {
	fail := func(code, msg string) speech.ToolResult {
		return speech.ToolResult{Err: &speech.ToolError{Code: code, Message: msg}}
	}
	tools := k.c.r.cfg.Tools
	if tools == nil {
		return fail(persona.ToolErrUnavailable, "tools cannot be called from here")
	}
	wait := time.Duration(5000) * time.Millisecond
	for _, t := range k.c.job.Version.Tools {
		if t.Name == tc.Name && t.TimeoutMS > 0 {
			wait = time.Duration(t.TimeoutMS) * time.Millisecond
		}
	}
	cctx, cancel := context.WithTimeout(ctx, wait+toolHopMargin)
	defer cancel()
	res, err := tools.CallTool(cctx, persona.ToolRequest{CallID: k.c.job.CallID, ToolCallID: tc.ID, Name: tc.Name,
		Arguments: json.RawMessage(tc.Arguments)})
	switch {
	case err == nil && res.Error != nil:
		return fail(res.Error.Code, res.Error.Message)
	case err == nil:
		return speech.ToolResult{Result: res.Result}
	case ctx.Err() != nil:
		return fail(persona.ToolErrInterrupted, "the caller spoke before the answer came")
	case cctx.Err() != nil:
		return fail(persona.ToolErrTimeout, "no answer in time")
	}
	k.c.log.Warn("tool call not made", "tool", tc.Name, "err", err)
	return fail(persona.ToolErrUnavailable, "the tool could not be called")
}

// toolHopMargin is what the worker adds to a tool's timeout for the control plane's
// reads and the two hops.
const toolHopMargin = 3 * time.Second

// Say speaks text in the call's voice and records the turn. It returns when the speech
// has played, or early when ctx ends, cutting the rest (barge-in): the recorded turn then
// ends where it was cut.
func (k *Call) Say(ctx context.Context, text string) (persona.Turn, error) {
	pcm, err := k.c.r.cfg.Voices(persona.VoiceFor(k.c.job.Version)).Synthesize(ctx, text)
	if err != nil {
		return persona.Turn{}, fmt.Errorf("synthesize: %w", err)
	}
	pb, err := k.Speak(pcm)
	if err != nil {
		return persona.Turn{}, err
	}
	select {
	case <-pb.Done():
	case <-ctx.Done():
		pb.Cut()
		<-pb.Done()
	}
	return k.publishSaid(text, pb), ctx.Err()
}

// publishSaid records text, spoken as pb (over: played, or cut), as an assistant turn,
// cut to what was heard.
func (k *Call) publishSaid(text string, pb speech.Playback) persona.Turn {
	w, played, _ := speech.HeardWords([]speech.Said{{Text: text, Playback: pb}})
	w.Final, w.Interrupted = true, pb.Progress().Cut
	if !played { // cut before a single frame played
		w.Start = time.Now()
		w.End = w.Start
	}
	k.Publish(w)
	return k.c.record.Turn(w)
}

// playback is speech queued on the call's speaker.
type playback struct {
	u *utterance
	s *speaker
}

func (p playback) Started() <-chan struct{}  { return p.u.started }
func (p playback) Done() <-chan struct{}     { return p.u.done }
func (p playback) Progress() speech.Progress { return p.s.progress(p.u) }
func (p playback) Cut()                      { p.s.cut(p.u) }
