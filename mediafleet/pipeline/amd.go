package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/amd"
	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// Answering-machine detection (persona.Job.AMD) runs on an outbound call after media is
// verified and before the greeting: the caller's audio goes to an amd.Detector (with the
// worker's voice activity detector telling speech, and, when the worker has a recogniser,
// to a transcriber whose interim words are the detector's hints) until it decides,
// within 3 s of the first audio.
//
//   - human, unknown: the greeting and the conversation, as on any call; the greeting
//     was synthesised meanwhile, so it plays as soon as the decision is made (a person's
//     short "Hello?" and pause decide it).
//   - silence: the greeting too (a person may wait for the caller to speak), with the
//     conversation's idle timeout cut to silentIdle, so nobody still there is hung up
//     on after "Are you still there?" and its wait.
//   - voicemail: with a voicemail message, the worker waits for the greeting's end (its
//     beep ended, or it fell silent) and speaks the message, then hangs up; without one
//     it hangs up at once.
//   - screening: the worker waits for the screening prompt's end, then greets and
//     converses as with a person (the greeting says who is calling).
//
// The decision is reported at once (persona.ReportAMD) and again in the ended report,
// with whether the message was left.

// silentIdle is the idle timeout of a call answered by silence.
const silentIdle = 5

// amdHintEvery is how often the transcriber's interim words are read.
const amdHintEvery = 300 * time.Millisecond

// detect runs the detection. It returns nil when the call goes on to the greeting, or
// how the call ended.
func (c *call) detect(ctx context.Context) *ending {
	var cfg amd.Config
	if c.r.cfg.AMDNewVAD != nil {
		// Speech told by Silero rather than by level: right on a street 10 dB under the
		// callee's voice, where the level is not (mediafleet/amd's TestStreetNoise).
		if v, err := c.r.cfg.AMDNewVAD(); err != nil {
			c.log.Warn("amd: no voice activity detector; telling speech by level", "err", err)
		} else {
			defer v.Close()
			cfg.Voice = v
		}
	}
	d := amd.New(cfg)
	var tr speech.Transcriber
	var interim speech.Interimer
	if rec := c.r.cfg.AMDRecognizer; rec != nil {
		if t, err := rec.NewTranscriber(ctx); err != nil {
			c.log.Warn("amd: no transcriber; deciding without words", "err", err)
		} else if err := t.Begin(); err != nil {
			c.log.Warn("amd: transcriber did not begin; deciding without words", "err", err)
			_ = t.Close()
		} else {
			tr = t
			interim, _ = t.(speech.Interimer)
		}
	}
	defer func() {
		if tr != nil {
			tr.Abort()
			_ = tr.Close()
		}
	}()
	var (
		decided   bool
		message   <-chan synthesis
		lastHint  time.Time
		frames    = c.listener.frames
		deadlines = time.NewTimer(amdSafety)
	)
	defer deadlines.Stop()
	for {
		select {
		case pcm := <-frames:
			d.Write(pcm)
			if tr != nil {
				if err := tr.Write(pcm); err != nil {
					c.log.Warn("amd: transcriber failed; deciding without words", "err", err)
					tr.Abort()
					_ = tr.Close()
					tr, interim = nil, nil
				}
			}
		case reason := <-c.ended:
			return &ending{reason: reason}
		case <-ctx.Done():
			return c.cancelled(ctx)
		case <-deadlines.C:
			// No audio comes (the listener fills silence in real time, so this is a
			// stalled call): decide nothing, and greet.
			if !decided {
				c.decided(amd.Decision{Result: amd.Unknown, Reason: amd.ReasonBound})
				return nil
			}
			return &ending{reason: EndAssistantHangup}
		}
		if interim != nil && (!decided || revisable(d)) && time.Since(lastHint) >= amdHintEvery {
			lastHint = time.Now()
			if w := interim.Interim(); w != "" && d.Hint(w) && decided {
				// A screening prompt the greeting's length took for a voicemail box.
				dec, _ := d.Decision()
				c.decided(dec)
			}
		}
		if !decided {
			dec, ok := d.Decision()
			if !ok {
				continue
			}
			decided = true
			c.decided(dec)
			switch dec.Result {
			case amd.Human, amd.Unknown:
				return nil
			case amd.Silence:
				c.mu.Lock()
				c.silentAnswer = true
				c.mu.Unlock()
				return nil
			case amd.Voicemail:
				text := c.job.AMD.VoicemailMessage
				if text == "" {
					c.log.Info("amd: voicemail and no message; hanging up")
					return &ending{reason: EndAssistantHangup}
				}
				message = c.synthesize(ctx, text)
			}
			// Voicemail and screening wait for the greeting's end, within the detector's
			// own bound (amd.Config.MaxGreeting of audio).
			deadlines.Reset(amdMaxWait)
		}
		why, ready := d.Ready()
		if !ready {
			continue
		}
		if revisable(d) && tr != nil {
			// The greeting's final words, before acting on a voicemail decided by its
			// length: a recogniser's interim words on a phone line often miss what its
			// final words hear ("why you are calling").
			fctx, cancel := context.WithTimeout(ctx, amdFinalWords)
			words, err := tr.End(fctx)
			cancel()
			_ = tr.Close()
			tr = nil
			if err == nil && d.Hint(words) {
				dec, _ := d.Decision()
				c.decided(dec)
			}
		}
		dec, _ := d.Decision()
		c.log.Info("amd: greeting over", "result", dec.Result, "why", why, "audio_ms", d.ReadyAt().Milliseconds())
		if dec.Result == amd.Screening {
			return nil
		}
		return c.leaveMessage(ctx, message)
	}
}

// revisable says d's decision is a voicemail box words may still turn to screening.
func revisable(d *amd.Detector) bool {
	dec, ok := d.Decision()
	return ok && dec.Revisable()
}

// amdSafety bounds the decision in wall time (the detector's bound is in audio time);
// amdMaxWait, the wait for a voicemail greeting's end from the decision.
const (
	amdSafety  = 6 * time.Second
	amdMaxWait = 45 * time.Second
	// amdFinalWords bounds the wait for the greeting's final words at its end.
	amdFinalWords = 2 * time.Second
)

// decided records and reports the decision.
func (c *call) decided(dec amd.Decision) {
	now := time.Now()
	res := persona.AMDResult{Result: string(dec.Result), Reason: dec.Reason, DecidedAt: now.UTC(), DecisionMS: c.sinceAnswer(now)}
	mine := res // the report's copy is sent while the call's may still change
	c.mu.Lock()
	c.amd = &mine
	rep := persona.Report{Kind: persona.ReportAMD, CallID: c.job.CallID, SessionID: c.job.SessionID, At: now.UTC(),
		Metrics: c.metricsLocked(), AMD: &res}
	c.mu.Unlock()
	c.log.Info("amd: decided", "result", dec.Result, "reason", dec.Reason, "audio_ms", dec.At.Milliseconds(),
		"after_answer_ms", res.DecisionMS, "speech_ms", dec.Speech.Milliseconds(), "beep", dec.Beep)
	c.enqueue(rep)
}

// synthesize starts synthesising text in the call's voice.
func (c *call) synthesize(ctx context.Context, text string) <-chan synthesis {
	out := make(chan synthesis, 1)
	go func() {
		pcm, err := c.r.cfg.Voices(persona.VoiceFor(c.job.Version)).Synthesize(ctx, text)
		out <- synthesis{pcm: pcm, err: err}
	}()
	return out
}

// leaveMessage speaks the voicemail message, records it as an assistant turn, and hangs
// up once it has played.
func (c *call) leaveMessage(ctx context.Context, message <-chan synthesis) *ending {
	var m synthesis
	select {
	case m = <-message:
	case reason := <-c.ended:
		return &ending{reason: reason}
	case <-ctx.Done():
		return c.cancelled(ctx)
	}
	if m.err != nil {
		return failed(fmt.Errorf("synthesize voicemail message: %w", m.err))
	}
	if c.painter != nil {
		c.painter.showAvatar(time.Now())
	}
	k := &Call{c: c}
	text := c.job.AMD.VoicemailMessage
	pb, err := k.Speak(m.pcm)
	if err != nil {
		return failed(fmt.Errorf("voicemail message: %w", err))
	}
	k.Publish(speech.Used{TTSCharacters: len([]rune(text))})
	select {
	case <-pb.Done():
	case reason := <-c.ended:
		pb.Cut()
		<-pb.Done()
		k.publishSaid(text, pb)
		return &ending{reason: reason}
	case <-ctx.Done():
		pb.Cut()
		<-pb.Done()
		k.publishSaid(text, pb)
		return c.cancelled(ctx)
	}
	k.publishSaid(text, pb)
	left := !pb.Progress().Cut
	c.mu.Lock()
	if c.amd != nil {
		c.amd.MessageLeft = left
	}
	c.mu.Unlock()
	c.log.Info("amd: voicemail message left", "whole", left)
	return &ending{reason: EndAssistantHangup}
}
